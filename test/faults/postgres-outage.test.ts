import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, until } from '../helpers/delivery.js';
import { spawnServer, stopAll, type ChildService } from '../helpers/server-process.js';
import { ADMIN, APP_KEY, call, isUnavailable, type Answer } from './helpers/http.js';
import { startSparePostgres, type SparePostgres } from './helpers/postgres.js';

/**
 * PostgreSQL stopped under load, twice (immediate shutdown, then SIGKILL of the
 * postmaster), with an external DATABASE_URL to a server of this test's own:
 * requests answer 503 with the error body and Retry-After (never 500, never a
 * hang), /health says the database is down, the process stays up, and it
 * serves again by itself once PostgreSQL is back on the same port.
 */
const SENDERS = 8;
const REQUEST_BOUND_MS = 15_000;

let pgServer: SparePostgres;
let server: ChildService;
beforeAll(async () => {
  pgServer = await startSparePostgres();
  server = await spawnServer({
    DATABASE_URL: pgServer.url,
    APP_KEY,
    ADMIN_PASSWORD: ADMIN.password,
    DB_ACQUIRE_TIMEOUT_MS: '3000',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: process.env.FAULT_LOG_LEVEL ?? 'warn',
  });
});
afterAll(async () => {
  // FAULT_DUMP=<file> (with FAULT_LOG_LEVEL=info) keeps the service's log of a failing run for reading.
  if (process.env.FAULT_DUMP) (await import('node:fs')).writeFileSync(process.env.FAULT_DUMP, server?.output() ?? '');
  // A service that died on its own is the failure to explain: its last words.
  if (server && server.child.exitCode !== null) console.log(`service exited with ${server.child.exitCode}:\n${server.output().slice(-4000)}`);
  await stopAll();
  await pgServer?.stop();
});

interface Timed extends Answer {
  at: number;
}

/** Concurrent senders of reads and writes until stopped; every answer kept with its start time. */
function load(base: string) {
  const answers: Timed[] = [];
  const failures: string[] = [];
  let running = true;
  const senders = Array.from({ length: SENDERS }, async (_, sender) => {
    for (let i = 0; running && i < 100_000; i++) {
      const at = Date.now();
      try {
        const answer =
          i % 2 === 0
            ? await call(base, '/service/deals?limit=5', { timeoutMs: 30_000 })
            : await call(base, '/service/deals/new', { json: { deal: { title: `Load ${sender}-${i}` } }, timeoutMs: 30_000 });
        answers.push({ ...answer, at });
        if (answer.status === 503) await new Promise((done) => setTimeout(done, 100));
      } catch (error) {
        failures.push(`${(error as Error).name}: ${(error as Error).message}`); // a hang (timeout) or a dropped connection
      }
    }
  });
  return {
    answers,
    failures,
    async stop() {
      running = false;
      await Promise.all(senders);
    },
  };
}

async function outage(how: 'SIGQUIT' | 'SIGKILL') {
  const traffic = load(server.url);
  await new Promise((done) => setTimeout(done, 1500));
  const stoppedAt = Date.now();
  await pgServer.crash(how);
  // Settle: requests started after the crash must all be refused cleanly.
  await new Promise((done) => setTimeout(done, 4000));
  const health = await call(server.url, '/health', { auth: false, timeoutMs: 30_000 });
  await pgServer.restart();
  const backAt = Date.now();
  let recoveredAt = 0;
  for (let i = 0; i < 600 && !recoveredAt; i++) {
    const answer = await call(server.url, '/service/deals?limit=1', { timeoutMs: 30_000 });
    if (answer.status === 200) recoveredAt = Date.now();
    else await new Promise((done) => setTimeout(done, 100));
  }
  await new Promise((done) => setTimeout(done, 500));
  await traffic.stop();
  return { traffic, health, stoppedAt, backAt, recoveredAt };
}

describe.each(['SIGQUIT', 'SIGKILL'] as const)('PostgreSQL stopped under load (%s to the postmaster)', (how) => {
  it('answers 503 + Retry-After, reports /health down, stays up, and serves again by itself', async () => {
    const receiver = await startReceiver();
    const hook = await call(server.url, '/host/webhooks/new', { json: { name: `After ${how}`, url: receiver.url, events: ['service.deal.created'] } });
    expect(hook.status).toBe(200);
    const { traffic, health, stoppedAt, backAt, recoveredAt } = await outage(how);
    const { answers } = traffic;

    const faults = server.output().split('\n').filter((line) => line.includes('"msg":"unhandled error"') || line.includes('shutting down'));
    expect(faults, faults.join('\n').slice(0, 4000)).toEqual([]);
    expect(traffic.failures).toEqual([]);
    expect(answers.filter((a) => a.status !== 200 && a.status !== 503).map((a) => `${a.status} ${JSON.stringify(a.body)}`)).toEqual([]);
    const during = answers.filter((a) => a.at > stoppedAt + 1000 && a.at + a.ms < backAt);
    expect(during.length).toBeGreaterThan(SENDERS);
    for (const answer of during) expect(isUnavailable(answer), JSON.stringify(answer.body)).toBe(true);
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(REQUEST_BOUND_MS);

    expect(isUnavailable(health), JSON.stringify(health.body)).toBe(true);
    expect(server.child.exitCode).toBeNull();

    expect(recoveredAt).toBeGreaterThan(0);
    expect(recoveredAt - backAt).toBeLessThan(30_000);
    expect((await call(server.url, '/health', { auth: false })).status).toBe(200);
    const created = await call(server.url, '/service/deals/new', { json: { deal: { title: `After ${how}` } } });
    expect(created.status).toBe(200);
    // The inline worker's runner died with the connection; a new one delivers.
    const dealId = created.body.deal.id as number;
    await until(() => receiver.received.some((r) => r.json.deal?.id === dealId), 'an event made after the outage to be delivered', 60_000);
    console.log(
      `${process.env.FAULT_PG_BIN ?? 'embedded'} ${how}: ${answers.length} answers (${during.length} during the outage, all 503 + Retry-After, slowest ${Math.max(...during.map((a) => a.ms))} ms); ` +
        `/health ${health.status}; serving again ${recoveredAt - backAt} ms after PostgreSQL was back`,
    );
  });
});
