import type { Config } from '../../config.js';
import { seal } from '../../crypto/secret-box.js';
import type { Db } from '../../db/database.js';
import type { DeliveryStatus } from '../../db/schema.outbound.js';
import { scheduleAttempt } from '../../events/delivery.repository.js';
import { generateSecret } from '../../events/signing.js';
import { assertPublicTarget, TargetRefusedError } from '../../events/ssrf.js';
import { recordTestEvent } from '../../events/test-event.js';
import { ConflictError, NotFoundError, ValidationError } from '../../http/errors.js';
import type { Actor } from '../../host/permissions.js';
import { pageInfo } from '../paging.js';
import {
  attemptsOf,
  deleteSubscription,
  findDelivery,
  findSubscription,
  insertSubscription,
  listDeliveries,
  listSubscriptions,
  restartDelivery,
  rotateSubscriptionSecret,
  updateSubscription,
  type AttemptRow,
  type DeliveryFilters,
  type DeliveryRow,
  type SubscriptionRow,
} from './webhooks.repository.js';

/** Outbound webhook subscriptions of the built-in host: settings, delivery log, redelivery, test event. */

export type WebhookConfig = Pick<Config, 'APP_KEY' | 'WEBHOOK_ALLOW_PRIVATE_TARGETS'>;

/** After a rotation the old secret keeps signing (alongside the new one) this long. */
const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

export interface WebhookInput {
  name?: string;
  url?: string;
  events?: string[];
  secret?: string | null;
  enabled?: boolean;
}

const iso = (value: Date | null) => (value ? value.toISOString() : null);

