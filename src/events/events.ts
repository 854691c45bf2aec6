import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Trx } from '../db/database.js';
import { formatMoney } from '../domain/money.js';

/**
 * The only writer of events. A service calls `recordDealEvent` inside its
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

/** The queue task that delivers one outbox event (see events/worker). */
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

/** The deal as payloads show it, read inside the caller's transaction. */
export async function dealSnapshot(trx: Trx, dealId: number): Promise<DealSnapshot | undefined> {
  const row = await trx
    .selectFrom('deals')
    .innerJoin('stages', 'stages.id', 'deals.stage_id')
    .innerJoin('pipelines', 'pipelines.id', 'deals.pipeline_id')
    .leftJoin('users', 'users.id', 'deals.owner_id')
    .select([
      'deals.id',
      'deals.title',
      'deals.amount',
      'deals.currency',
      'deals.status',
      'deals.close_date',
      'stages.id as stage_id',
      'stages.name as stage_name',
      'stages.type as stage_type',
      'pipelines.id as pipeline_id',
      'pipelines.name as pipeline_name',
      'users.id as owner_id',
      'users.name as owner_name',
    ])
    .where('deals.id', '=', dealId)
    .executeTakeFirst();
  if (!row) return undefined;
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

/** Records one event of a deal that still exists (record `service.deal.deleted` before deleting). */
export async function recordDealEvent(trx: Trx, options: RecordOptions): Promise<EventPayload> {
  // Per-deal sequence; the update also locks the deal row, so numbers never repeat.
  const sequenced = await trx
    .updateTable('deals')
    .set((eb) => ({ event_sequence: eb('event_sequence', '+', 1) }))
    .where('id', '=', options.dealId)
    .returning('event_sequence')
    .executeTakeFirst();
  const snapshot = sequenced && (await dealSnapshot(trx, options.dealId));
  if (!sequenced || !snapshot) throw new Error(`cannot record ${options.event}: deal ${options.dealId} does not exist`);
  const sequence = sequenced.event_sequence;

  const payload: EventPayload = {
    id: randomUUID(),
    event: options.event,
    timestamp: new Date().toISOString(),
    sequence,
    deal: snapshot,
    changed_by: options.changedBy,
    ...options.extras,
  };
  await trx
    .insertInto('event_outbox')
    .values({
      id: payload.id,
      event: payload.event,
      deal_id: options.dealId,
      sequence,
      payload: JSON.stringify(payload),
    })
    .execute();
  await sql`select graphile_worker.add_job(${DELIVER_EVENT_TASK}, json_build_object('eventId', ${payload.id}::text))`.execute(
    trx,
  );
  return payload;
}
