import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { EVENT_NAMES, type EventPayload } from '../src/events/events.js';
import { setupApp, type TestContext } from './helpers/app.js';
import { insertDeal, recordEvent, startReceiver, startTestWorker, until, verifyStandardWebhook } from './helpers/delivery.js';

async function subscribe(t: TestContext, url: string) {
  const response = await t.call({ method: 'POST', url: '/host/webhooks/new', payload: { name: 'Receiver', url, events: EVENT_NAMES } });
  return response.json().webhook as { id: number; secret: string };
}

/** The delivery of an event, once the fan-out has made it. */
const deliveryOf = (t: TestContext, eventId: string) =>
  until(() => t.db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', eventId).executeTakeFirst(), 'the delivery row');

const attemptsOf = (t: TestContext, deliveryId: number) =>
  t.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('id').execute();

describe('retries', () => {
  it('a receiver that fails first and succeeds later gets every event, each attempt logged and signed afresh', async () => {
    const t = await setupApp();
    // Each event: a 500, then a timeout-free connection reset... then success on the third try.
    const receiver = await startReceiver((_request, index) =>
      index === 0 ? { status: 500, body: 'database down' } : index === 1 ? { status: 302, headers: { location: 'http://elsewhere.test/' } } : { status: 204 },
    );
    const webhook = await subscribe(t, receiver.url);
    await startTestWorker(t);
    const dealId = await insertDeal(t.db);
    const events: EventPayload[] = [];
    for (const name of ['service.deal.created', 'service.deal.updated', 'deal.stage_changed', 'service.deal.won'] as const) {
      events.push(await recordEvent(t.db, dealId, name));
    }
    await until(async () => {
      const rows = await t.db.selectFrom('webhook_deliveries').select('status').execute();
      return rows.length === events.length && rows.every((row) => row.status === 'succeeded');
    }, 'every delivery to succeed');

    for (const event of events) {
      const tries = receiver.received.filter((r) => r.headers['webhook-id'] === event.id);
      expect(tries).toHaveLength(3);
      // Same webhook-id and body on every retry, each signature valid for its own timestamp.
      expect(new Set(tries.map((r) => r.body)).size).toBe(1);
      for (const attempt of tries) expect(verifyStandardWebhook(webhook.secret, attempt)).toBe(1);

      const delivery = await deliveryOf(t, event.id);
      expect(delivery.attempt_count).toBe(3);
      const attempts = await attemptsOf(t, delivery.id);
      expect(attempts.map((a) => a.status_code)).toEqual([500, 302, 204]);
      expect(attempts[0]!.response_body).toBe('database down');
      expect(attempts[1]!.error).toContain('Redirect not followed');
      expect(attempts.every((a) => a.duration_ms >= 0 && a.attempted_at instanceof Date)).toBe(true);
    }
    // The redirect target was never contacted: only our receiver's address saw requests.
    expect(receiver.received).toHaveLength(12);
  });

  it('a connection error and a timeout are retried', async () => {
    const t = await setupApp();
    const receiver = await startReceiver((_request, index) => (index === 0 ? { status: 200, delay: 1500 } : { status: 200 }));
    await subscribe(t, receiver.url);
    await startTestWorker(t, { policy: { timeoutMs: 300 } });
    const event = await recordEvent(t.db, await insertDeal(t.db), 'service.deal.created');
    const delivery = await until(async () => {
      const row = await deliveryOf(t, event.id);
      return row.status === 'succeeded' && row;
    }, 'success after a timeout');
    const attempts = await attemptsOf(t, delivery.id);
    expect(attempts[0]!.status_code).toBeNull();
    expect(attempts[0]!.error).toMatch(/Timed out after 300 ms/);
    expect(attempts.at(-1)!.status_code).toBe(200);

    // A port nobody listens on: connection refused, logged, retried, given up at the window's end.
    await receiver.close();
    const refused = await recordEvent(t.db, await insertDeal(t.db), 'service.deal.created');
    await t.db.updateTable('webhook_subscriptions').set({ url: receiver.url }).execute();
    const failed = await until(async () => {
      const row = await t.db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', refused.id).executeTakeFirst();
      return row && row.attempt_count >= 2 && row;
    }, 'retried connection errors');
    const refusedAttempts = await attemptsOf(t, failed.id);
    expect(refusedAttempts[0]!.error).toMatch(/ECONNREFUSED/);
  });

  it('honours Retry-After on 429 and 503', async () => {
    const t = await setupApp();
    const receiver = await startReceiver((_request, index) =>
      index === 0 ? { status: 429, headers: { 'retry-after': '2' } } : index === 1 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 },
    );
    await subscribe(t, receiver.url);
    await startTestWorker(t);
    const event = await recordEvent(t.db, await insertDeal(t.db), 'service.deal.created');
    const delivery = await until(async () => {
      const row = await deliveryOf(t, event.id);
      return row.status === 'succeeded' && row;
    }, 'success after Retry-After', 20_000);
    const attempts = await attemptsOf(t, delivery.id);
    expect(attempts.map((a) => a.status_code)).toEqual([429, 503, 200]);
    // The test policy's own backoff is 20-100 ms: gaps of 2 s and 1 s can only come from Retry-After.
    const gaps = attempts.slice(1).map((a, i) => a.attempted_at.getTime() - attempts[i]!.attempted_at.getTime());
    expect(gaps[0]).toBeGreaterThanOrEqual(1900);
    expect(gaps[1]).toBeGreaterThanOrEqual(900);
  });

  it('gives up when the next attempt would fall outside the retry window', async () => {
    const t = await setupApp();
    const receiver = await startReceiver(() => ({ status: 500 }));
    await subscribe(t, receiver.url);
    await startTestWorker(t, { policy: { retryWindowMs: 400, baseDelayMs: 50, maxDelayMs: 100 } });
    const event = await recordEvent(t.db, await insertDeal(t.db), 'service.deal.created');
    const delivery = await until(async () => {
      const row = await deliveryOf(t, event.id);
      return row.status === 'failed' && row;
    }, 'the delivery to give up');
    expect(delivery.attempt_count).toBeGreaterThan(1);
    expect(delivery.next_attempt_at).toBeNull();
    expect(delivery.last_error).toBe('HTTP 500');
    expect(await attemptsOf(t, delivery.id)).toHaveLength(delivery.attempt_count);
  });
});

