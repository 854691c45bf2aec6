import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { EVENT_NAMES } from '../src/events/events.js';
import { pruneDeliveryLog } from '../src/events/prune.js';
import { setupApp, type TestContext } from './helpers/app.js';
import { createUser } from './helpers/factories.js';
import {
  insertDeal,
  recordEvent,
  startReceiver,
  startTestWorker,
  until,
  verifyMauticSignature,
  verifyStandardWebhook,
} from './helpers/delivery.js';

const form = (body: string) => ({ payload: body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });

async function create(t: TestContext, payload: Record<string, unknown>) {
  const response = await t.call({ method: 'POST', url: '/host/webhooks/new', payload });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().webhook as { id: number; secret: string; enabled: boolean };
}

const deliveries = async (t: TestContext, id: number, query = '') =>
  (await t.call({ method: 'GET', url: `/host/webhooks/${id}/deliveries${query}` })).json();

describe('webhook subscriptions API', () => {
  it('creates with a generated secret shown once, stored encrypted, and never shown again', async () => {
    const t = await setupApp();
    const response = await t.call({
      method: 'POST',
      url: '/host/webhooks/new',
      ...form('name=CRM%20sync&url=https%3A%2F%2F93.184.215.14%2Fhooks&events[]=service.deal.won&events[]=service.deal.lost'),
    });
    expect(response.statusCode).toBe(200);
    const webhook = response.json().webhook;
    expect(response.headers.location).toBe(`http://service.test/host/webhooks/${webhook.id}`);
    expect(webhook).toMatchObject({
      name: 'CRM sync',
      url: 'https://93.184.215.14/hooks',
      events: ['service.deal.won', 'service.deal.lost'],
      enabled: true,
      disabledReason: null,
    });
    expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    const bytes = Buffer.from(webhook.secret.slice(6), 'base64').length;
    expect(bytes).toBeGreaterThanOrEqual(24);
    expect(bytes).toBeLessThanOrEqual(64);

    const stored = await t.db.selectFrom('webhook_subscriptions').select('secret_encrypted').executeTakeFirstOrThrow();
    expect(stored.secret_encrypted).not.toContain(webhook.secret.slice(6));
    const shown = await t.call({ method: 'GET', url: `/host/webhooks/${webhook.id}` });
    expect(shown.json().webhook.secret).toBeUndefined();
    const list = await t.call({ method: 'GET', url: '/host/webhooks' });
    expect(list.json().webhooks.map((w: { id: number }) => w.id)).toEqual([webhook.id]);
    expect(JSON.stringify(list.json())).not.toContain(webhook.secret);
  });

  it('accepts a given whsec_ secret and refuses malformed input, naming each input as sent', async () => {
    const t = await setupApp();
    const secret = `whsec_${Buffer.alloc(24, 5).toString('base64')}`;
    const webhook = await create(t, { name: 'Mine', url: 'http://93.184.215.14/x', events: ['deal.stage_changed'], secret });
    expect(webhook.secret).toBe(secret);

    const bad = await t.call({
      method: 'POST',
      url: '/host/webhooks/new',
      payload: { name: '', url: 'ftp://example.com/x', events: ['service.deal.won', 'deal.exploded'], secret: 'whsec_c2hvcnQ=' },
    });
    expect(bad.statusCode).toBe(422);
    expect(Object.keys(bad.json().errors[0].details).sort()).toEqual(['events[1]', 'name', 'secret', 'url']);
    const tooLong = `whsec_${Buffer.alloc(65).toString('base64')}`;
    const long = await t.call({ method: 'POST', url: '/host/webhooks/new', payload: { name: 'x', url: 'http://93.184.215.14/', events: ['service.deal.won'], secret: tooLong } });
    expect(Object.keys(long.json().errors[0].details)).toEqual(['secret']);
    const none = await t.call({ method: 'POST', url: '/host/webhooks/new', ...form('name=x&url=http%3A%2F%2F93.184.215.14%2F&events=') });
    expect(none.statusCode).toBe(422);
    expect(Object.keys(none.json().errors[0].details)).toEqual(['events']);
    const lone = await t.call({ method: 'POST', url: '/host/webhooks/new', ...form('name=x&url=http%3A%2F%2F93.184.215.14%2F&events[]=') });
    expect(lone.json().errors[0].details).toEqual({ events: ['Select at least one event'] });
  });

  it('needs host:admin; unknown ids are 404', async () => {
    const t = await setupApp();
    const webhook = await create(t, { name: 'A', url: 'http://93.184.215.14/', events: ['service.deal.won'] });
    const user = await createUser(t.db, ['service:webhooks:manage', 'service:deals:viewother']);
    for (const [method, url] of [
      ['GET', '/host/webhooks'],
      ['GET', `/host/webhooks/${webhook.id}/deliveries`],
      ['POST', `/host/webhooks/${webhook.id}/test`],
      ['DELETE', `/host/webhooks/${webhook.id}`],
    ] as const) {
      expect((await t.call({ method, url }, user)).statusCode, url).toBe(403);
    }
    const admin = await createUser(t.db, ['host:admin']);
    expect((await t.call({ method: 'GET', url: '/host/webhooks' }, admin)).statusCode).toBe(200);
    for (const [method, url] of [
      ['GET', '/host/webhooks/999'],
      ['POST', '/host/webhooks/999/edit'],
      ['DELETE', '/host/webhooks/999'],
      ['GET', '/host/webhooks/999/deliveries'],
      ['POST', '/host/webhooks/999/test'],
      ['POST', `/host/webhooks/${webhook.id}/deliveries/999/redeliver`],
      ['GET', '/host/webhooks/abc'],
    ] as const) {
      expect((await t.call({ method, url, payload: {} })).statusCode, `${method} ${url}`).toBe(404);
    }
  });

  it('edits, disables with a reason, re-enables afresh, deletes', async () => {
    const t = await setupApp();
    const webhook = await create(t, { name: 'A', url: 'http://93.184.215.14/', events: ['service.deal.won'] });
    const edited = await t.call({ method: 'POST', url: `/host/webhooks/${webhook.id}/edit`, payload: { name: 'B', events: ['service.deal.lost', 'service.deal.lost'], enabled: 'false' } });
    expect(edited.json().webhook).toMatchObject({ name: 'B', events: ['service.deal.lost'], enabled: false, disabledReason: 'Disabled by an administrator' });
    expect((await t.call({ method: 'POST', url: `/host/webhooks/${webhook.id}/test` })).statusCode).toBe(409);

    const enabled = await t.call({ method: 'POST', url: `/host/webhooks/${webhook.id}/edit`, ...form('enabled=true') });
    expect(enabled.json().webhook).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null, failingSince: null });
    expect((await t.call({ method: 'DELETE', url: `/host/webhooks/${webhook.id}` })).json()).toEqual({ success: true });
    expect((await t.call({ method: 'GET', url: `/host/webhooks/${webhook.id}` })).statusCode).toBe(404);
  });
});

