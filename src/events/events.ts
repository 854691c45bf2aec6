import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Trx } from '../db/database.js';
import { formatMoney } from '../domain/money.js';

/**
 * The only writer of events. A service calls `recordDealEvent(s)` inside its
 * transaction: the payload is built from the deal as it stands in that
 * transaction, stored in `event_outbox`, and a delivery job is queued with
 * graphile_worker.add_job, so a rolled-back change emits nothing and a committed
 * one is delivered at least once.
 */

export const EVENT_NAMES = [
  'service.deal.created',
  'service.deal.updated',
  'deal.stage_changed',
  'service.deal.won',
  'service.deal.lost',
  'service.deal.contact_added',
  'service.deal.note_added',
  'service.deal.task_completed',
  'service.deal.deleted',
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

/** The queue task that delivers outbox events, `{"eventIds":[...]}` (see events/worker). */
export const DELIVER_EVENT_TASK = 'deliver_event';

export interface ChangedBy {
  id: number | null;
  name: string;
}

export interface StageRef {
  id: number;
  name: string;
  type: 'open' | 'won' | 'lost';
}

/** Extras by event, contract section 5. */
export interface EventExtras {
  previous_stage?: StageRef | null;
  changes?: Record<string, { from: unknown; to: unknown }>;
  contact?: Record<string, unknown>;
  note?: Record<string, unknown>;
  task?: Record<string, unknown>;
  source?: { id: string; name: string };
}

export interface DealSnapshot {
  id: number;
  title: string;
  amount: number;
  currency: string;
  status: string;
  stage: StageRef;
  pipeline: { id: number; name: string };
  owner: { id: number; name: string } | null;
  closeDate: string | null;
}

export interface EventPayload extends EventExtras {
  id: string;
  event: EventName;
  timestamp: string;
  sequence: number;
  deal: DealSnapshot;
  changed_by: ChangedBy;
}

interface SnapshotRow {
  id: number;
  event_sequence: number;
  title: string;
  amount: string;
  currency: string;
  status: string;
  close_date: string | null;
  stage_id: number;
  stage_name: string;
  stage_type: StageRef['type'];
  pipeline_id: number;
  pipeline_name: string;
  owner_id: number | null;
  owner_name: string | null;
}

function toSnapshot(row: SnapshotRow): DealSnapshot {
  return {
    id: row.id,
    title: row.title,
    amount: formatMoney(row.amount),
    currency: row.currency.trim(),
    status: row.status,
    stage: { id: row.stage_id, name: row.stage_name, type: row.stage_type },
    pipeline: { id: row.pipeline_id, name: row.pipeline_name },
    owner: row.owner_id !== null && row.owner_name !== null ? { id: row.owner_id, name: row.owner_name } : null,
    closeDate: row.close_date,
  };
}

export interface RecordOptions {
  event: EventName;
  dealId: number;
  changedBy: ChangedBy;
  extras?: EventExtras;
}

/**
 * Records events of deals that still exist (record `service.deal.deleted`
 * before deleting), in two statements however many there are:
 *
 * 1. each deal's sequence is raised by its number of events and, from the same
 *    UPDATE ... RETURNING, the deal is read as payloads show it (the row lock
 *    taken here also keeps sequence numbers from repeating);
 * 2. the outbox rows are inserted and one delivery job queued for all of them
 *    (`{"eventIds":[...]}`).
 *
 * Events of one deal get consecutive sequence numbers in the order given.
 */
export async function writeDealEvents(trx: Trx, events: readonly RecordOptions[]): Promise<EventPayload[]> {
  if (events.length === 0) return [];
  const perDeal = new Map<number, number>();
  for (const event of events) perDeal.set(event.dealId, (perDeal.get(event.dealId) ?? 0) + 1);
  const dealIds = [...perDeal.keys()].sort((a, b) => a - b);

  const { rows } = await sql<SnapshotRow>`
    with bumped as (
      update deals set event_sequence = deals.event_sequence + raise.n
      from unnest(${dealIds}::int[], ${dealIds.map((id) => perDeal.get(id)!)}::int[]) as raise (id, n)
      -- = any() lets the planner use the primary key instead of scanning deals to join the unnest
      where deals.id = raise.id and deals.id = any(${dealIds}::int[])
      returning deals.id, deals.event_sequence, deals.title, deals.amount, deals.currency, deals.status,
        deals.close_date, deals.stage_id, deals.pipeline_id, deals.owner_id
    )
    select bumped.*, stages.name as stage_name, stages.type as stage_type, pipelines.name as pipeline_name,
      users.name as owner_name
    from bumped
    join stages on stages.id = bumped.stage_id
    join pipelines on pipelines.id = bumped.pipeline_id
    left join users on users.id = bumped.owner_id`.execute(trx);

  const next = new Map<number, { row: SnapshotRow; snapshot: DealSnapshot; sequence: number }>();
  for (const row of rows) next.set(row.id, { row, snapshot: toSnapshot(row), sequence: row.event_sequence - perDeal.get(row.id)! });

  const timestamp = new Date().toISOString();
  const payloads = events.map((event): EventPayload => {
    const deal = next.get(event.dealId);
    if (!deal) throw new Error(`cannot record ${event.event}: deal ${event.dealId} does not exist`);
    deal.sequence += 1;
    return {
      id: randomUUID(),
      event: event.event,
      timestamp,
      sequence: deal.sequence,
      deal: deal.snapshot,
      changed_by: event.changedBy,
      ...event.extras,
    };
  });

  // One delivery job for the lot: one NOTIFY and one job for the worker to fetch and complete, not one per event.
  await trx
    .with('stored', (db) =>
      db
        .insertInto('event_outbox')
        .values(
          payloads.map((payload) => ({
            id: payload.id,
            event: payload.event,
            deal_id: payload.deal.id,
            sequence: payload.sequence,
            payload: JSON.stringify(payload),
          })),
        )
        .returning('id'),
    )
    .selectFrom('stored')
    .select(sql`graphile_worker.add_job(${DELIVER_EVENT_TASK}, json_build_object('eventIds', json_agg(stored.id::text order by stored.id)))`.as('job'))
    .execute();
  return payloads;
}

/** Events held back by recordTogether, per transaction. */
const held = new WeakMap<Trx, RecordOptions[]>();

/**
 * How services record events: at once (writeDealEvents), or, inside
 * recordTogether, held back until the end of its work.
 */
export async function recordDealEvents(trx: Trx, events: readonly RecordOptions[]): Promise<void> {
  const holding = held.get(trx);
  if (holding) holding.push(...events);
  else await writeDealEvents(trx, events);
}

/** Records one event; see recordDealEvents. */
export function recordDealEvent(trx: Trx, event: RecordOptions): Promise<void> {
  return recordDealEvents(trx, [event]);
}

/**
 * Runs `work` with the events it records held back, then writes them all with
 * one writeDealEvents: one sequence bump, one outbox insert and one delivery
 * job for an operation of several steps (a receive creates a deal and then adds
 * its contact) instead of one of each per step. Payloads show each deal as it
 * stands after the whole of `work`, so `work` must not delete deals.
 */
export async function recordTogether<T>(trx: Trx, work: () => Promise<T>): Promise<T> {
  if (held.has(trx)) return work();
  const events: RecordOptions[] = [];
  held.set(trx, events);
  try {
    const result = await work();
    held.delete(trx);
    await writeDealEvents(trx, events);
    return result;
  } finally {
    held.delete(trx);
  }
}
