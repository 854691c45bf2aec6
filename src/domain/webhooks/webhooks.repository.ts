import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DeliveryStatus } from '../../db/schema.outbound.js';

/** Webhook subscriptions of the built-in host and their delivery log, as the API reads and edits them. */

export interface SubscriptionRow {
  id: number;
  name: string;
  url: string;
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: Date | null;
  failing_since: Date | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface SubscriptionValues {
  name?: string;
  url?: string;
  events?: string[];
  enabled?: boolean;
}

const columns = [
  'id',
  'name',
  'url',
  'events',
  'enabled',
  'disabled_reason',
  'disabled_at',
  'failing_since',
  'previous_secret_expires_at',
  'created_at',
  'updated_at',
] as const;

export function listSubscriptions(db: Executor): Promise<SubscriptionRow[]> {
  return db.selectFrom('webhook_subscriptions').select(columns).orderBy('id').execute();
}

export function findSubscription(db: Executor, id: number): Promise<SubscriptionRow | undefined> {
  return db.selectFrom('webhook_subscriptions').select(columns).where('id', '=', id).executeTakeFirst();
}

export function insertSubscription(
  db: Executor,
  values: Required<SubscriptionValues> & { secret_encrypted: string; created_by_id: number },
): Promise<SubscriptionRow> {
  return db.insertInto('webhook_subscriptions').values(values).returning(columns).executeTakeFirstOrThrow();
}

/** Enabling again clears the reason and the failing streak: the subscription starts afresh. */
export function updateSubscription(db: Executor, id: number, values: SubscriptionValues): Promise<SubscriptionRow | undefined> {
  const reEnable = values.enabled === true ? { disabled_reason: null, disabled_at: null, failing_since: null } : {};
  const disable = values.enabled === false ? { disabled_reason: 'Disabled by an administrator', disabled_at: new Date() } : {};
  return db
    .updateTable('webhook_subscriptions')
    .set({ ...values, ...reEnable, ...disable, updated_at: new Date() })
    .where('id', '=', id)
    .returning(columns)
    .executeTakeFirst();
}

/** A new secret; the old one stays valid (both signatures are sent) until `previousValidUntil`. */
export function rotateSubscriptionSecret(
  db: Executor,
  id: number,
  secretEncrypted: string,
  previousValidUntil: Date,
): Promise<SubscriptionRow | undefined> {
  return db
    .updateTable('webhook_subscriptions')
    .set((eb) => ({
      previous_secret_encrypted: eb.ref('secret_encrypted'),
      previous_secret_expires_at: previousValidUntil,
      secret_encrypted: secretEncrypted,
      updated_at: new Date(),
    }))
    .where('id', '=', id)
    .returning(columns)
    .executeTakeFirst();
}

export async function deleteSubscription(db: Executor, id: number): Promise<boolean> {
  const result = await db.deleteFrom('webhook_subscriptions').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export interface DeliveryRow {
  id: number;
  event_id: string;
  event: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface AttemptRow {
  id: number;
  delivery_id: number;
  attempted_at: Date;
  status_code: number | null;
  duration_ms: number;
  response_body: string | null;
  error: string | null;
}

export interface DeliveryFilters {
  status?: DeliveryStatus;
  event?: string;
  since?: Date;
}

const deliveryColumns = [
  'id',
  'event_id',
  'event',
  'status',
  'attempt_count',
  'next_attempt_at',
  'last_status_code',
  'last_error',
  'delivered_at',
  'created_at',
  'updated_at',
] as const;

function filtered(db: Executor, subscriptionId: number, filters: DeliveryFilters) {
  let query = db.selectFrom('webhook_deliveries').where('subscription_id', '=', subscriptionId);
  if (filters.status) query = query.where('status', '=', filters.status);
  if (filters.event) query = query.where('event', '=', filters.event);
  if (filters.since) query = query.where('created_at', '>=', filters.since);
  return query;
}

/** Newest first. */
export async function listDeliveries(
  db: Executor,
  subscriptionId: number,
  filters: DeliveryFilters,
  page: { offset: number; limit: number },
): Promise<{ total: number; rows: DeliveryRow[] }> {
  const [count, rows] = await Promise.all([
    filtered(db, subscriptionId, filters).select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
    filtered(db, subscriptionId, filters).select(deliveryColumns).orderBy('id', 'desc').offset(page.offset).limit(page.limit).execute(),
  ]);
  return { total: Number(count.total), rows };
}

export function findDelivery(
  db: Executor,
  subscriptionId: number,
  deliveryId: number,
): Promise<(DeliveryRow & { payload: Record<string, unknown> }) | undefined> {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('event_outbox as o', 'o.id', 'd.event_id')
    .select(deliveryColumns.map((column) => `d.${column}` as const))
    .select('o.payload')
    .where('d.subscription_id', '=', subscriptionId)
    .where('d.id', '=', deliveryId)
    .executeTakeFirst();
}

export function attemptsOf(db: Executor, deliveryIds: number[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('webhook_attempts')
    .select(['id', 'delivery_id', 'attempted_at', 'status_code', 'duration_ms', 'response_body', 'error'])
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('id')
    .execute();
}

/** A manual redelivery starts a new retry cycle now; the log keeps every earlier attempt. */
export async function restartDelivery(db: Executor, deliveryId: number): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', cycle_started_at: sql`now()`, next_attempt_at: sql`now()`, delivered_at: null, updated_at: new Date() })
    .where('id', '=', deliveryId)
    .execute();
}
