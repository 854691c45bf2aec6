import type { Db } from '../../db/database.js';
import type { Actor } from '../../host/permissions.js';
import { assertCanViewDeal } from './deal-access.js';
import { iso } from './deal-json.js';

/**
 * The stage chain of a deal, oldest first. It starts with the creation entry
 * (`from` null); `secondsInPrevious` is the time the deal spent in `from`,
 * i.e. since the entry before (null for the first entry).
 */

const stageOf = (id: number | null, name: string | null, type: string | null) =>
  id !== null && name !== null && type !== null ? { id, name, type } : null;

export async function stageHistory(db: Db, actor: Actor, dealId: number) {
  await assertCanViewDeal(db, actor, dealId);
  const rows = await db
    .selectFrom('deal_stage_history as h')
    .leftJoin('stages as from_stage', 'from_stage.id', 'h.from_stage_id')
    .leftJoin('stages as to_stage', 'to_stage.id', 'h.to_stage_id')
    .select([
      'h.changed_by_id',
      'h.changed_by_name',
      'h.changed_at',
      'from_stage.id as from_id',
      'from_stage.name as from_name',
      'from_stage.type as from_type',
      'to_stage.id as to_id',
      'to_stage.name as to_name',
      'to_stage.type as to_type',
    ])
    .where('h.deal_id', '=', dealId)
    .orderBy('h.id')
    .execute();
  return rows.map((row, index) => ({
    from: stageOf(row.from_id, row.from_name, row.from_type),
    to: stageOf(row.to_id, row.to_name, row.to_type),
    changed_by: { id: row.changed_by_id, name: row.changed_by_name },
    changedAt: iso(row.changed_at),
    secondsInPrevious:
      index === 0 ? null : Math.round((row.changed_at.getTime() - rows[index - 1]!.changed_at.getTime()) / 1000),
  }));
}
