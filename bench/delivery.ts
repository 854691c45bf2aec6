/**
 * Outbound delivery: the real service (`src/server.ts`, WORKER=inline, default
 * concurrency) delivers events to a local node:http receiver through one
 * subscription. Events are committed by this process with writeDealEvents, the
 * way a deal service does, so "commit" is the moment the transaction returned.
 *
 * 1. latency: one event at a time, commit -> receiver's hands, p50/p95/p99;
 * 2. sustained: events are committed at a fixed rate (BENCH_RATE, default
 *    1,000/s) for BENCH_DURATION seconds; delivered/s over the window, latency
 *    under that load, and how far the receiver lags when producing stops. To
 *    measure delivery rather than the deal API, each 10 ms tick commits its
 *    events in one statement that writes exactly what writeDealEvents writes
 *    (outbox rows with real payloads, one deliver_event job each);
 * 3. drain: a backlog of BENCH_BACKLOG events committed with the worker off,
 *    then delivered as fast as it goes.
 *
 *   flock /tmp/bench.lock npx tsx bench/delivery.ts      (npm run bench:delivery)
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import type { Db } from '../src/db/database.js';
import { DELIVER_EVENT_TASK, EVENT_NAMES, writeDealEvents, type EventPayload } from '../src/events/events.js';
import { basicHeader, benchDatabase, progress, startService, writeReport, type RunningService } from './lib.js';

const RATE = Number(process.env.BENCH_RATE ?? 1000);
const DURATION = Number(process.env.BENCH_DURATION ?? 15);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 20_000);
const LATENCY_EVENTS = 500;
const DEALS = 500;
const TICK_MS = 10;

const round = (value: number, digits = 1) => Number(value.toFixed(digits));
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** Records when each event id arrived; answers 200 at once, keep-alive. */
function startReceiver() {
  const arrived = new Map<string, number>();
  const server = http.createServer((request, response) => {
    const id = String(request.headers['webhook-id']);
    request.resume();
    request.on('end', () => {
      if (!arrived.has(id)) arrived.set(id, performance.now());
      response.end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise<{ url: string; arrived: Map<string, number>; close(): void }>((done) =>
    server.listen(0, '127.0.0.1', () =>
      done({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, arrived, close: () => server.close() }),
    ),
  );
}

const admin = { id: null, name: 'bench' };

/** Commits `count` events in one transaction on consecutive deals; returns their ids and the commit time. */
async function commitEvents(db: Db, dealIds: number[], start: number, count: number) {
  const ids: string[] = [];
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < count; i++) {
      const dealId = dealIds[(start + i) % dealIds.length]!;
      const event = EVENT_NAMES[(start + i) % EVENT_NAMES.length]!;
      ids.push((await writeDealEvents(trx, [{ event, dealId, changedBy: admin }]))[0]!.id);
    }
  });
  return { ids, committedAt: performance.now() };
}

async function waitFor(arrived: Map<string, number>, ids: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ids.every((id) => arrived.has(id))) {
    if (Date.now() > deadline) throw new Error(`${ids.filter((id) => !arrived.has(id)).length} events not delivered in ${timeoutMs} ms`);
    await sleep(5);
  }
}

async function resetTables(db: Db): Promise<void> {
  await sql`truncate webhook_attempts, webhook_deliveries, webhook_subscriptions, event_outbox`.execute(db);
  await sql`delete from graphile_worker._private_jobs`.execute(db);
}

async function seedDeals(db: Db): Promise<number[]> {
  const existing = await db.selectFrom('deals').select('id').orderBy('id').limit(DEALS).execute();
  if (existing.length >= DEALS) return existing.map((row) => row.id);
  const pipeline = await db.selectFrom('pipelines').select('id').where('is_default', '=', true).executeTakeFirstOrThrow();
  const stage = await db.selectFrom('stages').select('id').where('pipeline_id', '=', pipeline.id).orderBy('position').executeTakeFirstOrThrow();
  const rows = Array.from({ length: DEALS - existing.length }, (_, i) => ({
    title: `Delivery bench deal ${i + 1}`,
    amount: String(1000 + i),
    currency: 'USD',
    pipeline_id: pipeline.id,
    stage_id: stage.id,
    status: 'open' as const,
  }));
  await db.insertInto('deals').values(rows).execute();
  return (await db.selectFrom('deals').select('id').orderBy('id').limit(DEALS).execute()).map((row) => row.id);
}

