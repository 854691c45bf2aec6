import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { RouteDeps } from '../app.js';

/** The built-in host: roles, users, contacts, API credentials (host:admin). */
export const hostRoutes: FastifyPluginAsyncZod<RouteDeps> = async () => {};
