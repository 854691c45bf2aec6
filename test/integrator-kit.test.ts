import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type DealEvent } from '../clients/typescript/examples/receiver.js';
import { allDeals, createDealClient, dealPages, retryAfterMs, retryingFetch, type DealClient } from '../clients/typescript/src/client.js';
import { verifyDelivery, type VerifiedDelivery } from '../clients/typescript/src/webhooks.js';
import { ADMIN, setupApp, type TestContext } from './helpers/app.js';
import { createDeal } from './helpers/factories.js';
import { startTestWorker, until } from './helpers/delivery.js';

/** The integrator kit (clients/typescript) against real HTTP servers and the live service. */

let t: TestContext;
let baseUrl: string;
let client: DealClient;

beforeAll(async () => {
  t = await setupApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  client = createDealClient({ baseUrl, credentials: ADMIN });
});

interface Seen {
  method: string;
  url: string;
  body: string;
  authorization?: string;
}

/** A local HTTP server that answers each request with the next scripted reply (the last one repeats). */
async function scriptedServer(replies: ((seen: Seen) => Promise<{ status: number; headers?: Record<string, string>; body?: string }>)[]) {
  const seen: Seen[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const entry = { method: request.method!, url: request.url!, body: Buffer.concat(chunks).toString('utf8'), authorization: request.headers.authorization };
      seen.push(entry);
      const reply = await replies[Math.min(seen.length - 1, replies.length - 1)]!(entry);
      response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(reply.body ?? '{}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  afterAll(() => new Promise<void>((done) => server.close(() => done())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const answer = (status: number, headers: Record<string, string> = {}) => async () => ({ status, headers, body: JSON.stringify({ errors: [{ code: status, message: 'busy', details: {}, type: 'x' }] }) });

describe('retries on 429 and 503', () => {
  it('waits what Retry-After says (seconds or a date), resends the same request, and returns the answer that succeeded', async () => {
    const later = new Date(Date.now() + 10_000).toUTCString();
    const server = await scriptedServer([answer(429, { 'retry-after': '2' }), answer(503, { 'retry-after': later }), async () => ({ status: 200, body: '{"ok":true}' })]);
    const waits: number[] = [];
    const send = retryingFetch({ sleep: async (ms) => void waits.push(ms) });
    const response = await send(new Request(`${server.url}/service/deals/new`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"deal":{"title":"A"}}' }));

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
    expect(server.seen.map((s) => [s.method, s.url, s.body])).toEqual(Array(3).fill(['POST', '/service/deals/new', '{"deal":{"title":"A"}}']));
    expect(waits[0]).toBe(2000);
    // An HTTP date: the time until then (whole seconds on the wire), never more than asked.
    expect(waits[1]).toBeGreaterThan(8000);
    expect(waits[1]).toBeLessThanOrEqual(10_000);
  });

  it('is bounded: gives up after `retries`, and returns at once when Retry-After asks for more than maxDelayMs', async () => {
    const busy = await scriptedServer([answer(503, { 'retry-after': '0' })]);
    const waits: number[] = [];
    const response = await retryingFetch({ retries: 2, sleep: async (ms) => void waits.push(ms) })(new Request(`${busy.url}/service/pipelines`));
    expect(response.status).toBe(503);
    expect(busy.seen).toHaveLength(3);
    expect(waits).toEqual([0, 0]);

    const slow = await scriptedServer([answer(429, { 'retry-after': '120' })]);
    const waited: number[] = [];
    const refused = await retryingFetch({ maxDelayMs: 30_000, sleep: async (ms) => void waited.push(ms) })(new Request(`${slow.url}/service/pipelines`));
    expect(refused.status).toBe(429);
    expect(slow.seen).toHaveLength(1);
    expect(waited).toEqual([]);

    // Without Retry-After: exponential backoff from baseDelayMs. Other statuses are not retried.
    const bare = await scriptedServer([answer(503), answer(503), answer(404)]);
    const backoff: number[] = [];
    const notFound = await retryingFetch({ baseDelayMs: 100, sleep: async (ms) => void backoff.push(ms) })(new Request(`${bare.url}/x`));
    expect(notFound.status).toBe(404);
    expect(backoff).toEqual([100, 200]);
  });

  it('reads Retry-After as RFC 9110 says', () => {
    expect(retryAfterMs('7')).toBe(7000);
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:30 GMT'))).toBe(30_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });

  it('the typed client retries a write through a busy proxy and the service creates the deal once', async () => {
    // The proxy answers 503 first, then passes requests on to the live service.
    const proxy = await scriptedServer([
      answer(503, { 'retry-after': '0' }),
      async (seen) => {
        const forwarded = await fetch(`${baseUrl}${seen.url}`, { method: seen.method, headers: { 'content-type': 'application/json', authorization: seen.authorization! }, body: seen.body || undefined });
        return { status: forwarded.status, body: await forwarded.text() };
      },
    ]);
    const busyClient = createDealClient({ baseUrl: proxy.url, credentials: ADMIN });
    const { data, response } = await busyClient.POST('/service/deals/new', { body: { deal: { title: 'Through the proxy' } } });
    expect(response.status).toBe(200);
    expect(data!.deal.title).toBe('Through the proxy');
    expect(proxy.seen).toHaveLength(2);
    expect(proxy.seen[1]!.authorization).toMatch(/^Basic /);
    const rows = await t.db.selectFrom('deals').select('id').where('title', '=', 'Through the proxy').execute();
    expect(rows).toEqual([{ id: data!.deal.id }]);
  });
});

describe('cursor iteration', () => {
  it('walks every deal page by page with `after`, in the order asked for', async () => {
    for (const amount of ['10', '30', '20', '50', '40']) await createDeal(t.db, { title: `Cursor ${amount}`, amount });
    const expected = await t.db.selectFrom('deals').select('id').where('title', 'like', 'Cursor %').orderBy('amount', 'desc').orderBy('id', 'desc').execute();

    const ids: number[] = [];
    for await (const deal of allDeals(client, { search: 'Cursor', orderBy: 'amount', orderByDir: 'desc', limit: 2 })) ids.push(deal.id);
    expect(ids).toEqual(expected.map((row) => row.id));

    const sizes: number[] = [];
    for await (const page of dealPages(client, { search: 'Cursor', limit: 2 })) sizes.push(page.deals.length);
    expect(sizes).toEqual([2, 2, 1]);
  });

  it('signs in with an API credential (OAuth client credentials) as well', async () => {
    const made = await client.POST('/host/api-credentials/new', { body: { name: 'Kit test', user: 1 } });
    const credential = made.data!.credential;
    const oauth = createDealClient({ baseUrl, credentials: { clientId: credential.client_id, clientSecret: credential.client_secret! } });
    const { data, response } = await oauth.GET('/service/pipelines');
    expect(response.status).toBe(200);
    expect(data!.pipelines.length).toBeGreaterThan(0);
    const wrong = createDealClient({ baseUrl, credentials: { clientId: credential.client_id, clientSecret: 'not-the-secret' } });
    await expect(wrong.GET('/service/pipelines')).rejects.toMatchObject({ status: 401 });
  });
});

describe('the example receiver', () => {
  it('verifies a live delivery from the service, logs the event once, and refuses a tampered one', async () => {
    const events: VerifiedDelivery<DealEvent>[] = [];
    const rejected: string[] = [];
    const raw: { headers: http.IncomingHttpHeaders; body: string }[] = [];
    let secret = '';
    const receiver = createReceiver({ get secret() { return secret; }, onEvent: (delivery) => void events.push(delivery), onRejected: (reason) => void rejected.push(reason) });
    receiver.on('request', (request: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => raw.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    afterAll(() => new Promise<void>((done) => receiver.close(() => done())));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

    const subscribed = await client.POST('/host/webhooks/new', { body: { name: 'Kit receiver', url: receiverUrl, events: ['service.deal.created'] } });
    expect(subscribed.response.status).toBe(200);
    secret = subscribed.data!.webhook.secret!;
    await startTestWorker(t);
    const created = await client.POST('/service/deals/new', { body: { deal: { title: 'Delivered to the kit' } } });
    const dealId = created.data!.deal.id;

    // Events the worker had not sent yet when the subscription was made go out too: wait for this deal's.
    const ours = await until(() => events.find((delivery) => delivery.event.deal?.id === dealId), 'a verified delivery');
    expect(ours.scheme).toBe('v1');
    expect(ours.event).toMatchObject({ event: 'service.deal.created', deal: { id: dealId, title: 'Delivered to the kit' } });
    expect(ours.id).toBe(ours.event.id);
    expect(rejected).toEqual([]);
    const delivered = raw.find((request) => request.headers['webhook-id'] === ours.id)!;

    const replay = (body: string, headers: Record<string, string>) =>
      fetch(receiverUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const headers = {
      'webhook-id': String(delivered.headers['webhook-id']),
      'webhook-timestamp': String(delivered.headers['webhook-timestamp']),
      'webhook-signature': String(delivered.headers['webhook-signature']),
    };
    // Tampered: one character of the body changed; and a valid body signed with another secret.
    const tampered = await replay(delivered.body.replace('Delivered to the kit', 'Delivered to the kiT'), headers);
    expect(tampered.status).toBe(401);
    const forged = new Webhook('whsec_' + Buffer.alloc(32, 9).toString('base64')).sign(headers['webhook-id'], new Date(), delivered.body);
    const other = await replay(delivered.body, { ...headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': forged });
    expect(other.status).toBe(401);
    expect(rejected).toHaveLength(2);
    // The same delivery again (a retry): accepted, not logged twice.
    expect((await replay(delivered.body, headers)).status).toBe(204);
    expect(events.filter((delivery) => delivery.id === ours.id)).toHaveLength(1);
  });

  it('accepts the mautic, entry alone, and only the entries asked for', async () => {
    const secret = 'whsec_' + Buffer.alloc(32, 3).toString('base64');
    const body = '{"id":"e1","event":"service.deal.won"}';
    const timestamp = new Date();
    const v1 = new Webhook(secret).sign('e1', timestamp, body);
    const { createHmac } = await import('node:crypto');
    const mautic = `mautic,${createHmac('sha256', secret).update(body).digest('base64')}`;
    const base = { 'webhook-id': 'e1', 'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)) };

    expect(verifyDelivery(secret, body, { ...base, 'webhook-signature': `${v1} ${mautic}` }).scheme).toBe('v1');
    expect(verifyDelivery(secret, body, { ...base, 'Webhook-Signature': mautic })).toEqual({ event: JSON.parse(body), id: 'e1', scheme: 'mautic' });
    expect(() => verifyDelivery(secret, body, { ...base, 'webhook-signature': mautic }, { accept: ['v1'] })).toThrow(/No matching signature/);
    expect(() => verifyDelivery(secret, `${body} `, { ...base, 'webhook-signature': `${v1} ${mautic}` })).toThrow(/No matching signature/);
    // Standard Webhooks' own timestamp rule: a v1 signature of ten minutes ago is refused.
    const old = new Date(Date.now() - 600_000);
    const stale = { 'webhook-id': 'e1', 'webhook-timestamp': String(Math.floor(old.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign('e1', old, body) };
    expect(() => verifyDelivery(secret, body, stale)).toThrow(/too old/i);
  });
});
