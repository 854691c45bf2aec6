import { sql } from 'kysely';
import { preparedAs, type Executor, type Trx } from '../../db/database.js';
import type { StageType } from '../../db/schema.js';

/** Row-level reads and writes of deals; no HTTP, no permissions. */

export interface DealRow {
  id: number;
  title: string;
  amount: string;
  currency: string;
  pipeline_id: number;
  stage_id: number;
  status: StageType;
  close_date: string | null;
  owner_id: number | null;
  created_by_id: number | null;
  custom_fields: Record<string, unknown>;
  lost_reason: string | null;
}

const dealColumns = [
  'id',
  'title',
  'amount',
  'currency',
  'pipeline_id',
  'stage_id',
  'status',
  'close_date',
  'owner_id',
  'created_by_id',
  'custom_fields',
  'lost_reason',
] as const;

/** The deal row, locked until the transaction ends: writes to one deal serialize here. */
export function lockDeal(trx: Trx, id: number): Promise<DealRow | undefined> {
  return trx.selectFrom('deals').select(dealColumns).where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Locks several deals in id order (so two batches never wait on each other crosswise); returns the ids found. */
export async function lockDeals(trx: Trx, ids: number[]): Promise<number[]> {
  const rows = await trx.selectFrom('deals').select('id').where('id', 'in', ids).orderBy('id').forUpdate().execute();
  return rows.map((row) => row.id);
}

export function findDealRow(db: Executor, id: number): Promise<DealRow | undefined> {
  return db.selectFrom('deals').select(dealColumns).where('id', '=', id).executeTakeFirst();
}

export interface NewDeal extends Omit<DealRow, 'id' | 'lost_reason'> {
  source_id: string | null;
  external_id: string | null;
  /** Who created it, for the first entry of its stage history. */
  changed_by: { id: number | null; name: string };
  /** Its first contact, which makes a committee of one as its primary. */
  first_contact_id: number | null;
  /** The events its creation records (they are written `counted`, see RecordOptions in events.ts). */
  event_sequence: number;
}

/**
 * Inserts new deals with what every new deal starts with, in one statement
 * however many: the row, the first entry of its stage history (from no stage),
 * and the committee member of those given a first contact. Ids are drawn first
 * so the three inserts agree on them; they come back in the order given.
 */
export async function insertDeals(trx: Trx, deals: NewDeal[]): Promise<{ id: number }[]> {
  const input = deals.map(({ changed_by, ...deal }, position) => ({ ...deal, changed_by_id: changed_by.id, changed_by_name: changed_by.name, position }));
  const { rows } = await sql<{ id: number }>`${preparedAs('deals_insert')}
    with input as materialized (
      select nextval(pg_get_serial_sequence('deals', 'id'))::integer as id, v.*
      from jsonb_to_recordset(${JSON.stringify(input)}::jsonb) as v (
        title text, amount numeric, currency text, pipeline_id integer, stage_id integer, status text, close_date date,
        owner_id integer, created_by_id integer, custom_fields jsonb, source_id uuid, external_id text,
        changed_by_id integer, changed_by_name text, first_contact_id integer, event_sequence integer, position integer)
    ),
    deal as (
      insert into deals (id, title, amount, currency, pipeline_id, stage_id, status, close_date, owner_id, created_by_id,
        custom_fields, source_id, external_id, event_sequence, won_at, lost_at)
      overriding system value
      select id, title, amount, currency, pipeline_id, stage_id, status, close_date, owner_id, created_by_id,
        custom_fields, source_id, external_id, event_sequence,
        case when status = 'won' then now() end, case when status = 'lost' then now() end
      from input
      returning id
    ),
    history as (
      insert into deal_stage_history (deal_id, from_stage_id, to_stage_id, changed_by_id, changed_by_name, changed_at)
      select id, null, stage_id, changed_by_id, changed_by_name, now() from input
    ),
    member as (
      insert into deal_contacts (deal_id, contact_id, role, is_primary)
      select id, first_contact_id, null, true from input where first_contact_id is not null
    )
    select input.id from input join deal on deal.id = input.id order by input.position`.execute(trx);
  return rows;
}

export interface DealFieldValues {
  title?: string;
  amount?: string;
  currency?: string;
  close_date?: string | null;
  owner_id?: number | null;
  custom_fields?: Record<string, unknown>;
}

export async function updateDealFields(trx: Trx, id: number, values: DealFieldValues): Promise<void> {
  const { custom_fields, ...rest } = values;
  await trx
    .updateTable('deals')
    .set({
      ...rest,
      ...(custom_fields !== undefined ? { custom_fields: JSON.stringify(custom_fields) } : {}),
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .execute();
}

/**
 * Puts deals in a stage (and its pipeline), syncing status, won/lost times and
 * lost_reason; answers each deal's move time. clock_timestamp() rather than
 * now(): a move that waited for another move's lock must not be stamped earlier
 * than the move it waited for.
 */
export async function setDealsStage(
  trx: Trx,
  ids: number[],
  stage: { id: number; pipeline_id: number; type: StageType },
  lostReason: string | null,
): Promise<Map<number, Date>> {
  const rows = await trx
    .updateTable('deals')
    .set({
      stage_id: stage.id,
      pipeline_id: stage.pipeline_id,
      status: stage.type,
      stage_changed_at: sql<Date>`clock_timestamp()`,
      won_at: stage.type === 'won' ? sql<Date>`clock_timestamp()` : null,
      lost_at: stage.type === 'lost' ? sql<Date>`clock_timestamp()` : null,
      lost_reason: stage.type === 'lost' ? lostReason : null,
      updated_at: sql<Date>`clock_timestamp()`,
    })
    .where('id', 'in', ids)
    .returning(['id', 'stage_changed_at'])
    .execute();
  return new Map(rows.map((row) => [row.id, row.stage_changed_at]));
}

/** The deals of a stage, locked in id order (for moving them all). */
export function lockDealsInStage(trx: Trx, stageId: number): Promise<DealRow[]> {
  return trx.selectFrom('deals').select(dealColumns).where('stage_id', '=', stageId).orderBy('id').forUpdate().execute();
}

export async function deleteDealRow(trx: Trx, id: number): Promise<void> {
  await trx.deleteFrom('deals').where('id', '=', id).execute();
}

export interface StageHistoryEntry {
  dealId: number;
  fromStageId: number | null;
  toStageId: number;
  changedBy: { id: number | null; name: string };
  at: Date;
}

export async function insertStageHistory(trx: Trx, entries: StageHistoryEntry[]): Promise<void> {
  await trx
    .insertInto('deal_stage_history')
    .values(
      entries.map((entry) => ({
        deal_id: entry.dealId,
        from_stage_id: entry.fromStageId,
        to_stage_id: entry.toStageId,
        changed_by_id: entry.changedBy.id,
        changed_by_name: entry.changedBy.name,
        changed_at: entry.at,
      })),
    )
    .execute();
}

/** A deal's stage history, oldest first, with both stages' names and types (null once a stage is deleted). */
export function stageHistoryRows(db: Executor, dealId: number) {
  return db
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
}

/** A user of the local copy, active or not (a deactivated user still owns deals). */
export function findUser(db: Executor, id: number): Promise<{ id: number; name: string } | undefined> {
  return db.selectFrom('users').select(['id', 'name']).where('id', '=', id).executeTakeFirst();
}

/** An active host user (owners and assignees must be one). */
export function findActiveUser(db: Executor, id: number): Promise<{ id: number; name: string } | undefined> {
  return db.selectFrom('users').select(['id', 'name']).where('id', '=', id).where('is_active', '=', true).executeTakeFirst();
}
