import { randomUUID } from 'node:crypto';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import qs from 'qs';
import { publicBaseUrl, type Config } from './config.js';
import type { Db } from './db/database.js';
import { createAssertionVerifier } from './host/assertion.js';
import type { HostPort } from './host/port.js';
import { registerErrorHandling } from './http/error-handler.js';
import { guardPlugin } from './http/guard.js';
import { routes } from './routes/index.js';

/** What the app needs from the outside world; tests pass their own. */
export interface AppDeps {
  config: Config;
  db: Db;
  logger: Logger;
  /** The host platform adapter, picked at start-up (src/server.ts). */
  host: HostPort;
}

export const API_BODY_LIMIT = 1024 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: API_BODY_LIMIT,
    trustProxy: deps.config.TRUST_PROXY,
    // Keep a caller's X-Request-Id when it is sane, so logs line up across services.
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    routerOptions: { maxParamLength: 200 },
    ajv: { customOptions: { coerceTypes: false } },
  });

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.addHook('onRequest', async (request, reply) => {
    void reply.header('X-Request-Id', request.id);
  });
  registerErrorHandling(app);
  // The API speaks JSON and forms only; text/plain would otherwise be parsed as a string (415 instead).
  app.removeContentTypeParser('text/plain');

  // Bracket names (deal[title], ids[]) become nested objects, with limits.
  await app.register(formbody, {
    parser: (body) => qs.parse(body, { depth: 5, arrayLimit: 200, parameterLimit: 1000, allowPrototypes: false }),
  });

  const baseUrl = publicBaseUrl(deps.config);
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Deal pipeline service',
        version: '1.0.0',
        description:
          'Deals through the ordered stages of pipelines, buying committees, notes and tasks, signed inbound webhooks and outbound events. ' +
          'Every write accepts application/x-www-form-urlencoded with bracket names (deal[title]=X) or JSON with the same nesting. ' +
          'Errors use one body: {"errors":[{"code","message","details","type"}]}.',
      },
      servers: [{ url: baseUrl }],
      components: {
        securitySchemes: {
          basic: { type: 'http', scheme: 'basic' },
          bearer: { type: 'http', scheme: 'bearer', description: 'Token from POST /oauth/v2/token (client credentials)' },
        },
      },
      security: [{ basic: [] }, { bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });

  const assertions = deps.config.HOST_ASSERTION_KEY ? createAssertionVerifier(deps.db, deps.config.HOST_ASSERTION_KEY) : undefined;
  await app.register(guardPlugin, { auth: deps.host.auth, assertions, publicBaseUrl: deps.config.PUBLIC_BASE_URL, publicPrefixes: ['/service/docs'] });
  await app.register(swaggerUi, { routePrefix: '/service/docs' });

  await app.register(routes, { config: deps.config, db: deps.db, host: deps.host, baseUrl });
  return app;
}
