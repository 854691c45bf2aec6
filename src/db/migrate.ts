import { runMigrations as runQueueMigrations } from 'graphile-worker';
import { Migrator } from 'kysely';
import type { Logger } from 'pino';
import { queueLogger } from '../events/queue-logger.js';
import { migrations } from '../../migrations/index.js';
import type { Database } from './database.js';


/**
 * Brings the database up to date: the job queue's own schema (graphile_worker),
 * then ours. Both are idempotent, so a second start changes nothing.
 */
export async function migrateToLatest(database: Database, logger: Logger): Promise<void> {
  await runQueueMigrations({ pgPool: database.pool, logger: queueLogger(logger) });
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => migrations },
  });
  const { error, results } = await migrator.migrateToLatest();
  for (const result of results ?? []) {
    if (result.status === 'Success') logger.info({ migration: result.migrationName }, 'migration applied');
    if (result.status === 'Error') logger.error({ migration: result.migrationName }, 'migration failed');
  }
  if (error) throw error;
}