describe('disabling', () => {
  it('410 Gone disables the subscription at once and stops delivering to it', async () => {
    const t = await setupApp();
    const receiver = await startReceiver(() => ({ status: 410 }));
    const webhook = await subscribe(t, receiver.url);
    await startTestWorker(t);
    const dealId = await insertDeal(t.db);
    const event = await recordEvent(t.db, dealId, 'service.deal.created');
    await until(async () => (await deliveryOf(t, event.id)).status === 'failed', 'the 410 to settle');
    const delivery = await deliveryOf(t, event.id);
    expect(delivery.attempt_count).toBe(1);

    const view = (await t.call({ method: 'GET', url: `/host/webhooks/${webhook.id}` })).json().webhook;
    expect(view.enabled).toBe(false);
    expect(view.disabledReason).toMatch(/410/);
    expect(view.disabledAt).not.toBeNull();

    await recordEvent(t.db, dealId, 'service.deal.updated');
    const later = await recordEvent(t.db, dealId, 'service.deal.won');
    // Wait until the worker has seen the later events (their fan-out jobs are gone).
    await until(async () => {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from graphile_worker.jobs`.execute(t.db);
      return rows[0]!.n === 0;
    }, 'the queue to drain');
    expect(await t.db.selectFrom('webhook_deliveries').select('id').where('event_id', '=', later.id).execute()).toHaveLength(0);
    expect(receiver.received).toHaveLength(1);
  });

  it('five days of failures without a success disable the subscription, and say so', async () => {
    const t = await setupApp();
    const receiver = await startReceiver(() => ({ status: 500 }));
    const webhook = await subscribe(t, receiver.url);
    // The failing streak began six days ago (a success would have cleared it).
    await t.db
      .updateTable('webhook_subscriptions')
      .set({ failing_since: sql`now() - interval '6 days'` })
      .where('id', '=', webhook.id)
      .execute();
    await startTestWorker(t);
    const event = await recordEvent(t.db, await insertDeal(t.db), 'service.deal.created');
    await until(async () => (await deliveryOf(t, event.id)).status === 'failed', 'the delivery to fail');
    const view = (await t.call({ method: 'GET', url: `/host/webhooks/${webhook.id}` })).json().webhook;
    expect(view.enabled).toBe(false);
    expect(view.disabledReason).toMatch(/No successful delivery since .*5 days/);
    expect((await deliveryOf(t, event.id)).attempt_count).toBe(1);
  });

  it('a failure starts the streak and a success ends it', async () => {
    const t = await setupApp();
    const receiver = await startReceiver((_request, index) => (index === 0 ? { status: 500 } : { status: 200 }));
    const webhook = await subscribe(t, receiver.url);
    await startTestWorker(t, { policy: { baseDelayMs: 400, maxDelayMs: 400 } });
    const event = await recordEvent(t.db, await insertDeal(t.db), 'service.deal.created');
    const failing = await until(async () => {
      const row = await t.db.selectFrom('webhook_subscriptions').select('failing_since').where('id', '=', webhook.id).executeTakeFirstOrThrow();
      return row.failing_since;
    }, 'the streak to start');
    expect(failing).toBeInstanceOf(Date);
    await until(async () => (await deliveryOf(t, event.id)).status === 'succeeded', 'the retry to succeed');
    const after = await t.db.selectFrom('webhook_subscriptions').select(['failing_since', 'enabled']).where('id', '=', webhook.id).executeTakeFirstOrThrow();
    expect(after).toEqual({ failing_since: null, enabled: true });
  });
});
