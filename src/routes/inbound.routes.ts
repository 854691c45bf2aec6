import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { RouteDeps } from '../app.js';

/** Inbound webhook sources and their signed receive endpoint. */
export const inboundRoutes: FastifyPluginAsyncZod<RouteDeps> = async () => {};
