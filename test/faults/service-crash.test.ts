import { createHmac } from 'node:crypto';
import { rm } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { EVENT_NAMES } from '../../src/events/events.js';
import { startReceiver, until } from '../helpers/delivery.js';
import { spawnServer, stopAll, type ChildService } from '../helpers/server-process.js';
import { ADMIN, call } from './helpers/http.js';
import { embeddedUrl, postmaster, tempDataDir, waitGone } from './helpers/postgres.js';

/**
 * kill -9 of the service and of its embedded PostgreSQL (as `npm start` runs
 * them, with a DATA_DIR of this test's own) under 16 concurrent signed inbound
 * senders, then a restart on the same DATA_DIR: every acknowledged receive has
 * its deal exactly once, and every event of those deals reaches the receiver
 * within 60 s of the restart.
 */
const SENDERS = 16;
const LOAD_MS = 4000;

let dataDir: string | undefined;
afterAll(async () => {
  await stopAll();
  // A postmaster left by a failed run would hold the directory; it is ours to end.
  const left = dataDir ? await postmaster(dataDir) : undefined;
  if (left) process.kill(left.pid, 'SIGKILL');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function serverEnv(dir: string) {
  return { DATA_DIR: dir, ADMIN_PASSWORD: ADMIN.password, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', INBOUND_RATE_LIMIT: '100000' };
}

/** A restart can race the killed postmaster's backends still releasing shared memory: a few tries. */
async function restart(dir: string): Promise<ChildService> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnServer(serverEnv(dir));
    } catch (error) {
      if (attempt >= 5) throw error;
      await new Promise((done) => setTimeout(done, 2000));
    }
  }
}

describe('kill -9 of the service and its PostgreSQL under inbound load', () => {
  it('keeps every acknowledged receive exactly once and delivers all their events after a restart', async () => {
    dataDir = await tempDataDir('deal-fault-crash-');
    const first = await spawnServer(serverEnv(dataDir));
    // Slow answers before the kill keep deliveries in flight when the worker dies: they must be made again.
    let killed = false;
    const receiver = await startReceiver(() => ({ status: 200, delay: killed ? 0 : 1500 }));
    const hook = await call(first.url, '/host/webhooks/new', { json: { name: 'Crash receiver', url: receiver.url, events: EVENT_NAMES } });
    expect(hook.status).toBe(200);
    const created = await call(first.url, '/service/settings/inbound-webhooks/new', { json: { source: { name: 'Crash source' } } });
    expect(created.status).toBe(200);
    const source = created.body.source as { id: string; secret: string };
    const endpoint = `${first.url}/service/settings/inbound-webhooks/${source.id}/receive`;

    const acked: string[] = [];
    const unexpected: string[] = [];
    let running = true;
    const senders = Array.from({ length: SENDERS }, async (_, sender) => {
      for (let i = 0; running && i < 100_000; i++) {
        const externalId = `crash-${sender}-${i}`;
        const body = JSON.stringify({ external_id: externalId, title: `Crash ${sender}-${i}`, amount: 100 + i });
        const signature = `sha256=${createHmac('sha256', source.secret).update(body).digest('hex')}`;
        try {
          const res = await fetch(endpoint, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-service-signature': signature },
            body,
            signal: AbortSignal.timeout(20_000),
          });
          if (res.status === 200) acked.push(externalId);
          else if (res.status !== 503) unexpected.push(`${res.status} ${await res.text()}`);
          else await res.text();
        } catch {
          return; // the service is gone: this sender stops, its last receive unacknowledged
        }
      }
    });

    await new Promise((done) => setTimeout(done, LOAD_MS));
    const pgProcess = await postmaster(dataDir);
    expect(pgProcess).toBeDefined();
    first.child.kill('SIGKILL');
    process.kill(pgProcess!.pid, 'SIGKILL');
    killed = true;
    await first.exited;
    await waitGone(pgProcess!.pid);
    const ackedBeforeKill = acked.length;
    running = false;
    await Promise.all(senders);
    expect(unexpected).toEqual([]);
    expect(ackedBeforeKill).toBeGreaterThan(SENDERS);

    const second = await restart(dataDir);
    const restartedAt = Date.now();
    const client = new pg.Client({ connectionString: await embeddedUrl(dataDir) });
    await client.connect();
    try {
      const { rows } = await client.query<{ external_id: string; deals: number; ids: number[] }>(
        'select external_id, count(*)::int as deals, array_agg(id) as ids from deals where source_id = $1 group by external_id',
        [source.id],
      );
      const byExternalId = new Map(rows.map((row) => [row.external_id, row]));
      expect(acked.filter((id) => byExternalId.get(id)?.deals !== 1)).toEqual([]);
      expect(rows.filter((row) => row.deals !== 1)).toEqual([]);
      const titles = await client.query<{ title: string; deals: number }>(
        'select title, count(*)::int as deals from deals where source_id = $1 group by title having count(*) > 1',
        [source.id],
      );
      expect(titles.rows).toEqual([]);

      const dealIds = acked.flatMap((id) => byExternalId.get(id)!.ids);
      const events = await client.query<{ id: string }>('select id from event_outbox where deal_id = any($1::bigint[])', [dealIds]);
      expect(events.rows.length).toBeGreaterThanOrEqual(dealIds.length);
      const wanted = new Set(events.rows.map((row) => row.id));
      await until(
        () => [...wanted].every((id) => receiver.received.some((r) => r.headers['webhook-id'] === id)),
        `all ${wanted.size} events of acknowledged receives at the receiver`,
        60_000,
      );
      const deliveredIn = Date.now() - restartedAt;
      expect(deliveredIn).toBeLessThan(60_000);
      // Deliveries in flight at the kill (received, never answered) were made again after the restart, same event id.
      const times = new Map<string, number>();
      for (const r of receiver.received) times.set(String(r.headers['webhook-id']), (times.get(String(r.headers['webhook-id'])) ?? 0) + 1);
      const redelivered = [...wanted].filter((id) => (times.get(id) ?? 0) > 1).length;
      expect(redelivered).toBeGreaterThan(0);
      console.log(
        `${SENDERS} senders, ${ackedBeforeKill} acknowledged receives before kill -9 of service + postmaster; ` +
          `after restart ${rows.length} deals for the source (each external_id once), ${wanted.size} events all delivered ${deliveredIn} ms after the restart (${redelivered} in flight at the kill, delivered again)`,
      );
    } finally {
      await client.end();
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});
