import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrap } from '../src/host/builtin/index.js';
import { ADMIN, basic, createTestDatabase } from './helpers/app.js';

/**
 * Two real service processes (`src/server.ts`, as `npm start` runs it) on one
 * database behave as one service: the per-source inbound limit holds for the
 * pair, and a source disabled through one is refused by the other at once.
 */
const APP_KEY = '07'.repeat(32);
const LIMIT = 20; // receives per second per source, for the whole service (bursts of twice that)

interface Server {
  url: string;
  child: ChildProcess;
}

async function startServer(databaseUrl: string): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { ...process.env, DATABASE_URL: databaseUrl, APP_KEY, PORT: '0', WORKER: 'off', LOG_LEVEL: 'silent', INBOUND_RATE_LIMIT: String(LIMIT) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((done, fail) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) done(match[1]!);
    });
    child.once('exit', (code) => fail(new Error(`server exited with ${code}: ${out}`)));
  });
  return { url, child };
}

let servers: Server[] = [];
let drop: () => Promise<void>;
beforeAll(async () => {
  const test = await createTestDatabase();
  drop = test.drop;
  await bootstrap(test.database.db, ADMIN);
  servers = await Promise.all([startServer(test.url), startServer(test.url)]);
  // Each process announces itself every 3 s; give both time to see the other.
  await new Promise((done) => setTimeout(done, 4_000));
}, 60_000);
afterAll(async () => {
  for (const { child } of servers) child.kill('SIGTERM');
  await Promise.all(servers.map(({ child }) => new Promise((done) => (child.exitCode !== null ? done(null) : child.once('exit', done)))));
  await drop();
});

const admin = { authorization: basic(ADMIN) };

async function createSource(server: Server): Promise<{ id: string; secret: string }> {
  const res = await fetch(`${server.url}/service/settings/inbound-webhooks/new`, {
    method: 'POST',
    headers: { ...admin, 'content-type': 'application/json' },
    body: JSON.stringify({ source: { name: 'Shared source' } }),
  });
  return (await res.json()).source;
}

function receive(server: Server, source: { id: string; secret: string }, title: string): Promise<Response> {
  const body = JSON.stringify({ title });
  const signature = `sha256=${createHmac('sha256', source.secret).update(body).digest('hex')}`;
  return fetch(`${server.url}/service/settings/inbound-webhooks/${source.id}/receive`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-signature': signature },
    body,
  });
}

describe('two service processes on one database', () => {
  it('hold the per-source limit for the pair, not for each', async () => {
    const source = await createSource(servers[0]!);
    const started = Date.now();
    const statuses: number[] = [];
    // 4 × the burst, alternating between the processes as a round-robin load balancer would.
    for (let i = 0; i < 8 * LIMIT; i += 2) {
      const pair = await Promise.all([receive(servers[0]!, source, `R${i}`), receive(servers[1]!, source, `R${i + 1}`)]);
      statuses.push(...pair.map((res) => res.status));
    }
    const seconds = (Date.now() - started) / 1000;
    const admitted = statuses.filter((status) => status === 200).length;
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    // The pair's allowance: a burst of 2 × LIMIT, then LIMIT per second. Each process alone would allow twice that.
    expect(admitted).toBeLessThanOrEqual(2 * LIMIT + Math.ceil(LIMIT * seconds) + 2);
    expect(admitted).toBeGreaterThanOrEqual(2 * LIMIT - 2);
  });

  it('refuses a source disabled through one process at the other at once', async () => {
    const source = await createSource(servers[0]!);
    expect((await receive(servers[1]!, source, 'Before')).status).toBe(200); // the other process now holds it in its cache
    const disabled = await fetch(`${servers[0]!.url}/service/settings/inbound-webhooks/${source.id}/edit`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ source: { name: 'Shared source', enabled: false } }),
    });
    expect(disabled.status).toBe(200);
    const since = Date.now();
    let status = 0;
    // Its cache alone would serve the old source for at least half a second more.
    while (Date.now() - since < 300) {
      status = (await receive(servers[1]!, source, 'After')).status;
      if (status === 404) break;
      await new Promise((done) => setTimeout(done, 20));
    }
    expect(status).toBe(404);
  });
});
