import { EventEmitter } from 'node:events';
import type { WorkerEvents } from 'graphile-worker';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';

/**
 * Crash recovery in seconds. graphile-worker releases the jobs of a worker that
 * died only when their lock is 4 hours old. Here every worker records the ids
 * it locks jobs under (its pool's, and each worker's) with a heartbeat; each
 * live worker, on its own beat, unlocks the jobs of ids whose heartbeat stopped
 * (graphile-worker's own force_unlock_workers) so another worker runs them. A
 * delivery so repeated keeps its event id: receivers deduplicate on it.
 */

export interface HeartbeatOptions {
  intervalMs?: number;
  /** A worker silent this long is taken for dead. */
  deadAfterMs?: number;
}

export const HEARTBEAT_DEFAULTS = { intervalMs: 5_000, deadAfterMs: 20_000 };

export interface Heartbeat {
  /** Give this to graphile-worker's `run({ events })`: it learns the worker ids from them. */
  events: WorkerEvents;
  start(): void;
  stop(): Promise<void>;
}

export function createHeartbeat(db: Db, logger: Logger, options: HeartbeatOptions = {}): Heartbeat {
  const { intervalMs, deadAfterMs } = { ...HEARTBEAT_DEFAULTS, ...options };
  const events = new EventEmitter() as WorkerEvents;
  const ids = new Set<string>();
  events.on('pool:create', ({ workerPool }) => void ids.add(workerPool.id));
  events.on('worker:create', ({ worker }) => void ids.add(worker.workerId));

  let timer: NodeJS.Timeout | undefined;
  let beating: Promise<void> = Promise.resolve();

  async function beat(): Promise<void> {
    if (ids.size > 0) {
      await sql`
        insert into worker_heartbeats (worker_id, beat_at) select unnest(${[...ids]}::text[]), now()
        on conflict (worker_id) do update set beat_at = now()`.execute(db);
    }
    const dead = await sql<{ worker_id: string }>`
      delete from worker_heartbeats where beat_at < now() - make_interval(secs => ${deadAfterMs / 1000}) returning worker_id`.execute(db);
    if (dead.rows.length > 0) {
      const deadIds = dead.rows.map((row) => row.worker_id);
      await sql`select graphile_worker.force_unlock_workers(${deadIds}::text[])`.execute(db);
      logger.warn({ workers: deadIds }, 'unlocked the jobs of workers whose heartbeat stopped');
    }
  }

  const tick = () => {
    beating = beat().catch((err: unknown) => logger.warn({ err }, 'heartbeat failed; will try again'));
  };

  return {
    events,
    start() {
      tick();
      timer = setInterval(tick, intervalMs);
      timer.unref();
    },
    async stop() {
      clearInterval(timer);
      await beating;
      // A clean stop hands its jobs back itself; its ids are not dead, just gone.
      if (ids.size > 0) await db.deleteFrom('worker_heartbeats').where('worker_id', 'in', [...ids]).execute().catch(() => undefined);
    },
  };
}
