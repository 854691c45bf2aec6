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

const PREPARED = /^-- prepared: ([a-z0-9_]+)\n/;

/**
 * Marks a statement to be prepared once per connection under `name` and from
 * then on only bound and run: PostgreSQL parses it once instead of on every
 * call, and may settle on one plan (its plan cache decides, from the values
 * seen). For the large statements every receive, event and delivery runs.
 * Put it first in an `sql` template; the text after it must be the same on
 * every call (arrays or JSON, not value lists of varying length), each name has
 * one text, and a join with JSON or array input needs `= any()` on the joined
 * table's key so any plan finds rows by index.
 */
export const preparedAs = (name: string) => sql.raw(`-- prepared: ${name}\n`);

/** A pg client that sends statements marked by preparedAs as named prepared statements. */
class PreparingClient extends pg.Client {
  // pg's query() has many overloads; every call passes through unchanged but for the marked text.
  override query(config: any, values?: any, callback?: any): any {
    const run = super.query as (config: unknown, values?: unknown, callback?: unknown) => unknown;
    const name = typeof config === 'string' ? PREPARED.exec(config)?.[1] : undefined;
    return name ? run.call(this, { name, text: config, values }, undefined, callback) : run.call(this, config, values, callback);
  }
}

export interface PoolOptions {
  max?: number;
  /**
   * A caller waits at most this long for a connection (pg's own default is
   * forever); the error handler answers its "timeout exceeded" with 503.
   */
  acquireTimeoutMs?: number;
}

export function createDatabase(connectionString: string, options: PoolOptions = {}): Database {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 20,
    connectionTimeoutMillis: options.acquireTimeoutMs ?? 0,
    idleTimeoutMillis: 30_000,
    Client: PreparingClient,
  });
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
