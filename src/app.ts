import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Cluster } from './db/cluster.js';
import type { Db } from './db/database.js';
import type { HostPort } from './host/port.js';
import { dealPipeline } from './plugin.js';

/** What the standalone app needs from the outside world; tests pass their own. */
export interface AppDeps {
  config: Config;
  db: Db;
  logger: Logger;
  /** The host platform adapter, picked at start-up (src/server.ts). */
  host: HostPort;
  /** The processes sharing the database; default: this one alone. */
  cluster?: Cluster;
}

export const API_BODY_LIMIT = 1024 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The standalone server's Fastify instance: the service plugin at the root. */
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
  // Not encapsulated: standalone, the service is the whole app, so its guard and error body cover every route.
  await app.register(fp(dealPipeline), { db: deps.db, host: deps.host, config: deps.config, cluster: deps.cluster });
  return app;
}
