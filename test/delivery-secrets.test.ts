import { describe, expect, it } from 'vitest';
import { seal } from '../src/crypto/secret-box.js';
import { setupApp } from './helpers/app.js';
import { insertDeal, recordEvent, startReceiver, startTestWorker, until } from './helpers/delivery.js';

describe('a subscription whose secret cannot be decrypted', () => {
  it('fails visibly in its own delivery log, and the other subscriptions still get the event', async () => {
    const t = await setupApp();
    const receiver = await startReceiver();
    const create = (name: string) =>
      t.call({ method: 'POST', url: '/host/webhooks/new', payload: { name, url: receiver.url, events: ['service.deal.created'] } }).then((r) => r.json().webhook);
    const healthy = await create('Healthy');
    const broken = await create('Broken');
    // As if APP_KEY had changed since the secret was stored.
    await t.db
      .updateTable('webhook_subscriptions')
      .set({ secret_encrypted: seal(Buffer.alloc(32, 1), `whsec_${Buffer.alloc(32, 2).toString('base64')}`) })
      .where('id', '=', broken.id)
      .execute();

    await startTestWorker(t);
    const event = await recordEvent(t.db, await insertDeal(t.db), 'service.deal.created');
    await until(() => receiver.received.length === 1, 'the healthy delivery');
    const failed = await until(async () => {
      const response = await t.call({ method: 'GET', url: `/host/webhooks/${broken.id}/deliveries` });
      return response.json().deliveries.find((d: { eventId: string; attemptCount: number }) => d.eventId === event.id && d.attemptCount > 0);
    }, 'the broken subscription to log its attempt');
    expect(failed.lastError).toMatch(/cannot be decrypted/);
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([event.id]);
    // The outcome is recorded after the receiver answered: wait for it.
    const delivered = await until(async () => {
      const response = await t.call({ method: 'GET', url: `/host/webhooks/${healthy.id}/deliveries` });
      return response.json().deliveries.find((d: { status: string }) => d.status === 'succeeded');
    }, 'the healthy delivery to be recorded');
    expect(delivered).toMatchObject({ eventId: event.id, status: 'succeeded' });
  });
});
