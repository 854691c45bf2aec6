import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { BuiltinRouteDeps as RouteDeps } from './deps.js';
import { apiCredentialRoutes } from './api-credentials.routes.js';
import { contactRoutes } from './contacts.routes.js';
import { roleRoutes } from './roles.routes.js';
import { userRoutes } from './users.routes.js';

/** The built-in host: roles, users, contacts, API credentials (host:admin). */
export const hostRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, deps) => {
  await app.register(roleRoutes, deps);
  await app.register(userRoutes, deps);
  await app.register(contactRoutes, deps);
  await app.register(apiCredentialRoutes, deps);
};
