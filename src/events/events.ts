import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { preparedAs, type Trx } from '../db/database.js';

/**
 * The only writer of deal events (a test ping, which has no deal, is
 * `test-event.ts`). A service calls `recordDealEvent(s)` inside its
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

export interface RecordOptions {
  event: EventName;
  dealId: number;
  changedBy: ChangedBy;
  extras?: EventExtras;
  /**
   * The deal's event_sequence already counts this event: the deal was inserted
   * in this transaction with its sequence set to the events its creation records
   * (deal-write.ts). A deal whose events are all counted is read, not updated:
   * updating a row just inserted writes a second version of it and, as it rarely
   * fits the same page, a second entry in each of its indexes.
   */
  counted?: boolean;
}

/**
 * Writes events of deals that still exist (record `service.deal.deleted`
 * before deleting) in one statement however many there are:
 *
 * 1. each deal's sequence is raised by its number of events, and from the same
 *    UPDATE ... RETURNING the deal is read as payloads show it (the row lock
 *    taken here also keeps sequence numbers from repeating); a deal whose
 *    events are all `counted` (inserted in this transaction with its sequence
 *    already set, so no other transaction can see it) is only read;
 * 2. the payloads are built from that snapshot, stored in the outbox, and one
 *    delivery job is queued for all of them (`{"eventIds":[...]}`).
 *
 * Events of one deal get consecutive sequence numbers in the order given.
 * Returns the payloads, in the order given.
 */
export async function writeDealEvents(trx: Trx, events: readonly RecordOptions[]): Promise<EventPayload[]> {
  if (events.length === 0) return [];
  const input = events.map((event, position) => ({
    id: randomUUID(),
    event: event.event,
    deal_id: event.dealId,
    changed_by: event.changedBy,
    extras: event.extras ?? {},
    position,
    counted: event.counted === true,
  }));
  const dealIds = [...new Set(events.map((event) => event.dealId))].sort((a, b) => a - b);

  // One delivery job for the lot: one NOTIFY and one job for the worker to fetch and complete, not one per event.
  const { rows } = await sql<{ payloads: EventPayload[] | null }>`${preparedAs('events_write')}
    with input as materialized (
      select * from jsonb_to_recordset(${JSON.stringify(input)}::jsonb)
        as e (id uuid, event text, deal_id integer, changed_by jsonb, extras jsonb, position integer, counted boolean)
    ),
    -- n: events the deal's sequence does not count yet; total: all of its events here
    raise as materialized (
      select deal_id, (count(*) filter (where not counted))::integer as n, count(*)::integer as total from input group by deal_id
    ),
    bumped as (
      update deals set event_sequence = deals.event_sequence + raise.n
      from raise
      -- = any() lets the planner use the primary key instead of scanning deals to join the input
      where deals.id = raise.deal_id and deals.id = any(${dealIds}::int[]) and raise.n > 0
      returning deals.id, deals.event_sequence - raise.total as base, deals.title, deals.amount, deals.currency, deals.status,
        deals.close_date, deals.stage_id, deals.pipeline_id, deals.owner_id
    ),
    kept as (
      select deals.id, deals.event_sequence - raise.total as base, deals.title, deals.amount, deals.currency, deals.status,
        deals.close_date, deals.stage_id, deals.pipeline_id, deals.owner_id
      from deals join raise on raise.deal_id = deals.id
      where deals.id = any(${dealIds}::int[]) and raise.n = 0
    ),
    present as (select * from bumped union all select * from kept),
    snapshot as (
      select present.id, present.base, jsonb_build_object(
          'id', present.id, 'title', present.title, 'amount', present.amount::float8, 'currency', rtrim(present.currency),
          'status', present.status,
          'stage', jsonb_build_object('id', stages.id, 'name', stages.name, 'type', stages.type),
          'pipeline', jsonb_build_object('id', pipelines.id, 'name', pipelines.name),
          'owner', case when users.id is not null then jsonb_build_object('id', users.id, 'name', users.name) end,
          'closeDate', present.close_date) as deal
      from present
      join stages on stages.id = present.stage_id
      join pipelines on pipelines.id = present.pipeline_id
      left join users on users.id = present.owner_id
    ),
    numbered as (
      select input.*, snapshot.deal,
        snapshot.base + row_number() over (partition by input.deal_id order by input.position) as sequence
      from input join snapshot on snapshot.id = input.deal_id
    ),
    stored as (
      insert into event_outbox (id, event, deal_id, sequence, payload)
      select id, event, deal_id, sequence,
        jsonb_build_object('id', id, 'event', event, 'timestamp', ${new Date().toISOString()}::text, 'sequence', sequence,
          'deal', deal, 'changed_by', changed_by) || extras
      from numbered
      returning id, payload
    )
    select graphile_worker.add_job(${DELIVER_EVENT_TASK}, json_build_object('eventIds', json_agg(stored.id::text order by stored.id))) as job,
      json_agg(stored.payload) as payloads
    from stored`.execute(trx);

  const byId = new Map((rows[0]?.payloads ?? []).map((payload) => [payload.id, payload]));
  return input.map((event, i) => {
    const payload = byId.get(event.id);
    if (!payload) throw new Error(`cannot record ${events[i]!.event}: deal ${events[i]!.dealId} does not exist`);
    return payload;
  });
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
