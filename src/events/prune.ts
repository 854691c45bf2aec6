import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import { DELIVER_EVENT_TASK } from './events.js';

/** Pruning of the delivery log and the outbox, run by the worker on a schedule. */

export const PRUNE_TASK = 'prune_delivery_log';
/** Hourly; the job key stops several workers from queueing it twice. */
export const PRUNE_CRONTAB = `17 * * * * ${PRUNE_TASK} ?jobKey=${PRUNE_TASK}`;
/** Ten times the retry window: long enough to look into a failure and redeliver it. */
export const DEFAULT_RETENTION_MS = 30 * 24 * 3600 * 1000;

const BATCH = 5000;

export interface PruneResult {
  deliveries: number;
  events: number;
}

/**
 * Settled deliveries (with their attempts) older than the retention go first;
 * then outbox events older than it that nothing still waits for: no pending
 * delivery and no queued fan-out job. Deletes in batches to keep locks short.
 */
export async function pruneDeliveryLog(db: Executor, retentionMs: number): Promise<PruneResult> {
  const cutoff = new Date(Date.now() - retentionMs);
  const result: PruneResult = { deliveries: 0, events: 0 };
  for (;;) {
    const deleted = await sql`
      delete from webhook_deliveries where id in (
        select id from webhook_deliveries where status <> 'pending' and updated_at < ${cutoff} limit ${BATCH})`.execute(db);
    result.deliveries += Number(deleted.numAffectedRows ?? 0);
    if (Number(deleted.numAffectedRows ?? 0) < BATCH) break;
  }
  for (;;) {
    const deleted = await sql`
      delete from event_outbox where id in (
        select o.id from event_outbox o
        where o.created_at < ${cutoff}
          and not exists (select 1 from webhook_deliveries d where d.event_id = o.id and d.status = 'pending')
          -- the public graphile_worker.jobs view has no payload; the private tables are stable within 0.17
          and o.id::text not in (
            select queued.id from graphile_worker._private_jobs j
            join graphile_worker._private_tasks task on task.id = j.task_id
            cross join json_array_elements_text(j.payload->'eventIds') as queued (id)
            where task.identifier = ${DELIVER_EVENT_TASK})
        limit ${BATCH})`.execute(db);
    result.events += Number(deleted.numAffectedRows ?? 0);
    if (Number(deleted.numAffectedRows ?? 0) < BATCH) break;
  }
  return result;
}
