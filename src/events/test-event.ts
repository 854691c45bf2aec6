import { randomUUID } from 'node:crypto';
import type { Trx } from '../db/database.js';
import { insertDelivery } from './delivery.repository.js';

/**
 * "Send test event": an outbox event that belongs to no deal, delivered to one
 * subscription only, through the same signing, retries and log as real events.
 */
export const TEST_EVENT = 'webhook.test';

export interface TestEventPayload {
  id: string;
  event: typeof TEST_EVENT;
  timestamp: string;
  webhook: { id: number; name: string };
}

export async function recordTestEvent(trx: Trx, subscription: { id: number; name: string }): Promise<{ deliveryId: number; payload: TestEventPayload }> {
  const payload: TestEventPayload = {
    id: randomUUID(),
    event: TEST_EVENT,
    timestamp: new Date().toISOString(),
    webhook: { id: subscription.id, name: subscription.name },
  };
  await trx
    .insertInto('event_outbox')
    .values({ id: payload.id, event: TEST_EVENT, deal_id: null, sequence: null, payload: JSON.stringify(payload) })
    .execute();
  const deliveryId = await insertDelivery(trx, subscription.id, payload.id, TEST_EVENT);
  return { deliveryId, payload };
}
