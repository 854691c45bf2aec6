import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { DB } from './schema.js';

export type { DB } from './schema.js';
export type Db = Kysely<DB>;
/** Repository functions take either; locking helpers demand a Transaction. */
export type Executor = Kysely<DB> | Transaction<DB>;
export type Trx = Transaction<DB>;

// pg returns int8 (count(*), sums) as strings; every int8 we read fits a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
// Dates stay 'YYYY-MM-DD' strings: a JS Date would shift them by the time zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (value) => value);
// numeric stays a string on purpose (money is formatted explicitly, never via float math).

export interface Database {
  db: Db;
  pool: pg.Pool;
  destroy(): Promise<void>;
}

export function createDatabase(connectionString: string, options: { max?: number } = {}): Database {
  const pool = new pg.Pool({ connectionString, max: options.max ?? 20, idleTimeoutMillis: 30_000 });
  // An idle client that loses its server must not crash the process; requests
  // fail with 503 through the error handler instead.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return { db, pool, destroy: () => db.destroy() };
}

/** One round trip to the database; throws when it does not answer (for /health). */
export async function pingDatabase(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