describe('signing secret rotation', () => {
  it('signs with both secrets for 24 h after a rotation; Mautic-style with the new one', async () => {
    const t = await setupApp();
    const receiver = await startReceiver();
    const webhook = await create(t, { name: 'R', url: receiver.url, events: EVENT_NAMES });
    const rotated = await t.call({ method: 'POST', url: `/host/webhooks/${webhook.id}/rotate` });
    const fresh = rotated.json().webhook;
    expect(fresh.secret).not.toBe(webhook.secret);
    const validUntil = Date.parse(fresh.previousSecretValidUntil) - Date.now();
    expect(validUntil).toBeGreaterThan(23.9 * 3600_000);
    expect(validUntil).toBeLessThanOrEqual(24 * 3600_000);

    await startTestWorker(t);
    await recordEvent(t.db, await insertDeal(t.db), 'service.deal.created');
    const [delivered] = await until(() => receiver.received.length > 0 && receiver.received, 'a delivery');
    // One field line: two v1 signatures during the rotation, then the Mautic-style one.
    expect(delivered!.distinct['webhook-signature']).toHaveLength(1);
    expect(delivered!.headers['webhook-signature']!.toString().split(' ').map((entry) => entry.split(',')[0])).toEqual(['v1', 'v1', 'mautic']);
    expect(verifyStandardWebhook(fresh.secret, delivered!)).toBe(1);
    expect(verifyStandardWebhook(webhook.secret, delivered!)).toBe(1);
    expect(verifyMauticSignature(fresh.secret, delivered!)).toBe(true);

    // Once the overlap is over only the new secret signs.
    await t.db.updateTable('webhook_subscriptions').set({ previous_secret_expires_at: sql`now() - interval '1 second'` }).execute();
    await recordEvent(t.db, await insertDeal(t.db), 'service.deal.created');
    const [, second] = await until(() => receiver.received.length > 1 && receiver.received, 'a second delivery');
    expect(verifyStandardWebhook(webhook.secret, second!)).toBe(0);
    expect(verifyStandardWebhook(fresh.secret, second!)).toBe(1);
    expect((await t.call({ method: 'GET', url: `/host/webhooks/${webhook.id}` })).json().webhook.previousSecretValidUntil).toBeNull();

    // A secret given on edit is a rotation too.
    const chosen = `whsec_${Buffer.alloc(40, 8).toString('base64')}`;
    const edit = await t.call({ method: 'POST', url: `/host/webhooks/${webhook.id}/edit`, payload: { secret: chosen } });
    expect(edit.json().webhook.previousSecretValidUntil).not.toBeNull();
    await recordEvent(t.db, await insertDeal(t.db), 'service.deal.created');
    const third = (await until(() => receiver.received.length > 2 && receiver.received, 'a third delivery'))[2]!;
    expect(verifyStandardWebhook(chosen, third)).toBe(1);
    expect(verifyStandardWebhook(fresh.secret, third)).toBe(1);
  });
});

