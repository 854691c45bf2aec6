/**
 * Inbound webhook intake under load: 32 concurrent senders, each its own source,
 * POST signed receives that each create a deal (with a contact from a seeded pool
 * of emails, so some contacts are new and some reused). Compared with the
 * single-row INSERT rate `pgbench` reaches against the same PostgreSQL server in
 * the same run. Afterwards every 200 answer is checked for its deal.
 *
 * Two ceilings are measured beside it, to show what this machine allows: HTTP
 * alone (the same endpoint answering 404 for an unknown source, no database
 * work) and the database alone (bench/inbound-floor.ts: pgbench writing what
 * receives write, in batches, with no service in front).
 *
 *   flock /tmp/bench.lock npx tsx bench/inbound.ts      (npm run bench:inbound)
 *
 * Env: BENCH_DURATION (seconds per measured round, three rounds, default 15), BENCH_WORKER=off (intake only: no
 * delivery worker in the service), BENCH_DATABASE_URL (else embedded
 * PostgreSQL under bench/.data/inbound, emptied first). Needs `pgbench` (Debian: postgresql-client).
 */
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import { sql } from 'kysely';
import { databaseFloor, pgbenchTps, type FloorResult } from './inbound-floor.js';
import { basicHeader, benchDatabase, load, median, progress, startService, writeReport } from './lib.js';

const SENDERS = 32;
const DURATION = Number(process.env.BENCH_DURATION ?? 15);
const ROUNDS = 3;
const PGBENCH_SECONDS = 10;
const EMAIL_POOL = 2000;
const TARGET_P99_MS = 50;
const TARGET_RATIO = 0.3;

