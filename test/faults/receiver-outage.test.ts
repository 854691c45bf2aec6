import http from 'node:http';
import type { Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/app.js';
import { until } from '../helpers/delivery.js';
import { spawnServer, stopAll, type ChildService } from '../helpers/server-process.js';
import { ADMIN, APP_KEY, call } from './helpers/http.js';

/**
 * A receiver down (connection refused) for two minutes, then back on the same
 * port: every event arrives and every attempt is in the delivery log. The
 * default schedule (10 s doubling) would put the first retry after the outage
 * near 150-200 s; WEBHOOK_RETRY_BASE_MS=1000 and WEBHOOK_RETRY_MAX_MS=10000
 * keep its shape but retry every ~10 s, so the test waits minutes, not more.
 */
const OUTAGE_MS = 120_000;
const DEALS = 10;

let server: ChildService;
let test: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  test = await createTestDatabase();
  server = await spawnServer({
    DATABASE_URL: test.url,
    APP_KEY,
    ADMIN_PASSWORD: ADMIN.password,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_RETRY_BASE_MS: '1000',
    WEBHOOK_RETRY_MAX_MS: '10000',
  });
});
afterAll(async () => {
  await receiver?.down();
  await stopAll();
  await test?.drop();
});

/** A receiver that can go away (the port refuses connections) and come back on the same port. */
function downableReceiver() {
  const received: { id: string; body: string }[] = [];
  const sockets = new Set<Socket>();
  let port = 0;
  let server: http.Server | undefined;
  const up = async () => {
    server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        received.push({ id: String(request.headers['webhook-id']), body });
        response.writeHead(200).end('ok');
      });
    });
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((done) => server!.listen(port, '127.0.0.1', done));
    port = (server.address() as { port: number }).port;
  };
  const down = () =>
    new Promise<void>((done) => {
      if (!server) return done();
      for (const socket of sockets) socket.destroy();
      server.close(() => done());
      server = undefined;
    });
  return { received, up, down, url: () => `http://127.0.0.1:${port}/hook` };
}
let receiver: ReturnType<typeof downableReceiver> | undefined;

describe('a receiver down for two minutes', () => {
  it('gets every event once it is back, and every attempt is in the delivery log', async () => {
    receiver = downableReceiver();
    await receiver.up();
    const hook = await call(server.url, '/host/webhooks/new', { json: { name: 'Flaky', url: receiver.url(), events: ['service.deal.created', 'service.deal.updated'] } });
    expect(hook.status).toBe(200);
    const hookId = hook.body.webhook.id as number;

    await receiver.down();
    const downAt = Date.now();
    const dealIds: number[] = [];
    for (let i = 0; i < DEALS; i++) {
      const created = await call(server.url, '/service/deals/new', { json: { deal: { title: `Outage ${i}` } } });
      expect(created.status).toBe(200);
      dealIds.push(created.body.deal.id);
    }
    await new Promise((done) => setTimeout(done, OUTAGE_MS - (Date.now() - downAt)));
    await receiver.up();
    const upAt = Date.now();

    const client = new pg.Client({ connectionString: test.url });
    await client.connect();
    try {
      const events = await client.query<{ id: string }>('select id from event_outbox where deal_id = any($1::bigint[])', [dealIds]);
      expect(events.rows.length).toBe(DEALS);
      const wanted = events.rows.map((row) => row.id);
      await until(() => wanted.every((id) => receiver!.received.some((r) => r.id === id)), 'every event after the outage', 60_000);
      const lastArrival = Date.now() - upAt;
      // The worker records a success after the receiver's answer: wait for the log to catch up before reading it.
      await until(
        async () => (await client.query('select count(*)::int as n from webhook_deliveries where subscription_id = $1 and status = $2', [hookId, 'succeeded'])).rows[0].n === DEALS,
        'every delivery recorded as succeeded',
        30_000,
      );

      const deliveries = await client.query<{ id: number; event_id: string; status: string; attempt_count: number }>(
        'select id, event_id, status, attempt_count from webhook_deliveries where subscription_id = $1 and event_id = any($2::uuid[])',
        [hookId, wanted],
      );
      expect(deliveries.rows).toHaveLength(DEALS);
      const attempts = await client.query<{ delivery_id: number; attempted_at: Date; status_code: number | null; error: string | null }>(
        'select delivery_id, attempted_at, status_code, error from webhook_attempts where delivery_id = any($1::bigint[]) order by attempted_at, id',
        [deliveries.rows.map((row) => row.id)],
      );
      let failedAttempts = 0;
      for (const delivery of deliveries.rows) {
        expect(delivery.status).toBe('succeeded');
        const mine = attempts.rows.filter((row) => row.delivery_id === delivery.id);
        const failures = mine.slice(0, -1);
        const last = mine.at(-1)!;
        // Every request the receiver saw is a logged 200; every refused connection a logged error, inside the outage.
        expect(last.status_code).toBe(200);
        expect(receiver.received.filter((r) => r.id === delivery.event_id)).toHaveLength(mine.filter((row) => row.status_code === 200).length);
        expect(failures.length).toBeGreaterThanOrEqual(5);
        for (const failure of failures) {
          expect(failure.status_code).toBeNull();
          expect(failure.error).toBeTruthy();
          expect(failure.attempted_at.getTime()).toBeGreaterThanOrEqual(downAt - 1000);
          expect(failure.attempted_at.getTime()).toBeLessThanOrEqual(upAt + 1000);
        }
        failedAttempts += failures.length;
      }
      console.log(
        `receiver down ${Math.round((upAt - downAt) / 1000)} s: ${DEALS} events, ${failedAttempts} refused attempts logged ` +
          `(${(failedAttempts / DEALS).toFixed(1)} per event), all delivered ${lastArrival} ms after it was back`,
      );
    } finally {
      await client.end();
    }
  });
});