export const toWebhookJson = (row: SubscriptionRow) => ({
  id: row.id,
  name: row.name,
  url: row.url,
  events: row.events,
  enabled: row.enabled,
  disabledReason: row.disabled_reason,
  disabledAt: iso(row.disabled_at),
  failingSince: iso(row.failing_since),
  previousSecretValidUntil: row.previous_secret_expires_at && row.previous_secret_expires_at > new Date() ? row.previous_secret_expires_at.toISOString() : null,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

export type WebhookJson = ReturnType<typeof toWebhookJson>;

const toAttemptJson = (row: AttemptRow) => ({
  id: row.id,
  attemptedAt: row.attempted_at.toISOString(),
  statusCode: row.status_code,
  durationMs: row.duration_ms,
  response: row.response_body,
  error: row.error,
});

const toDeliveryJson = (row: DeliveryRow, attempts: AttemptRow[]) => ({
  id: row.id,
  eventId: row.event_id,
  event: row.event,
  status: row.status,
  attemptCount: row.attempt_count,
  nextAttemptAt: iso(row.next_attempt_at),
  lastStatusCode: row.last_status_code,
  lastError: row.last_error,
  deliveredAt: iso(row.delivered_at),
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
  attempts: attempts.map(toAttemptJson),
});

function key(config: WebhookConfig): Buffer {
  if (!config.APP_KEY) throw new Error('APP_KEY is required to store webhook secrets');
  return config.APP_KEY;
}

/** The SSRF guard at save time; WEBHOOK_ALLOW_PRIVATE_TARGETS lifts it. */
async function assertTarget(config: WebhookConfig, url: string): Promise<void> {
  if (config.WEBHOOK_ALLOW_PRIVATE_TARGETS) return;
  try {
    await assertPublicTarget(new URL(url));
  } catch (error) {
    if (error instanceof TargetRefusedError) throw ValidationError.field('url', error.message);
    throw error;
  }
}

async function existing(db: Db, id: number): Promise<SubscriptionRow> {
  const row = await findSubscription(db, id);
  if (!row) throw new NotFoundError('Webhook');
  return row;
}

export async function getWebhooks(db: Db): Promise<WebhookJson[]> {
  return (await listSubscriptions(db)).map(toWebhookJson);
}

export async function getWebhook(db: Db, id: number): Promise<WebhookJson> {
  return toWebhookJson(await existing(db, id));
}

/** The secret (given or generated) is returned this once; it is stored encrypted. */
export async function createWebhook(
  db: Db,
  config: WebhookConfig,
  actor: Actor,
  input: Required<Pick<WebhookInput, 'name' | 'url' | 'events'>> & WebhookInput,
): Promise<WebhookJson & { secret: string }> {
  await assertTarget(config, input.url);
  const secret = input.secret || generateSecret();
  const row = await insertSubscription(db, {
    name: input.name,
    url: input.url,
    events: [...new Set(input.events)],
    enabled: input.enabled ?? true,
    secret_encrypted: seal(key(config), secret),
    created_by_id: actor.id,
  });
  return { ...toWebhookJson(row), secret };
}

/** A new `secret` is a rotation: the old one keeps signing for 24 hours. */
export async function editWebhook(db: Db, config: WebhookConfig, id: number, input: WebhookInput): Promise<WebhookJson> {
  await existing(db, id);
  if (input.url !== undefined) await assertTarget(config, input.url);
  return db.transaction().execute(async (trx) => {
    if (input.secret) await rotateSubscriptionSecret(trx, id, seal(key(config), input.secret), new Date(Date.now() + ROTATION_OVERLAP_MS));
    const row = await updateSubscription(trx, id, {
      name: input.name,
      url: input.url,
      events: input.events && [...new Set(input.events)],
      enabled: input.enabled,
    });
    if (!row) throw new NotFoundError('Webhook');
    return toWebhookJson(row);
  });
}

export async function rotateWebhookSecret(db: Db, config: WebhookConfig, id: number): Promise<WebhookJson & { secret: string }> {
  const secret = generateSecret();
  const row = await rotateSubscriptionSecret(db, id, seal(key(config), secret), new Date(Date.now() + ROTATION_OVERLAP_MS));
  if (!row) throw new NotFoundError('Webhook');
  return { ...toWebhookJson(row), secret };
}

export async function removeWebhook(db: Db, id: number): Promise<void> {
  if (!(await deleteSubscription(db, id))) throw new NotFoundError('Webhook');
}

export interface DeliveryQuery {
  page: number;
  limit: number;
  status?: DeliveryStatus;
  event?: string;
  since?: Date;
}

export async function getDeliveries(db: Db, id: number, query: DeliveryQuery) {
  await existing(db, id);
  const filters: DeliveryFilters = { status: query.status, event: query.event, since: query.since };
  const { total, rows } = await listDeliveries(db, id, filters, { offset: (query.page - 1) * query.limit, limit: query.limit });
  const attempts = await attemptsOf(db, rows.map((row) => row.id));
  return {
    ...pageInfo(total, query.page, query.limit),
    deliveries: rows.map((row) => toDeliveryJson(row, attempts.filter((attempt) => attempt.delivery_id === row.id))),
  };
}

export async function getDelivery(db: Db, id: number, deliveryId: number) {
  const row = await findDelivery(db, id, deliveryId);
  if (!row) throw new NotFoundError('Delivery');
  return { ...toDeliveryJson(row, await attemptsOf(db, [row.id])), payload: row.payload };
}

function assertEnabled(subscription: SubscriptionRow): void {
  if (!subscription.enabled) throw new ConflictError('The webhook is disabled; enable it first', { disabledReason: subscription.disabled_reason });
}

/** Sends a delivery again (whatever its state) with a fresh retry cycle; same event, same webhook-id. */
export async function redeliver(db: Db, id: number, deliveryId: number) {
  assertEnabled(await existing(db, id));
  // The answer is the delivery as this request queued it (pending), read before a worker can pick it up.
  return db.transaction().execute(async (trx) => {
    if (!(await findDelivery(trx, id, deliveryId))) throw new NotFoundError('Delivery');
    await restartDelivery(trx, deliveryId);
    await scheduleAttempt(trx, deliveryId, null);
    return getDelivery(trx, id, deliveryId);
  });
}

/** Queues a `webhook.test` event for this one subscription. */
export async function sendTestEvent(db: Db, id: number) {
  const subscription = await existing(db, id);
  assertEnabled(subscription);
  return db.transaction().execute(async (trx) => {
    const { deliveryId } = await recordTestEvent(trx, subscription);
    return getDelivery(trx, id, deliveryId);
  });
}
