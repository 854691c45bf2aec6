import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import pino from 'pino';
import { afterAll, inject } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createDatabase, type Database, type PoolOptions } from '../../src/db/database.js';
import { seedPipelines } from '../../src/domain/pipelines/seed.js';
import { bootstrap, createBuiltinHost } from '../../src/host/builtin/index.js';
import { upsertUsers } from '../../src/host/local-copy.js';
import { createMauticHost } from '../../src/host/mautic/index.js';
import { mauticDouble, registerConfig, testHost } from './host-mode.js';
import { databaseUrl } from './global-setup.js';
import type { HostPort } from '../../src/host/port.js';

export const ADMIN = { username: 'admin', password: 'admin-password-for-tests' };

export interface TestContext {
  app: FastifyInstance;
  database: Database;
  db: Database['db'];
  config: Config;
  url: string;
  /** app.inject with Basic credentials (admin unless given). */
  call(options: InjectOptions, as?: { username: string; password: string }): Promise<LightMyRequestResponse>;
}

export function basic(user: { username: string; password: string }): string {
  return `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`;
}

/** A database of this test file's own, cloned from the migrated template. */
export async function createTestDatabase(pool: PoolOptions = { max: 10 }): Promise<{ database: Database; url: string; drop(): Promise<void> }> {
  const serverUrl = inject('serverUrl');
  const name = `deal_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name} template ${inject('templateDb')}`);
  await admin.end();
  const url = databaseUrl(serverUrl, name);
  const database = createDatabase(url, pool);
  return {
    database,
    url,
    async drop() {
      await database.destroy();
      const cleanup = new pg.Client({ connectionString: serverUrl });
      await cleanup.connect();
      await cleanup.query(`drop database if exists ${name} with (force)`);
      await cleanup.end();
    },
  };
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  const config = loadConfig({
    DATA_DIR: '/nonexistent',
    LOG_LEVEL: 'silent',
    PUBLIC_BASE_URL: 'http://service.test',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    ...overrides,
  });
  return { ...config, APP_KEY: Buffer.alloc(32, 7) };
}

/** Builds the app on a fresh database with the first-run data (admin, Sales pipeline). */
export async function setupApp(options: { config?: Record<string, string> } = {}): Promise<TestContext> {
  // DB_POOL_SIZE and DB_ACQUIRE_TIMEOUT_MS given here shape the app's pool, as in server.ts.
  const pool = options.config ?? {};
  const { database, url, drop } = await createTestDatabase({
    max: Number(pool.DB_POOL_SIZE ?? 10),
    acquireTimeoutMs: pool.DB_ACQUIRE_TIMEOUT_MS ? Number(pool.DB_ACQUIRE_TIMEOUT_MS) : undefined,
  });
  let config: Config;
  let host: HostPort;
  if (testHost === 'mautic') {
    // Users are Mautic's: the admin is a Mautic administrator, copied locally as the adapter does on first use.
    const mautic = await mauticDouble(ADMIN);
    await seedPipelines(database.db);
    await upsertUsers(database.db, [{ id: 1, username: ADMIN.username, name: 'Administrator', email: null }]);
    config = testConfig({
      HOST_PLATFORM: 'mautic',
      MAUTIC_URL: mautic.url,
      MAUTIC_USERNAME: ADMIN.username,
      MAUTIC_PASSWORD: ADMIN.password,
      MAUTIC_WEBHOOK_SECRET: 'mautic-webhook-secret-for-tests',
      ...options.config,
    });
    config.MAUTIC_ROLE_MAP = {};
    registerConfig(config);
    host = createMauticHost({ db: database.db, config, logger: pino({ level: 'silent' }) });
  } else {
    await bootstrap(database.db, ADMIN);
    config = testConfig(options.config);
    host = createBuiltinHost({ db: database.db, config });
  }
  const app = await buildApp({ config, db: database.db, logger: pino({ level: 'silent' }), host });
  await app.ready();
  afterAll(async () => {
    await app.close();
    await host.close?.();
    await drop();
  });
  return {
    app,
    database,
    db: database.db,
    config,
    url,
    call: (opts, as = ADMIN) =>
      app.inject({ ...opts, headers: { authorization: basic(as), ...(opts.headers as Record<string, string>) } }),
  };
}
