import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { RouteDeps } from '../app.js';
import { apiCredentialRoutes } from './host/api-credentials.routes.js';
import { contactRoutes } from './host/contacts.routes.js';
import { roleRoutes } from './host/roles.routes.js';
import { userRoutes } from './host/users.routes.js';

/** The built-in host: roles, users, contacts, API credentials (host:admin). */
export const hostRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, deps) => {
  await app.register(roleRoutes, deps);
  await app.register(userRoutes, deps);
  await app.register(contactRoutes, deps);
  await app.register(apiCredentialRoutes, deps);
};
