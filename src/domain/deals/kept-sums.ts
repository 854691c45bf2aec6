import { sql } from 'kysely';
import type { Db } from '../../db/database.js';

/**
 * Compaction of the trigger-kept figures (deal_counters, deal_forecast_sums).
 *
 * Writers add to the shard of their backend (`pg_backend_pid() % 32`) so that
 * concurrent transactions do not queue on one row; over days a bucket gathers
 * up to 32 rows, and buckets whose deals all left stay behind at zero. Readers
 * sum whatever is there, so nothing is wrong, only slower. The worker folds
 * every shard into shard 0 and drops the zero rows on a schedule.
 *
 * A transaction writes one shard (its backend's), and this folds rows it could
 * lock without waiting (`skip locked`), so it never holds up a writer for
 * longer than its own short transaction; it waits only for a writer that holds
 * a shard-0 row, and gives that up after LOCK_TIMEOUT (the next run tries again).
 */

export const COMPACT_SUMS_TASK = 'compact_deal_sums';
/** Every ten minutes; the job key stops several workers from queueing it twice. */
export const COMPACT_SUMS_CRONTAB = `*/10 * * * * ${COMPACT_SUMS_TASK} ?jobKey=${COMPACT_SUMS_TASK}`;
const LOCK_TIMEOUT = '2s';

const TABLES = {
  deal_counters: { key: ['pipeline_id', 'stage_id', 'status', 'owner_id', 'created_by_id', 'currency'], sums: ['deals', 'amount'] },
  deal_forecast_sums: { key: ['pipeline_id', 'month', 'status', 'stage_id', 'owner_id', 'currency'], sums: ['deals', 'amount', 'days'] },
} as const;

export interface CompactResult {
  folded: number;
  dropped: number;
}

export async function compactKeptSums(db: Db): Promise<Record<keyof typeof TABLES, CompactResult>> {
  const results = {} as Record<keyof typeof TABLES, CompactResult>;
  for (const [table, { key, sums }] of Object.entries(TABLES) as [keyof typeof TABLES, (typeof TABLES)[keyof typeof TABLES]][]) {
    const keys = sql.raw(key.join(', '));
    const pk = sql.raw(`${key.join(', ')}, shard`);
    const matches = sql.raw(key.map((k) => `t.${k} = l.${k}`).join(' and ') + ' and t.shard = l.shard');
    const summed = sql.raw(sums.map((s) => `sum(${s})`).join(', '));
    const add = sql.raw(sums.map((s) => `${s} = t.${s} + excluded.${s}`).join(', '));
    const zero = sql.raw(sums.map((s) => `${s} = 0`).join(' and '));
    results[table] = await db.transaction().execute(async (trx) => {
      await sql`set local lock_timeout = ${sql.lit(LOCK_TIMEOUT)}`.execute(trx);
      const folded = await sql`
        with locked as (
          select ${pk} from ${sql.table(table)} where shard <> 0 order by ${pk} for update skip locked
        ), moved as (
          delete from ${sql.table(table)} t using locked l where ${matches} returning t.*
        )
        insert into ${sql.table(table)} as t (${keys}, shard, ${sql.raw(sums.join(', '))})
        select ${keys}, 0, ${summed} from moved group by ${keys} order by ${keys}
        on conflict (${pk}) do update set ${add}`.execute(trx);
      const dropped = await sql`
        delete from ${sql.table(table)} t using (
          select ${pk} from ${sql.table(table)} where ${zero} order by ${pk} for update skip locked
        ) l where ${matches}`.execute(trx);
      return { folded: Number(folded.numAffectedRows ?? 0), dropped: Number(dropped.numAffectedRows ?? 0) };
    });
  }
  return results;
}
