import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Db } from '../../../db/database.js';
import { ValidationError } from '../../../http/errors.js';
import { z } from 'zod';
import type { BuiltinRouteDeps as RouteDeps } from './deps.js';
import { changeOwnPassword, createUser, editUser, getUser, getUsers, removeUser } from '../users.service.js';
import { actorOf } from '../../../http/guard.js';
import { bool, hostAdmin, id, idParams, nullable, pageFields, searchQuery, successResponse, text, timestamps } from '../../../http/schemas.js';

// A colon would split a Basic credential; white space would only confuse.
const username = text(1, 100).regex(/^[^:\s]+$/, 'Must not contain colons or spaces');
export const password = z.string().min(12, 'Must be at least 12 characters').max(1024, 'Must be at most 1024 characters');
// One string schema (not a pipe), so the document publishes the email format with the length.
const email = nullable(z.string().trim().max(255, 'Must be at most 255 characters').email('Must be an email address'));

export const userBody = z.object({ username, password, name: text(1, 255), email: email.optional(), role: id });
export const editUserBody = userBody.partial().extend({ isActive: bool.optional() });
/** A user changing their own password proves the current one; the new one follows the same rules. */
export const ownPasswordBody = z.object({ current_password: z.string().max(1024, 'Must be at most 1024 characters'), password });
/**
 * Changing your own password proves the current one, so a wrong one counts as a
 * failed login of that user from that address (the limit of Basic auth and the
 * login page): a stolen session cannot be used to guess it.
 */
export async function changeOwnPasswordLimited(
  app: FastifyInstance,
  request: FastifyRequest,
  db: Db,
  input: z.output<typeof ownPasswordBody>,
): Promise<void> {
  const actor = actorOf(request);
  const attempt = { who: `user:${actor.username.toLowerCase()}`, address: request.ip };
  app.loginLimiter.check(attempt);
  try {
    await changeOwnPassword(db, actor.id, input);
  } catch (error) {
    if (error instanceof ValidationError && 'current_password' in error.details) await app.loginLimiter.fail(attempt);
    throw error;
  }
  app.loginLimiter.succeed(attempt);
}

const userJson = z.object({
  id: z.number(),
  username: z.string(),
  name: z.string(),
  email: z.string().nullable(),
  role: z.object({ id: z.number(), name: z.string() }),
  isActive: z.boolean(),
  ...timestamps,
});
const userResponse = { 200: z.object({ user: userJson }) };
const tags = ['host: users'];

/** Users of the built-in host; the password goes in, never out. */
export const userRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, { db, forgetLogins, baseUrl }) => {
  app.get(
    '/host/users',
    {
      config: hostAdmin,
      schema: {
        tags,
        summary: 'List users (search: username, name or email)',
        querystring: searchQuery,
        response: { 200: z.object({ ...pageFields, users: z.array(userJson) }) },
      },
    },
    async (request) => getUsers(db, request.query),
  );

  app.get(
    '/host/users/:id',
    { config: hostAdmin, schema: { tags, summary: 'Get a user', params: idParams, response: userResponse } },
    async (request) => ({ user: await getUser(db, request.params.id) }),
  );

  app.post(
    '/host/users/new',
    { config: hostAdmin, schema: { tags, summary: 'Create a user', body: userBody, response: userResponse } },
    async (request, reply) => {
      const user = await createUser(db, request.body);
      void reply.header('Location', `${baseUrl}/host/users/${user.id}`);
      return { user };
    },
  );

  app.post(
    '/host/users/:id/edit',
    { config: hostAdmin, schema: { tags, summary: 'Edit a user', params: idParams, body: editUserBody, response: userResponse } },
    async (request) => {
      const user = await editUser(db, request.params.id, request.body);
      forgetLogins();
      return { user };
    },
  );

  app.post(
    '/host/account/password',
    {
      config: { authenticated: true },
      schema: { tags, summary: 'Change your own password (current_password and the new password)', body: ownPasswordBody, response: { 200: successResponse } },
    },
    async (request) => {
      await changeOwnPasswordLimited(app, request, db, request.body);
      forgetLogins();
      return { success: true as const };
    },
  );

  app.delete(
    '/host/users/:id',
    {
      config: hostAdmin,
      schema: {
        tags,
        summary: 'Delete a user; one that deals, notes or tasks still name is deactivated instead',
        params: idParams,
        response: { 200: z.object({ success: z.literal(true), deactivated: z.boolean() }) },
      },
    },
    async (request) => {
      const { deactivated } = await removeUser(db, request.params.id);
      forgetLogins();
      return { success: true as const, deactivated };
    },
  );
};
