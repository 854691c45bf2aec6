import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { BuiltinRouteDeps as RouteDeps } from './deps.js';
import { createRole, editRole, getRole, getRoles, removeRole } from '../roles.service.js';
import { PERMISSIONS } from '../../permissions.js';
import { formList } from '../../../http/form.js';
import { bool, hostAdmin, idParams, successResponse, text, timestamps } from '../../../http/schemas.js';

const permissions = formList(z.enum(PERMISSIONS, { error: 'Unknown permission' }));
export const roleBody = z.object({ name: text(1, 255), permissions: permissions.optional(), isAdmin: bool.optional() });
const roleJson = z.object({ id: z.number(), name: z.string(), permissions: z.array(z.string()), isAdmin: z.boolean(), ...timestamps });
const roleResponse = { 200: z.object({ role: roleJson }) };
const tags = ['host: roles'];

/** Roles: Mautic-style permission names, or isAdmin for everything. */
export const roleRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, { db, forgetLogins, baseUrl }) => {
  app.get(
    '/host/roles',
    { config: hostAdmin, schema: { tags, summary: 'List roles', response: { 200: z.object({ roles: z.array(roleJson) }) } } },
    async () => ({ roles: await getRoles(db) }),
  );

  app.get(
    '/host/roles/:id',
    { config: hostAdmin, schema: { tags, summary: 'Get a role', params: idParams, response: roleResponse } },
    async (request) => ({ role: await getRole(db, request.params.id) }),
  );

  app.post(
    '/host/roles/new',
    { config: hostAdmin, schema: { tags, summary: 'Create a role', body: roleBody, response: roleResponse } },
    async (request, reply) => {
      const role = await createRole(db, request.body);
      void reply.header('Location', `${baseUrl}/host/roles/${role.id}`);
      return { role };
    },
  );

  app.post(
    '/host/roles/:id/edit',
    { config: hostAdmin, schema: { tags, summary: 'Edit a role', params: idParams, body: roleBody.partial(), response: roleResponse } },
    async (request) => {
      const role = await editRole(db, request.params.id, request.body);
      forgetLogins();
      return { role };
    },
  );

  app.delete(
    '/host/roles/:id',
    {
      config: hostAdmin,
      schema: { tags, summary: 'Delete a role (409 while users hold it or pipelines are limited to it)', params: idParams, response: { 200: successResponse } },
    },
    async (request) => {
      await removeRole(db, request.params.id);
      forgetLogins();
      return { success: true as const };
    },
  );
};