/** mulberry32: a fixed seed gives the same sequence of bodies every run. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pgbenchPath(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v pgbench'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

/** Single-row INSERTs from as many clients as there are senders; returns transactions per second. */
async function pgbenchInsertRate(pgbench: string, url: string): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'pgbench-'));
  const script = join(dir, 'insert.sql');
  await writeFile(script, "\\set n random(1, 1000000)\nINSERT INTO bench_single_row_insert (n, label) VALUES (:n, 'pgbench row');\n");
  try {
    return pgbenchTps(pgbench, ['-c', String(SENDERS), '-j', '2', '-T', String(PGBENCH_SECONDS), '-f', script], url);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const round = (value: number, digits = 1) => Number(value.toFixed(digits));

async function main(): Promise<void> {
  const pgbench = pgbenchPath();
  if (!pgbench) {
    process.stderr.write(
      'pgbench was not found on PATH: install it (Debian/Ubuntu: apt-get install postgresql-client) to get the INSERT-rate baseline.\n' +
        'Continuing with the receive measurement only; the ratio target cannot be judged.\n',
    );
  }

  // Every run starts from an empty database: the deals earlier runs wrote would make each run slower than the last.
  const bench = await benchDatabase('inbound', {}, { fresh: true });
  await sql`create table if not exists bench_single_row_insert (id bigint generated always as identity primary key, n integer not null, label text not null, created_at timestamptz not null default now())`.execute(bench.database.db);
  // The per-source limit guards production senders; here it would only cap the measurement.
  const worker = process.env.BENCH_WORKER === 'off' ? 'off' : 'inline';
  const service = await startService(bench.url, { INBOUND_RATE_LIMIT: '100000', WORKER: worker });
  try {
    // One source per sender, created through the API: their secrets are shown only now.
    const sources: { id: string; secret: string }[] = [];
    for (let i = 0; i < SENDERS; i++) {
      const res = await fetch(`${service.url}/service/settings/inbound-webhooks/new`, {
        method: 'POST',
        headers: { authorization: basicHeader, 'content-type': 'application/json' },
        body: JSON.stringify({ source: { name: `bench sender ${i + 1}` } }),
      });
      if (res.status !== 200) throw new Error(`creating a source failed: ${res.status} ${await res.text()}`);
      const { source } = (await res.json()) as { source: { id: string; secret: string } };
      sources.push(source);
    }

    const random = prng(20261122);
    const runId = Date.now().toString(36);
    let sequence = 0;
    let assigned = 0;
    const dealIds = new Set<number>();
    const statuses = new Map<number, number>();

    /** The next signed receive of the sender whose autocannon context this is (each connection keeps one source). */
    const signedReceive = (request: autocannon.Request, context: object): autocannon.Request => {
      const perSender = context as { source?: { id: string; secret: string } };
      perSender.source ??= sources[assigned++ % sources.length];
      const source = perSender.source!;
      const n = ++sequence;
      const body = JSON.stringify({
        title: `Bench deal ${runId}-${n}`,
        amount: Math.round(random() * 10_000_000) / 100,
        close_date: `2027-${String(1 + Math.floor(random() * 12)).padStart(2, '0')}-${String(1 + Math.floor(random() * 28)).padStart(2, '0')}`,
        contact: { email: `buyer-${Math.floor(random() * EMAIL_POOL)}@bench.example`, first_name: 'Bench', last_name: `Buyer ${n}` },
        custom_fields: { campaign: `c-${n % 17}`, score: Math.floor(random() * 100) },
      });
      const signature = `sha256=${createHmac('sha256', source.secret).update(body).digest('hex')}`;
      return {
        ...request,
        path: `/service/settings/inbound-webhooks/${source.id}/receive`,
        headers: { 'content-type': 'application/json', 'x-service-signature': signature },
        body,
      };
    };
    const requests: autocannon.Request[] = [
      {
        method: 'POST',
        setupRequest: signedReceive,
        onResponse: (status: number, body: string) => {
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (status === 200) dealIds.add((JSON.parse(body) as { deal: { id: number } }).deal.id);
        },
      },
    ];

    process.stderr.write(`warm-up 3 s ...\n`);
    await load({ url: service.url, connections: SENDERS, duration: 3, requests });
    const warmup200 = statuses.get(200) ?? 0;

    const before = pgbench ? await pgbenchInsertRate(pgbench, bench.url) : undefined;
    // Three measured rounds; the report keeps the median of each figure (one round's p99 moves by a few ms).
    const rounds: { rate: number; p50: number; p99: number }[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const okBefore = statuses.get(200) ?? 0;
      const result = await load({ url: service.url, connections: SENDERS, duration: DURATION, requests });
      rounds.push({ rate: ((statuses.get(200) ?? 0) - okBefore) / DURATION, p50: result.p50, p99: result.p99 });
      progress(`receives: ${SENDERS} senders, ${DURATION} s rounds`, round, ROUNDS);
    }
    const receiveRate = median(rounds.map((r) => r.rate));
    const p50 = median(rounds.map((r) => r.p50));
    const p99 = median(rounds.map((r) => r.p99));
    const after = pgbench ? await pgbenchInsertRate(pgbench, bench.url) : undefined;

    // HTTP alone: a signed body of the same size to an unknown source is answered 404 without database work (the miss is cached).
    const unknown = `/service/settings/inbound-webhooks/00000000-0000-4000-8000-000000000000/receive`;
    const httpOnly = await load({
      url: service.url,
      connections: SENDERS,
      duration: 5,
      requests: [{ method: 'POST', setupRequest: (request, context) => ({ ...signedReceive(request, context), path: unknown }) }],
    });

    // Every 200 must have its deal, created by one of this run's sources.
    const ids = [...dealIds];
    const found = await bench.database.db
      .selectFrom('deals')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('id', 'in', ids.length ? ids : [0])
      .where('source_id', 'in', sources.map((s) => s.id))
      .executeTakeFirstOrThrow();
    const total200 = statuses.get(200) ?? 0;
    const verified = found.n === ids.length && ids.length === total200;

    const insertRate = before !== undefined && after !== undefined ? Math.max(before, after) : undefined;
    const ratio = insertRate ? receiveRate / insertRate : undefined;
    const other = [...statuses].filter(([status]) => status !== 200).map(([status, count]) => `${status}×${count}`).join(', ') || 'none';

    // The database alone, with the service stopped so it has the machine to itself.
    for (const source of sources) {
      await fetch(`${service.url}/service/settings/inbound-webhooks/${source.id}`, { method: 'DELETE', headers: { authorization: basicHeader } });
    }
    await service.stop();
    const floor: FloorResult[] = pgbench
      ? await databaseFloor(bench.database.db, bench.url, pgbench, PGBENCH_SECONDS, (done, total) => progress('database alone (pgbench, batches)', done, total))
      : [];
    const best = Math.max(...floor.map((f) => f.receivesPerSecond));
    // Both ceilings take the whole machine at their rate, so a receive needs at least the sum of their times.
    const ceiling = floor.length ? 1 / (1 / best + 1 / httpOnly.rps) : undefined;
    const share = (rate: number) => (insertRate ? ` (${round((rate / insertRate) * 100)}% of pgbench)` : '');

    await writeReport(
      worker === 'inline' ? 'inbound' : 'inbound-intake',
      `Inbound webhook receives (signed, each creating a deal with a contact${worker === 'inline' ? '' : '; intake only'})`,
      [
        { metric: 'senders (connections), one source each', value: SENDERS },
        { metric: 'receives answered 200 per second (median of rounds)', value: round(receiveRate) },
        { metric: 'latency p50 (ms, median of rounds)', value: p50 },
        { metric: 'latency p99 (ms, median of rounds)', value: p99 },
        { metric: 'rounds: rate / p50 / p99', value: rounds.map((r) => `${round(r.rate)} / ${r.p50} / ${r.p99}`).join('; ') },
        { metric: 'pgbench single-row INSERT tps, before / after', value: insertRate ? `${round(before!)} / ${round(after!)}` : 'pgbench missing' },
        { metric: 'receive rate / best pgbench rate', value: ratio !== undefined ? `${round(ratio * 100)}%` : 'n/a' },
        { metric: '200 answers (warm-up + measured)', value: total200 },
        { metric: 'deals found for them', value: found.n },
        { metric: 'other statuses', value: other },
        { metric: 'ceiling: HTTP alone (same endpoint, 404 for an unknown source) per second', value: round(httpOnly.rps) },
        ...floor.map((f) => ({
          metric: `ceiling: database alone, batches of ${f.batch} (pgbench, ${f.clients} clients), receives per second`,
          value: `${round(f.receivesPerSecond)}${share(f.receivesPerSecond)}`,
        })),
        { metric: 'ceiling: both, 1 / (1/best database + 1/HTTP), receives per second', value: ceiling ? `${round(ceiling)}${share(ceiling)}` : 'n/a' },
      ],
      [
        `p99 target < ${TARGET_P99_MS} ms: ${p99 < TARGET_P99_MS ? 'met' : 'MISSED'} (median of ${ROUNDS} rounds of ${DURATION} s).`,
        `rate target ≥ ${TARGET_RATIO * 100}% of pgbench: ${ratio === undefined ? 'not judged (pgbench missing)' : ratio >= TARGET_RATIO ? 'met' : 'MISSED'}.`,
        `every 200 has its deal: ${verified ? 'yes' : 'NO'} (${ids.length} distinct deal ids, ${found.n} found, ${warmup200} from the warm-up).`,
        `pgbench: ${SENDERS} clients, -j 2, ${PGBENCH_SECONDS} s, one INSERT of one row per transaction into a table with an identity key, against the same server; the higher of the runs before and after is used.`,
        `The service runs as in production (src/server.ts, default pool, delivery worker ${worker === 'inline' ? 'inline' : 'off: intake only, as on a node with WORKER=off'}) except INBOUND_RATE_LIMIT=100000, so the per-source limit does not cap the measurement; each receive writes the deal, stage history, contact, committee row, two outbox events, the replay key and the receive log in one transaction, shared with the receives arriving alongside (one delivery job per transaction).`,
        `Ceilings: HTTP alone is autocannon and the service with no database work; the database alone is pgbench running bench/inbound-floor.sql (a batch of receives' rows in one statement, no reads, fewer writes than the service makes) with the service stopped. Each takes both cores at its rate, so no service on this machine stores receives faster than the combined ceiling.`,
        `Command: ${worker === 'inline' ? '' : 'BENCH_WORKER=off '}flock /tmp/bench.lock npx tsx bench/inbound.ts`,
      ],
    );
    if (!verified) process.exitCode = 1;
  } finally {
    await service.stop();
    await bench.stop();
  }
}

await main();
