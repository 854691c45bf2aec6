import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import { appKeys, loadConfigOrExit, parseAppKey, publicBaseUrl, type Config } from './config.js';
import { AppKeyMismatchError, verifyAppKey } from './crypto/key-check.js';
import { joinCluster } from './db/cluster.js';
import { createDatabase, type Db } from './db/database.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded.js';
import { migrateToLatest } from './db/migrate.js';
import { startWorker } from './events/worker.js';
import { seedPipelines } from './domain/pipelines/seed.js';
import { bootstrap, createBuiltinHost, type BootstrapResult } from './host/builtin/index.js';
import { createMauticHost } from './host/mautic/index.js';
import { createLogger } from './logger.js';

/** In embedded mode the APP_KEY is generated once into DATA_DIR and reused. */
async function resolveAppKey(config: Config): Promise<Buffer> {
  if (config.APP_KEY) return config.APP_KEY;
  const file = join(resolve(config.DATA_DIR), 'app-key');
  if (existsSync(file)) return parseAppKey((await readFile(file, 'utf8')).trim());
  const key = randomBytes(32);
  await mkdir(resolve(config.DATA_DIR), { recursive: true, mode: 0o711 });
  await writeFile(file, `${key.toString('hex')}\n`, { mode: 0o600 });
  return key;
}

interface DatabaseServer {
  url: string;
  embedded?: EmbeddedPostgres;
}

async function openDatabase(config: Config, logger: Logger): Promise<DatabaseServer> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL };
  const embedded = await startEmbeddedPostgres({ dataDir: join(config.DATA_DIR), logger: logger.child({ component: 'postgres' }) });
  return { url: embedded.url, embedded };
}

/**
 * Benchmarks only (bench/soak.ts sets BENCH_SELECT1_ROUTE=1 when it starts the
 * service): GET /bench/select-1 runs `select 1` on the service's pool with no
 * auth and no schema, the yardstick the deal view's requests per second are
 * compared with. Never registered otherwise, and refused with NODE_ENV=production.
 */
function addBenchSelect1Route(app: FastifyInstance, db: Db, logger: Logger): void {
  if (process.env.NODE_ENV === 'production') {
    logger.warn('BENCH_SELECT1_ROUTE is ignored with NODE_ENV=production');
    return;
  }
  logger.warn('BENCH_SELECT1_ROUTE=1: serving GET /bench/select-1 (benchmarks only)');
  app.get('/bench/select-1', { config: { public: true } }, async () => {
    await sql`select 1`.execute(db);
    return { ok: true };
  });
}

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.LOG_LEVEL);
  config.APP_KEY = await resolveAppKey(config);

  const server = await openDatabase(config, logger);
  const database = createDatabase(server.url, { max: config.DB_POOL_SIZE, acquireTimeoutMs: config.DB_ACQUIRE_TIMEOUT_MS });
  await migrateToLatest(database, logger);
  try {
    await verifyAppKey(database.db, appKeys(config));
  } catch (error) {
    if (!(error instanceof AppKeyMismatchError)) throw error;
    process.stderr.write(`${error.message}\n`);
    await database.destroy();
    await server.embedded?.stop();
    process.exit(1);
  }
  // The adapter is picked once. With Mautic, users are Mautic's: no local admin, only the default pipeline.
  let first: BootstrapResult = {};
  if (config.HOST_PLATFORM === 'mautic') await seedPipelines(database.db);
  else first = await bootstrap(database.db, { username: config.ADMIN_USERNAME, password: config.ADMIN_PASSWORD });
  const host =
    config.HOST_PLATFORM === 'mautic' ? createMauticHost({ db: database.db, config, logger }) : createBuiltinHost({ db: database.db, config });
  const cluster = await joinCluster({ databaseUrl: server.url, db: database.db, logger });
  const app = await buildApp({ config, db: database.db, logger, host, cluster });
  if (process.env.BENCH_SELECT1_ROUTE === '1') addBenchSelect1Route(app, database.db, logger);
  await app.listen({ port: config.PORT, host: config.HOST });
  // Deliveries run in this process unless WORKER=off (then `npm run worker` elsewhere).
  const worker =
    config.WORKER === 'inline'
      ? await startWorker({
          databaseUrl: server.url,
          config,
          logger,
          dispatch: host.dispatch,
          inbound: { contacts: host.contacts, currency: config.DEFAULT_CURRENCY },
          restartOnError: true,
        })
      : undefined;
  const url = publicBaseUrl({ ...config, PORT: (app.server.address() as { port: number }).port });

  // The banner goes to stdout, not to the log: it may carry the first-run password.
  const lines = [`Deal pipeline service listening on ${url}`, `API reference: ${url}/service/docs`];
  if (host.name === 'mautic') lines.push(`Host: Mautic at ${config.MAUTIC_URL} (log in with a Mautic user's credentials)`);
  if (first.admin) {
    lines.push(
      `First run: created the admin user "${first.admin.username}"` +
        (first.admin.generated ? ` with password ${first.admin.password}` : ' with ADMIN_PASSWORD'),
      `Try: curl -u ${first.admin.username}:${first.admin.generated ? first.admin.password : '$ADMIN_PASSWORD'} ${url}/service/pipelines`,
    );
    if (first.admin.generated && server.embedded) {
      await writeFile(join(resolve(config.DATA_DIR), 'initial-admin-password'), `${first.admin.password}\n`, { mode: 0o600 });
      lines.push(`(also saved in ${join(resolve(config.DATA_DIR), 'initial-admin-password')}; change it after logging in)`);
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);

  closeWithGrace({ delay: 15_000, logger }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an error');
    else logger.info({ signal }, 'shutting down');
    await app.close(); // stops accepting, lets in-flight requests finish
    await host.close?.();
    await cluster.close();
    await worker?.stop(); // finishes the deliveries in hand, hands back the rest
    await database.destroy();
    await server.embedded?.stop();
  });
}

await main();
