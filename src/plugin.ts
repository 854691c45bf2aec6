import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyPluginAsync } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import qs from 'qs';
import { loadConfig, publicBaseUrl, type Config } from './config.js';
import { localCluster, type Cluster } from './db/cluster.js';
import type { Db } from './db/database.js';
import { createAssertionVerifier } from './host/assertion.js';
import type { HostPort } from './host/port.js';
import { registerErrorHandling } from './http/error-handler.js';
import { documentErrorResponses } from './http/error-responses.js';
import { guardPlugin } from './http/guard.js';
import { PageSessions } from './http/session.js';
import { routes } from './routes/index.js';
import { pageNegotiation, uiPages, type PageTable } from './ui/index.js';

export type { Config } from './config.js';
export type { Db } from './db/database.js';
export type { HostPort } from './host/port.js';

/**
 * The deal pipeline service as a Fastify plugin: a Node host mounts it with
 * `app.register(dealPipeline, { prefix: '/deals', db, host })`. Everything it
 * sets up (validation, the error body, form parsing, the permission guard, the
 * OpenAPI document) stays inside its own encapsulated context, so the host's
 * other routes are untouched. src/server.ts is the standalone host.
 */
export interface DealPipelineOptions {
  /** A Kysely instance over a database migrated with `migrateToLatest` (src/db/migrate.ts). */
  db: Db;
  /** The host adapter: who the callers are, where users and contacts live, where events go. */
  host: HostPort;
  /** Settings (see src/config.ts); anything left out takes its default. Inbound sources need APP_KEY. */
  config?: Partial<Config>;
  /** Several processes on one database: `joinCluster` (src/db/cluster.ts). Default: this process alone. */
  cluster?: Cluster;
}

const REQUEST_ID_HEADER = 'X-Request-Id';

/**
 * The schemas with an id (`.meta({ id })`: the error body) as components, which
 * operations refer to instead of repeating them. The library derives an input
 * twin of each (`ErrorBodyInput`); the error body is only ever an answer.
 */
const documentComponents: typeof jsonSchemaTransformObject = (input) => {
  const document = jsonSchemaTransformObject(input) as { components?: { schemas?: Record<string, unknown> } };
  delete document.components?.schemas?.ErrorBodyInput;
  return document as ReturnType<typeof jsonSchemaTransformObject>;
};

/**
 * Both body encodings every write accepts, in the document: JSON, and a form
 * with bracket names (`deal[title]=X`, `ids[]=1`; OpenAPI's deepObject style).
 * A route that reads its body otherwise names its own `consumes`.
 */
const documentBodyEncodings: typeof jsonSchemaTransform = (input) => {
  const output = jsonSchemaTransform(input);
  const schema = output.schema as { body?: unknown; consumes?: readonly string[] } | undefined;
  if (schema?.body && !schema.consumes) schema.consumes = ['application/json', 'application/x-www-form-urlencoded'];
  return output;
};

export const dealPipeline: FastifyPluginAsync<DealPipelineOptions> = async (app, options) => {
  const config: Config = { ...loadConfig({}), ...options.config };
  const { db, host } = options;
  const cluster = options.cluster ?? localCluster();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.addHook('onRoute', documentErrorResponses);
  app.addHook('onRequest', async (request, reply) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
  });
  registerErrorHandling(app);
  // The API speaks JSON and forms only; text/plain would otherwise be parsed as a string (415 instead).
  if (app.hasContentTypeParser('text/plain')) app.removeContentTypeParser('text/plain');

  // Bracket names (deal[title], ids[]) become nested objects, with limits.
  await app.register(formbody, {
    parser: (body) => qs.parse(body, { depth: 5, arrayLimit: 200, parameterLimit: 1000, allowPrototypes: false }),
  });

  // Links the service writes (Location, endpoint URLs) carry the prefix it is mounted under.
  const baseUrl = `${publicBaseUrl(config)}${app.prefix}`;
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
    transform: documentBodyEncodings,
    transformObject: documentComponents,
  });

  const assertions = config.HOST_ASSERTION_KEY ? createAssertionVerifier(db, config.HOST_ASSERTION_KEY) : undefined;
  // The sales pages (src/ui): a session cookie for browsers, and the pages that negotiated API reads answer with.
  await app.register(cookie);
  const sessions = new PageSessions(db, app.prefix || '/', config.PUBLIC_BASE_URL?.startsWith('https:') ?? false);
  const pages: PageTable = new Map();
  await app.register(pageNegotiation, { pages });
  // Which settings pages exist depends on the host: the top bar of every page needs to know.
  app.decorateRequest('hostManagesUsers', host.managesUsers);
  await app.register(guardPlugin, {
    auth: host.auth,
    assertions,
    cluster,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    publicPrefixes: [`${app.prefix}/service/docs`],
    sessions: { store: sessions, loginPath: `${app.prefix}/service/login` },
  });
  await app.register(swaggerUi, { routePrefix: '/service/docs' });
  await app.register(routes, { config, db, host, baseUrl, cluster });
  await app.register(uiPages, { config, db, host, baseUrl, cluster, sessions, pages });
};

/* What a mounting host needs besides the plugin: a database, its migrations, and the delivery worker. */
export { joinCluster } from './db/cluster.js';
export { createDatabase } from './db/database.js';
export { migrateToLatest } from './db/migrate.js';
export { startWorker } from './events/worker.js';
export type { ContactRow, HostUser, People } from './host/port.js';
