import type { Db } from '../../db/database.js';
import type { Actor } from '../../host/permissions.js';
import { assertCanViewDeal } from './deal-access.js';
import { iso } from './deal-json.js';
import { stageHistoryRows } from './deals.repository.js';

/**
 * The stage chain of a deal, oldest first. It starts with the creation entry
 * (`from` null); `secondsInPrevious` is the time the deal spent in `from`,
 * i.e. since the entry before (null for the first entry).
 */

const stageOf = (id: number | null, name: string | null, type: string | null) =>
  id !== null && name !== null && type !== null ? { id, name, type } : null;

export async function stageHistory(db: Db, actor: Actor, dealId: number) {
  await assertCanViewDeal(db, actor, dealId);
  const rows = await stageHistoryRows(db, dealId);
  return rows.map((row, index) => ({
    from: stageOf(row.from_id, row.from_name, row.from_type),
    to: stageOf(row.to_id, row.to_name, row.to_type),
    changed_by: { id: row.changed_by_id, name: row.changed_by_name },
    changedAt: iso(row.changed_at),
    secondsInPrevious:
      index === 0 ? null : Math.round((row.changed_at.getTime() - rows[index - 1]!.changed_at.getTime()) / 1000),
  }));
}
