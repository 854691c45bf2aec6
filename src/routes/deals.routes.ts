import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { RouteDeps } from '../app.js';

/** Deals, buying committee, notes, tasks and stage history (contract section 4). */
export const dealRoutes: FastifyPluginAsyncZod<RouteDeps> = async () => {};