describe('delivery log, redelivery and test event', () => {
  it('lists every attempt with filters, redelivers by hand, and sends a test event', async () => {
    const t = await setupApp();
    let healthy = false;
    const receiver = await startReceiver(() => (healthy ? { status: 200, body: 'thanks' } : { status: 500, body: 'x'.repeat(5000) }));
    const webhook = await create(t, { name: 'R', url: receiver.url, events: EVENT_NAMES });
    await startTestWorker(t, { policy: { retryWindowMs: 150, baseDelayMs: 50, maxDelayMs: 50 } });
    const dealId = await insertDeal(t.db);
    const failing = await recordEvent(t.db, dealId, 'service.deal.created');
    await until(async () => (await deliveries(t, webhook.id, '?status=failed')).total === 1, 'the delivery to give up');

    healthy = true;
    const won = await recordEvent(t.db, dealId, 'service.deal.won');
    await until(async () => (await deliveries(t, webhook.id, '?status=succeeded')).total === 1, 'the second to succeed');

    const all = await deliveries(t, webhook.id);
    expect(all).toMatchObject({ total: 2, page: 1, limit: 30, pages: 1 });
    expect(all.deliveries.map((d: { eventId: string }) => d.eventId)).toEqual([won.id, failing.id]);
    const failed = all.deliveries[1];
    expect(failed).toMatchObject({ event: 'service.deal.created', status: 'failed', lastStatusCode: 500, lastError: 'HTTP 500', nextAttemptAt: null });
    expect(failed.attemptCount).toBe(failed.attempts.length);
    expect(failed.attempts[0]).toMatchObject({ statusCode: 500, error: null });
    expect(failed.attempts[0].response).toHaveLength(2048); // truncated
    expect(Date.parse(failed.attempts[0].attemptedAt)).not.toBeNaN();
    expect(typeof failed.attempts[0].durationMs).toBe('number');

    expect((await deliveries(t, webhook.id, '?event=service.deal.won')).deliveries.map((d: { eventId: string }) => d.eventId)).toEqual([won.id]);
    expect((await deliveries(t, webhook.id, `?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).total).toBe(0);
    expect((await deliveries(t, webhook.id, '?since=2000-01-01')).total).toBe(2);
    expect((await deliveries(t, webhook.id, '?limit=1&page=2')).deliveries.map((d: { eventId: string }) => d.eventId)).toEqual([failing.id]);
    const badFilter = await t.call({ method: 'GET', url: `/host/webhooks/${webhook.id}/deliveries?status=lost&since=yesterday` });
    expect(badFilter.statusCode).toBe(422);
    expect(Object.keys(badFilter.json().errors[0].details).sort()).toEqual(['since', 'status']);

    const one = await t.call({ method: 'GET', url: `/host/webhooks/${webhook.id}/deliveries/${failed.id}` });
    expect(one.json().delivery.payload).toEqual(failing);

    // Redeliver: same event, same webhook-id, a new attempt appended to the log.
    const before = receiver.received.filter((r) => r.headers['webhook-id'] === failing.id).length;
    const redelivered = await t.call({ method: 'POST', url: `/host/webhooks/${webhook.id}/deliveries/${failed.id}/redeliver` });
    expect(redelivered.statusCode).toBe(200);
    expect(redelivered.json().delivery.status).toBe('pending');
    const settled = await until(async () => {
      const row = (await t.call({ method: 'GET', url: `/host/webhooks/${webhook.id}/deliveries/${failed.id}` })).json().delivery;
      return row.status === 'succeeded' && row;
    }, 'the redelivery');
    expect(settled.attempts).toHaveLength(failed.attempts.length + 1);
    expect(settled.attempts.at(-1)).toMatchObject({ statusCode: 200, response: 'thanks' });
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === failing.id)).toHaveLength(before + 1);

    // Test event: only to this subscription, signed like the rest.
    const other = await startReceiver();
    await create(t, { name: 'Other', url: other.url, events: EVENT_NAMES });
    const test = await t.call({ method: 'POST', url: `/host/webhooks/${webhook.id}/test` });
    expect(test.statusCode).toBe(200);
    expect(test.json().delivery).toMatchObject({ event: 'webhook.test', status: 'pending' });
    const received = await until(() => receiver.received.find((r) => r.json.event === 'webhook.test'), 'the test event');
    expect(received.json).toMatchObject({ event: 'webhook.test', webhook: { id: webhook.id, name: 'R' } });
    expect(received.headers['webhook-id']).toBe(received.json.id);
    expect(verifyStandardWebhook(webhook.secret, received)).toBe(1);
    expect((await deliveries(t, webhook.id, '?event=webhook.test')).total).toBe(1);
    expect(other.received).toHaveLength(0);
  });

  it('prunes settled deliveries and outbox events past the retention, keeping anything still pending', async () => {
    const t = await setupApp();
    const webhook = await create(t, { name: 'R', url: 'http://93.184.215.14/', events: EVENT_NAMES });
    const dealId = await insertDeal(t.db);
    // No worker runs here: the fan-out jobs stay queued, so the recent events' deliveries are made by hand.
    const oldDone = await recordEvent(t.db, dealId, 'service.deal.created');
    const oldPending = await recordEvent(t.db, dealId, 'service.deal.updated');
    const oldQueued = await recordEvent(t.db, dealId, 'service.deal.won');
    const recent = await recordEvent(t.db, dealId, 'service.deal.lost');
    await sql`delete from graphile_worker._private_jobs where payload->'eventIds'->>0 <> ${oldQueued.id}`.execute(t.db);
    await t.db
      .insertInto('webhook_deliveries')
      .values([
        { subscription_id: webhook.id, event_id: oldDone.id, event: oldDone.event, status: 'succeeded' },
        { subscription_id: webhook.id, event_id: oldPending.id, event: oldPending.event, status: 'pending' },
        { subscription_id: webhook.id, event_id: recent.id, event: recent.event, status: 'failed' },
      ])
      .execute();
    const old = sql<Date>`now() - interval '31 days'`;
    await t.db.updateTable('event_outbox').set({ created_at: old }).where('id', '!=', recent.id).execute();
    await t.db.updateTable('webhook_deliveries').set({ updated_at: old }).where('event_id', '!=', recent.id).execute();

    expect(await pruneDeliveryLog(t.db, 30 * 24 * 3600_000)).toEqual({ deliveries: 1, events: 1 });
    const events = await t.db.selectFrom('event_outbox').select('id').execute();
    expect(events.map((e) => e.id).sort()).toEqual([oldPending.id, oldQueued.id, recent.id].sort());
    const left = await t.db.selectFrom('webhook_deliveries').select('event_id').execute();
    expect(left.map((d) => d.event_id).sort()).toEqual([oldPending.id, recent.id].sort());
  });
});
