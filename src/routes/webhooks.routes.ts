import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { RouteDeps } from '../app.js';

/** Outbound webhook subscriptions of the built-in host, deliveries and replays (host:admin). */
export const webhookRoutes: FastifyPluginAsyncZod<RouteDeps> = async () => {};
