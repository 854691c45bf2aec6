import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteDeps } from './deps.js';
import { pingDatabase } from '../db/database.js';
import { UnavailableError } from '../http/errors.js';

export const metaRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, deps) => {
  app.get(
    '/health',
    {
      config: { public: true },
      schema: { hide: true, response: { 200: z.object({ status: z.literal('ok') }) } },
    },
    async () => {
      try {
        await pingDatabase(deps.db);
      } catch {
        throw new UnavailableError('The database is unavailable');
      }
      return { status: 'ok' as const };
    },
  );

  app.get('/service/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
};
