import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EVENT_NAMES, writeDealEvents, type EventPayload } from '../src/events/events.js';
import { setupApp, type TestContext } from './helpers/app.js';
import { defaultPipeline } from './helpers/factories.js';
import {
  insertDeal,
  recordEvent,
  startReceiver,
  startTestWorker,
  until,
  verifyMauticSignature,
  verifyStandardWebhook,
  type Receiver,
} from './helpers/delivery.js';

async function subscribe(t: TestContext, url: string, events: readonly string[] = EVENT_NAMES) {
  const response = await t.call({ method: 'POST', url: '/host/webhooks/new', payload: { name: 'Receiver', url, events } });
  expect(response.statusCode).toBe(200);
  return response.json().webhook as { id: number; secret: string };
}

const bodiesFor = (receiver: Receiver, eventId: string) => receiver.received.filter((r) => r.headers['webhook-id'] === eventId);

describe('outbound delivery (builtin mode)', () => {
  it('delivers all nine events with their payloads, Standard Webhooks and Mautic-style signatures', async () => {
    const t = await setupApp();
    const receiver = await startReceiver();
    const webhook = await subscribe(t, receiver.url);
    await startTestWorker(t);
    const dealId = await insertDeal(t.db);

    const recorded: EventPayload[] = [];
    for (const event of EVENT_NAMES) recorded.push(await recordEvent(t.db, dealId, event));
    await until(() => receiver.received.length >= EVENT_NAMES.length, 'nine deliveries');

    expect(new Set(receiver.received.map((r) => r.json.event))).toEqual(new Set(EVENT_NAMES));
    for (const payload of recorded) {
      const [delivered, ...again] = bodiesFor(receiver, payload.id);
      expect(again).toHaveLength(0);
      expect(delivered!.json).toEqual(payload);
      expect(delivered!.headers['content-type']).toBe('application/json');
      expect(Number(delivered!.headers['webhook-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 300);
      expect(verifyStandardWebhook(webhook.secret, delivered!)).toBe(1);
      expect(verifyMauticSignature(webhook.secret, delivered!)).toBe(true);
    }
    // Per-deal sequence rises by one per event: receivers order by it.
    expect(recorded.map((p) => p.sequence)).toEqual(recorded.map((_, i) => recorded[0]!.sequence + i));

    // The worker records each outcome after the receiver has answered: wait for the rows, not just the requests.
    const deliveries = await until(async () => {
      const rows = await t.db.selectFrom('webhook_deliveries').select(['status', 'attempt_count']).execute();
      return rows.length === EVENT_NAMES.length && rows;
    }, 'nine delivery rows');
    expect(deliveries.every((d) => d.status === 'succeeded' && d.attempt_count === 1)).toBe(true);
  });

  it('delivers every event recorded together (one queue job for the lot), each once, in per-deal sequence', async () => {
    const t = await setupApp();
    const receiver = await startReceiver();
    await subscribe(t, receiver.url);
    await startTestWorker(t);
    const deals = [await insertDeal(t.db), await insertDeal(t.db), await insertDeal(t.db)];
    const recorded = await t.db.transaction().execute((trx) =>
      writeDealEvents(
        trx,
        deals.flatMap((dealId) => [
          { event: 'service.deal.created' as const, dealId, changedBy: { id: null, name: 'Batch' } },
          { event: 'service.deal.contact_added' as const, dealId, changedBy: { id: null, name: 'Batch' } },
        ]),
      ),
    );
    await until(() => receiver.received.length >= recorded.length, 'six deliveries');
    for (const payload of recorded) expect(bodiesFor(receiver, payload.id)).toHaveLength(1);
    for (const dealId of deals) {
      expect(recorded.filter((p) => p.deal.id === dealId).map((p) => [p.event, p.sequence])).toEqual([
        ['service.deal.created', 1],
        ['service.deal.contact_added', 2],
      ]);
    }
  });

  it('a signature made with another secret or over another body does not verify', async () => {
    const t = await setupApp();
    const receiver = await startReceiver();
    const webhook = await subscribe(t, receiver.url);
    await startTestWorker(t);
    await recordEvent(t.db, await insertDeal(t.db), 'service.deal.created');
    const [delivered] = await until(() => receiver.received.length > 0 && receiver.received, 'a delivery');
    const other = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    expect(verifyStandardWebhook(other, delivered!)).toBe(0);
    expect(verifyStandardWebhook(webhook.secret, { ...delivered!, body: delivered!.body.replace('Acme', 'Acmf') })).toBe(0);
    expect(verifyMauticSignature(other, delivered!)).toBe(false);
  });

  it('only subscriptions that selected an event, and are enabled, receive it', async () => {
    const t = await setupApp();
    const wonOnly = await startReceiver();
    const disabled = await startReceiver();
    const everything = await startReceiver();
    await subscribe(t, wonOnly.url, ['service.deal.won']);
    const off = await subscribe(t, disabled.url);
    await t.call({ method: 'POST', url: `/host/webhooks/${off.id}/edit`, payload: { enabled: false } });
    await subscribe(t, everything.url);
    await startTestWorker(t);
    const dealId = await insertDeal(t.db);
    await recordEvent(t.db, dealId, 'service.deal.created');
    const won = await recordEvent(t.db, dealId, 'service.deal.won');
    await until(() => everything.received.length === 2 && wonOnly.received.length === 1, 'fan-out');
    expect(wonOnly.received[0]!.json.id).toBe(won.id);
    expect(disabled.received).toHaveLength(0);
  });

  it('a rolled-back change sends nothing; the next committed one is delivered', async () => {
    const t = await setupApp();
    const receiver = await startReceiver();
    await subscribe(t, receiver.url);
    await startTestWorker(t);
    const dealId = await insertDeal(t.db);
    let rolledBack: EventPayload | undefined;
    await expect(
      t.db.transaction().execute(async (trx) => {
        [rolledBack] = await writeDealEvents(trx, [{ event: 'service.deal.updated', dealId, changedBy: { id: 1, name: 'Ada Admin' } }]);
        throw new Error('the change fails after recording its event');
      }),
    ).rejects.toThrow('the change fails');
    const committed = await recordEvent(t.db, dealId, 'service.deal.won');
    await until(() => receiver.received.length > 0, 'the committed event');
    // The queue is worked in order of insertion, so once the later event arrived the earlier one had its chance.
    await until(async () => (await t.db.selectFrom('webhook_deliveries').select('status').executeTakeFirst())?.status === 'succeeded', 'settled');
    expect(receiver.received.map((r) => r.json.id)).toEqual([committed.id]);
    expect(await t.db.selectFrom('event_outbox').select('id').where('id', '=', rolledBack!.id).execute()).toHaveLength(0);
    expect(committed.sequence).toBe(1);
  });
});

describe('through the deals API', () => {
  it('a create, a move to Won and a delete reach the receiver with their extras, in sequence order', async () => {
    const t = await setupApp();
    const receiver = await startReceiver();
    const webhook = await subscribe(t, receiver.url);
    await startTestWorker(t);
    const created = await t.call({ method: 'POST', url: '/service/deals/new', payload: { deal: { title: 'Acme renewal', amount: 1500.5 } } });
    expect(created.statusCode).toBe(200);
    const deal = created.json().deal;
    const won = (await defaultPipeline(t.db)).stages.find((stage) => stage.type === 'won')!;
    expect((await t.call({ method: 'POST', url: `/service/${deal.id}/stage`, payload: { stage_id: won.id } })).statusCode).toBe(200);
    expect((await t.call({ method: 'DELETE', url: `/service/${deal.id}` })).statusCode).toBe(200);

    await until(() => receiver.received.length >= 4, 'four events');
    const bySequence = [...receiver.received].sort((a, b) => a.json.sequence - b.json.sequence);
    expect(bySequence.map((r) => [r.json.sequence, r.json.event])).toEqual([
      [1, 'service.deal.created'],
      [2, 'deal.stage_changed'],
      [3, 'service.deal.won'],
      [4, 'service.deal.deleted'],
    ]);
    expect(bySequence[0]!.json.deal).toMatchObject({ id: deal.id, title: 'Acme renewal', amount: 1500.5, status: 'open' });
    expect(bySequence[1]!.json.previous_stage).toMatchObject({ name: 'Qualification', type: 'open' });
    expect(bySequence[2]!.json.deal).toMatchObject({ status: 'won', stage: { id: won.id, type: 'won' } });
    expect(bySequence.every((r) => verifyStandardWebhook(webhook.secret, r) === 1)).toBe(true);
  });
});

describe('signatures', () => {
  it('uses the key exactly as the spec says (hand-computed vector)', async () => {
    // Independent of the service: content is `${id}.${timestamp}.${body}` under the decoded whsec_ key.
    const key = Buffer.alloc(24, 9);
    const expected = createHmac('sha256', key).update('msg_1.1700000000.{"a":1}').digest('base64');
    const { signedHeaders } = await import('../src/events/signing.js');
    const headers = signedHeaders([`whsec_${key.toString('base64')}`], 'msg_1', 1_700_000_000, '{"a":1}');
    const mautic = createHmac('sha256', `whsec_${key.toString('base64')}`).update('{"a":1}').digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected} mautic,${mautic}`);
  });
});
