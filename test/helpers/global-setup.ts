import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import pino from 'pino';
import type { TestProject } from 'vitest/node';
import { createDatabase } from '../../src/db/database.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.js';
import { migrateToLatest } from '../../src/db/migrate.js';

/**
 * One PostgreSQL for the whole run: DATABASE_URL when set, else an embedded
 * server in a temporary directory (fsync off: test data is disposable). A
 * migrated template database is made once; each test file clones it.
 */
declare module 'vitest' {
  export interface ProvidedContext {
    serverUrl: string;
    templateDb: string;
  }
}

export const TEMPLATE_DB = `deal_template_${process.pid}`;

let embedded: EmbeddedPostgres | undefined;
let dataDir: string | undefined;

export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function setup(project: TestProject) {
  const logger = pino({ level: 'warn' });
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    dataDir = await mkdtemp(join(tmpdir(), 'deal-test-'));
    // mkdtemp makes it 0700; as root the postgres user must be able to enter it.
    await chmod(dataDir, 0o711);
    embedded = await startEmbeddedPostgres({
      dataDir,
      logger,
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '300' },
    });
    serverUrl = embedded.url;
  }
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${TEMPLATE_DB}`);
  await admin.query(`create database ${TEMPLATE_DB}`);
  const template = createDatabase(databaseUrl(serverUrl, TEMPLATE_DB), { max: 2 });
  await migrateToLatest(template, logger);
  await template.destroy();
  await admin.end();

  project.provide('serverUrl', serverUrl);
  project.provide('templateDb', TEMPLATE_DB);

  return async () => {
    if (embedded) await embedded.stop();
    else {
      const cleanup = new pg.Client({ connectionString: serverUrl });
      await cleanup.connect();
      const { rows } = await cleanup.query(`select datname from pg_database where datname like 'deal_test_%' or datname = $1`, [TEMPLATE_DB]);
      for (const row of rows) await cleanup.query(`drop database if exists "${row.datname}" with (force)`);
      await cleanup.end();
    }
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  };
}
