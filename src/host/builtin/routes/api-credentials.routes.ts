import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { BuiltinRouteDeps as RouteDeps } from './deps.js';
import {
  createCredential,
  editCredential,
  getCredential,
  getCredentials,
  removeCredential,
} from '../api-credentials.service.js';
import { hostAdmin, id, idParams, successResponse, text } from '../../../http/schemas.js';

export const credentialBody = z.object({ name: text(1, 255), user: id });
const credentialJson = z.object({
  id: z.number(),
  name: z.string(),
  client_id: z.string(),
  user: z.object({ id: z.number(), name: z.string() }),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
});
const credentialResponse = { 200: z.object({ credential: credentialJson }) };
const tags = ['host: API credentials'];

/** OAuth 2.0 clients (client credentials grant); a token acts as the credential's user. */
export const apiCredentialRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, { db, forgetLogins, baseUrl }) => {
  app.get(
    '/host/api-credentials',
    { config: hostAdmin, schema: { tags, summary: 'List API credentials', response: { 200: z.object({ credentials: z.array(credentialJson) }) } } },
    async () => ({ credentials: await getCredentials(db) }),
  );

  app.get(
    '/host/api-credentials/:id',
    { config: hostAdmin, schema: { tags, summary: 'Get an API credential (never its secret)', params: idParams, response: credentialResponse } },
    async (request) => ({ credential: await getCredential(db, request.params.id) }),
  );

  app.post(
    '/host/api-credentials/new',
    {
      config: hostAdmin,
      schema: {
        tags,
        summary: 'Create an API credential; client_secret is shown this once',
        body: credentialBody,
        response: { 200: z.object({ credential: credentialJson.extend({ client_secret: z.string() }) }) },
      },
    },
    async (request, reply) => {
      const credential = await createCredential(db, request.body);
      void reply.header('Location', `${baseUrl}/host/api-credentials/${credential.id}`);
      return { credential };
    },
  );

  app.post(
    '/host/api-credentials/:id/edit',
    {
      config: hostAdmin,
      schema: { tags, summary: 'Rename or reassign an API credential (reassigning revokes its tokens)', params: idParams, body: credentialBody.partial(), response: credentialResponse },
    },
    async (request) => {
      const credential = await editCredential(db, request.params.id, request.body);
      forgetLogins();
      return { credential };
    },
  );

  app.delete(
    '/host/api-credentials/:id',
    { config: hostAdmin, schema: { tags, summary: 'Delete an API credential and revoke its tokens', params: idParams, response: { 200: successResponse } } },
    async (request) => {
      await removeCredential(db, request.params.id);
      forgetLogins();
      return { success: true as const };
    },
  );
};