async function subscribe(service: RunningService, url: string): Promise<void> {
  const response = await fetch(`${service.url}/host/webhooks/new`, {
    method: 'POST',
    headers: { authorization: basicHeader, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench receiver', url, events: EVENT_NAMES }),
  });
  if (response.status !== 200) throw new Error(`subscribing failed: ${response.status} ${await response.text()}`);
}

async function measureLatency(db: Db, dealIds: number[], arrived: Map<string, number>) {
  const latencies: number[] = [];
  for (let i = 0; i < LATENCY_EVENTS; i++) {
    const { ids, committedAt } = await commitEvents(db, dealIds, i, 1);
    await waitFor(arrived, ids, 10_000);
    latencies.push(arrived.get(ids[0]!)! - committedAt);
    progress('latency', i + 1, LATENCY_EVENTS);
    await sleep(10);
  }
  return latencies;
}

/**
 * What writeDealEvents writes for `count` events (outbox rows, one job each),
 * in one statement: the payload is a real one with a fresh id, event and sequence.
 */
async function commitBulk(db: Db, template: EventPayload, start: number, count: number) {
  const payloads = Array.from({ length: count }, (_, i) => ({
    ...template,
    id: randomUUID(),
    event: EVENT_NAMES[(start + i) % EVENT_NAMES.length]!,
    timestamp: new Date().toISOString(),
    sequence: template.sequence + start + i + 1,
  }));
  await sql`
    with rows as (
      insert into event_outbox (id, event, deal_id, sequence, payload)
      select (p->>'id')::uuid, p->>'event', ${template.deal.id}, (p->>'sequence')::int, p
      from jsonb_array_elements(${JSON.stringify(payloads)}::jsonb) as p
      returning id
    )
    select count(*) from graphile_worker.add_jobs((select array_agg(row(${DELIVER_EVENT_TASK}, json_build_object('eventIds', json_build_array(id)),
      null, null, null, null, null, null)::graphile_worker.job_spec) from rows))`.execute(db);
  return { ids: payloads.map((p) => p.id), committedAt: performance.now() };
}

/** RATE events/s in 10 ms ticks; delivered/s is counted over the same window. */
async function measureSustained(db: Db, template: EventPayload, arrived: Map<string, number>) {
  const perTick = Math.max(1, Math.round((RATE * TICK_MS) / 1000));
  const commits: { ids: string[]; committedAt: number }[] = [];
  const started = performance.now();
  const end = started + DURATION * 1000;
  let tick = 0;
  const inFlight = new Set<Promise<void>>();
  while (performance.now() < end) {
    const due = started + tick * TICK_MS;
    if (performance.now() < due) await sleep(due - performance.now());
    const batch = commitBulk(db, template, tick * perTick, perTick).then((commit) => {
      commits.push(commit);
    });
    inFlight.add(batch);
    void batch.finally(() => inFlight.delete(batch));
    tick++;
    if (tick % 100 === 0) progress('sustained (s)', Math.min(DURATION, Math.round((performance.now() - started) / 1000)), DURATION);
  }
  await Promise.all(inFlight);
  const producedEnd = performance.now();
  const all = commits.flatMap((commit) => commit.ids);
  // Steady state: arrivals between the end of the first second and the end of producing.
  const windowStart = started + 1000;
  const deliveredInWindow = all.filter((id) => {
    const at = arrived.get(id) ?? Infinity;
    return at >= windowStart && at <= producedEnd;
  }).length;
  await waitFor(arrived, all, 120_000);
  const lastArrival = Math.max(...all.map((id) => arrived.get(id)!));
  const latencies = commits.flatMap((commit) => commit.ids.map((id) => arrived.get(id)! - commit.committedAt));
  return {
    produced: all.length,
    producedPerSecond: all.length / ((producedEnd - started) / 1000),
    deliveredPerSecond: deliveredInWindow / ((producedEnd - windowStart) / 1000),
    lagAfterStopMs: lastArrival - producedEnd,
    latencies,
  };
}

async function main(): Promise<void> {
  const bench = await benchDatabase('delivery');
  const db = bench.database.db;
  await resetTables(db);
  const dealIds = await seedDeals(db);
  const receiver = await startReceiver();
  const env = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };
  let service = await startService(bench.url, env);
  const rows: Record<string, string | number>[] = [];
  try {
    await subscribe(service, receiver.url);
    // Warm-up: connections, prepared statements, JIT.
    for (let i = 0; i < 10; i++) await waitFor(receiver.arrived, (await commitEvents(db, dealIds, i * 20, 20)).ids, 30_000);

    const latencies = await measureLatency(db, dealIds, receiver.arrived);
    rows.push({
      measurement: `commit -> receiver, one event at a time (${LATENCY_EVENTS})`,
      p50_ms: round(percentile(latencies, 50)),
      p95_ms: round(percentile(latencies, 95)),
      p99_ms: round(percentile(latencies, 99)),
      events_per_s: '-',
    });

    const template = await db.transaction().execute((trx) => writeDealEvents(trx, [{ event: 'service.deal.updated', dealId: dealIds[0]!, changedBy: admin }]).then(([payload]) => payload!));
    const sustained = await measureSustained(db, template, receiver.arrived);
    rows.push({
      measurement: `sustained: ${RATE}/s offered for ${DURATION} s (${sustained.produced} events, ${round(sustained.producedPerSecond, 0)}/s committed); receiver ${round(sustained.lagAfterStopMs, 0)} ms behind at the end`,
      p50_ms: round(percentile(sustained.latencies, 50)),
      p95_ms: round(percentile(sustained.latencies, 95)),
      p99_ms: round(percentile(sustained.latencies, 99)),
      events_per_s: round(sustained.deliveredPerSecond, 0),
    });

    // Backlog: committed while no worker runs, then drained.
    await service.stop();
    const backlog: string[] = [];
    for (let start = 0; start < BACKLOG; start += 500) {
      backlog.push(...(await commitEvents(db, dealIds, start, Math.min(500, BACKLOG - start))).ids);
      progress('backlog', backlog.length, BACKLOG);
    }
    const drainStart = performance.now();
    service = await startService(bench.url, env);
    await waitFor(receiver.arrived, backlog, 600_000);
    const firstArrival = Math.min(...backlog.map((id) => receiver.arrived.get(id)!));
    const lastArrival = Math.max(...backlog.map((id) => receiver.arrived.get(id)!));
    rows.push({
      measurement: `drain a backlog of ${BACKLOG} events (first to last arrival; service start excluded)`,
      p50_ms: '-',
      p95_ms: '-',
      p99_ms: '-',
      events_per_s: round(BACKLOG / ((lastArrival - firstArrival) / 1000), 0),
    });
    process.stderr.write(`drain: service start to last arrival ${round((lastArrival - drainStart) / 1000, 1)} s\n`);

    const failed = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '!=', 'succeeded').executeTakeFirstOrThrow();
    await writeReport('delivery', 'Outbound event delivery to a local receiver', rows, [
      `Targets: commit -> receiver p50 < 50 ms; sustained delivery >= 1,000 events/s.`,
      `Service: src/server.ts with WORKER=inline, WORKER_CONCURRENCY default, one subscription to all events; receiver: node:http on 127.0.0.1 in the bench process.`,
      `Deliveries not succeeded at the end: ${Number(failed.n)}.`,
    ]);
  } finally {
    await service.stop();
    receiver.close();
    await bench.stop();
  }
}

await main();
