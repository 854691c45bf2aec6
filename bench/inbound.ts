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
 *
 * Profiling (both off by default; they cost some throughput, so judge rates without them):
 *   BENCH_CPU_PROF=1   the service runs with `node --cpu-prof`; the .cpuprofile lands in bench/.data/profiles
 *                      (open it in Chrome DevTools or speedscope).
 *   BENCH_PG_STAT=1    the embedded server loads pg_stat_statements; the statements of the measured rounds,
 *                      by total time, are written to bench/.data/profiles/inbound-statements.md.
 */
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import { sql } from 'kysely';
import { FLOOR_RUNS, floorRunner, pgbenchTps, type FloorResult } from './inbound-floor.js';
import { basicHeader, benchDatabase, cpuLine, cpuPerRequest, cpuTimes, load, median, medianCpu, prng, progress, ROOT, startService, writeReport, type CpuTimes } from './lib.js';

const SENDERS = 32;
const DURATION = Number(process.env.BENCH_DURATION ?? 15);
const ROUNDS = 3;
const PGBENCH_SECONDS = 10;
const HTTP_SECONDS = 5;
/** The database-alone run that sets the ceiling: the fastest of FLOOR_RUNS in every run so far. */
const CEILING_BATCH = { batch: 32, clients: 2 };
const EMAIL_POOL = 2000;
const TARGET_P99_MS = 50;
/** The rate target is a share of this machine's ceiling measured in the same run (HTTP alone and the database alone). */
const TARGET_RATIO = 0.4;
const CPU_PROF = process.env.BENCH_CPU_PROF === '1';
const PG_STAT = process.env.BENCH_PG_STAT === '1' && !process.env.BENCH_DATABASE_URL;
const PROFILES = join(ROOT, 'bench', '.data', 'profiles');

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

/** The measured rounds' statements by total execution time, per receive (pg_stat_statements). */
async function writeStatementStats(db: import('../src/db/database.js').Db, receives: number): Promise<void> {
  const rows = await sql<{ calls: number; total_ms: number; mean_ms: number; rows: number; wal_bytes: number; query: string }>`
    select calls, round(total_exec_time::numeric, 1)::float as total_ms, round(mean_exec_time::numeric, 3)::float as mean_ms, rows,
           wal_bytes::bigint as wal_bytes, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) as query
    from pg_stat_statements where query not ilike '%pg_stat_statements%' order by total_exec_time desc limit 30`.execute(db);
  const total = rows.rows.reduce((sum, r) => sum + r.total_ms, 0);
  const lines = [
    `# Statements during the measured rounds (${receives} receives; top 30 by total time, ${round(total)} ms in all, ${round((total / Math.max(receives, 1)) * 1000)} µs per receive)`,
    '',
    '| calls | total ms | mean ms | rows | µs per receive | WAL bytes per call | statement |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.rows.map(
      (r) =>
        `| ${r.calls} | ${r.total_ms} | ${r.mean_ms} | ${r.rows} | ${round((r.total_ms / Math.max(receives, 1)) * 1000)} | ${Math.round(r.wal_bytes / Math.max(r.calls, 1))} | ${r.query.replace(/\|/g, '\\|')} |`,
    ),
  ];
  await mkdir(PROFILES, { recursive: true });
  await writeFile(join(PROFILES, 'inbound-statements.md'), `${lines.join('\n')}\n`);
  process.stderr.write(`pg_stat_statements: ${join(PROFILES, 'inbound-statements.md')}\n`);
}

async function main(): Promise<void> {
  const pgbench = pgbenchPath();
  if (!pgbench) {
    process.stderr.write(
      'pgbench was not found on PATH: install it (Debian/Ubuntu: apt-get install postgresql-client) to get the INSERT-rate baseline.\n' +
        'Continuing with the receive measurement only; the ratio target cannot be judged.\n',
    );
  }

  // Every run starts from an empty database: the deals earlier runs wrote would make each run slower than the last.
  const bench = await benchDatabase('inbound', PG_STAT ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' } : {}, { fresh: true });
  if (PG_STAT) await sql`create extension if not exists pg_stat_statements`.execute(bench.database.db);
  if (CPU_PROF) {
    await mkdir(PROFILES, { recursive: true });
    process.env.BENCH_NODE_ARGS = `${process.env.BENCH_NODE_ARGS ?? ''} --cpu-prof --cpu-prof-dir=${PROFILES}`;
  }
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
    if (PG_STAT) await sql`select pg_stat_statements_reset()`.execute(bench.database.db);

    // HTTP alone: a signed body of the same size to an unknown source is answered 404 without database work (the miss is cached).
    const unknown = `/service/settings/inbound-webhooks/00000000-0000-4000-8000-000000000000/receive`;
    const httpAlone = () =>
      load({
        url: service.url,
        connections: SENDERS,
        duration: HTTP_SECONDS,
        requests: [{ method: 'POST', setupRequest: (request, context) => ({ ...signedReceive(request, context), path: unknown }) }],
      });
    const floorRun = pgbench ? await floorRunner(bench.database.db, bench.url, pgbench) : undefined;

    // Three measured rounds; each measures the receives, then HTTP alone, then the database alone (batches of 32, the
    // service idle), so each round's ratio compares figures taken within half a minute of each other: other work on the
    // machine moves all three together. The report keeps the median of each figure.
    const rounds: {
      rate: number;
      p50: number;
      p99: number;
      http: number;
      database?: number;
      ceiling?: number;
      ofCeiling?: number;
      cpu: { receive: CpuTimes; http: CpuTimes; database?: CpuTimes };
    }[] = [];
    const pid = service.child.pid;
    for (let round = 1; round <= ROUNDS; round++) {
      const okBefore = statuses.get(200) ?? 0;
      let cpuBefore = cpuTimes(pid);
      const result = await load({ url: service.url, connections: SENDERS, duration: DURATION, requests });
      const receiveCpu = cpuPerRequest(cpuBefore, cpuTimes(pid), result.requests);
      const rate = ((statuses.get(200) ?? 0) - okBefore) / DURATION;
      if (PG_STAT && round === ROUNDS) await writeStatementStats(bench.database.db, (statuses.get(200) ?? 0) - warmup200);
      cpuBefore = cpuTimes(pid);
      const httpResult = await httpAlone();
      const httpCpu = cpuPerRequest(cpuBefore, cpuTimes(pid), httpResult.requests);
      const http = httpResult.rps;
      cpuBefore = cpuTimes(pid);
      const database = floorRun ? await floorRun.run(CEILING_BATCH.batch, CEILING_BATCH.clients, PGBENCH_SECONDS) : undefined;
      const databaseCpu = database ? cpuPerRequest(cpuBefore, cpuTimes(pid), database * PGBENCH_SECONDS) : undefined;
      // Both ceilings take the whole machine at their rate, so a receive needs at least the sum of their times.
      const ceiling = database ? 1 / (1 / database + 1 / http) : undefined;
      rounds.push({
        rate,
        p50: result.p50,
        p99: result.p99,
        http,
        database,
        ceiling,
        ofCeiling: ceiling ? rate / ceiling : undefined,
        cpu: { receive: receiveCpu, http: httpCpu, database: databaseCpu },
      });
      progress(`rounds: receives ${DURATION} s, HTTP alone ${HTTP_SECONDS} s, database alone ${PGBENCH_SECONDS} s`, round, ROUNDS);
    }
    const receiveRate = median(rounds.map((r) => r.rate));
    const p50 = median(rounds.map((r) => r.p50));
    const p99 = median(rounds.map((r) => r.p99));
    const httpRate = median(rounds.map((r) => r.http));
    const ofCeiling = floorRun ? median(rounds.map((r) => r.ofCeiling!)) : undefined;
    const ceiling = floorRun ? median(rounds.map((r) => r.ceiling!)) : undefined;
    const after = pgbench ? await pgbenchInsertRate(pgbench, bench.url) : undefined;

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

    // The other batch sizes, for the record, with the service stopped.
    for (const source of sources) {
      await fetch(`${service.url}/service/settings/inbound-webhooks/${source.id}`, { method: 'DELETE', headers: { authorization: basicHeader } });
    }
    await service.stop();
    const floor: FloorResult[] = [];
    if (floorRun) {
      for (const [i, run] of FLOOR_RUNS.entries()) {
        floor.push({ ...run, receivesPerSecond: await floorRun.run(run.batch, run.clients, PGBENCH_SECONDS) });
        progress('database alone, service stopped (pgbench, batches)', i + 1, FLOOR_RUNS.length);
      }
      await floorRun.close();
    }
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
        { metric: 'ceiling: HTTP alone (same endpoint, 404 for an unknown source) per second, median of rounds', value: round(httpRate) },
        {
          metric: `ceiling: database alone, batches of ${CEILING_BATCH.batch} (pgbench, ${CEILING_BATCH.clients} clients, service idle), median of rounds`,
          value: floorRun ? `${round(median(rounds.map((r) => r.database!)))}${share(median(rounds.map((r) => r.database!)))}` : 'n/a',
        },
        { metric: 'ceiling: both, 1 / (1/database + 1/HTTP), median of rounds', value: ceiling ? `${round(ceiling)}${share(ceiling)}` : 'n/a' },
        {
          metric: 'rounds: receives / HTTP alone / database alone / ceiling / receives as % of ceiling',
          value: rounds
            .map((r) => `${round(r.rate)} / ${round(r.http)} / ${r.database ? round(r.database) : 'n/a'} / ${r.ceiling ? round(r.ceiling) : 'n/a'} / ${r.ofCeiling ? `${round(r.ofCeiling * 100)}%` : 'n/a'}`)
            .join('; '),
        },
        { metric: '**receives as % of the ceiling (median of rounds; the target)**', value: ofCeiling !== undefined ? `**${round(ofCeiling * 100)}%**` : 'n/a' },
        { metric: 'CPU µs per receive answered (median of rounds)', value: cpuLine(medianCpu(rounds.map((r) => r.cpu.receive))) },
        { metric: 'CPU µs per request, HTTP alone (median of rounds)', value: cpuLine(medianCpu(rounds.map((r) => r.cpu.http))) },
        {
          metric: 'CPU µs per receive, database alone (PostgreSQL only; pgbench not counted; median of rounds)',
          value: floorRun ? String(median(rounds.map((r) => r.cpu.database?.postgres ?? 0))) : 'n/a',
        },
        ...floor.map((f) => ({
          metric: `database alone after the rounds (service stopped), batches of ${f.batch} (pgbench, ${f.clients} clients), receives per second`,
          value: `${round(f.receivesPerSecond)}${share(f.receivesPerSecond)}`,
        })),
      ],
      [
        `p99 target < ${TARGET_P99_MS} ms: ${p99 < TARGET_P99_MS ? 'met' : 'MISSED'} (median of ${ROUNDS} rounds of ${DURATION} s).`,
        `rate target ≥ ${TARGET_RATIO * 100}% of the ceiling measured in the same rounds: ${ofCeiling === undefined ? 'not judged (pgbench missing)' : ofCeiling >= TARGET_RATIO ? 'met' : 'MISSED'} (${ofCeiling !== undefined ? round(ofCeiling * 100) : 'n/a'}%). Against pgbench's single-row INSERT: ${ratio === undefined ? 'n/a' : `${round(ratio * 100)}%`}.`,
        `every 200 has its deal: ${verified ? 'yes' : 'NO'} (${ids.length} distinct deal ids, ${found.n} found, ${warmup200} from the warm-up).`,
        `pgbench: ${SENDERS} clients, -j 2, ${PGBENCH_SECONDS} s, one INSERT of one row per transaction into a table with an identity key, against the same server; the higher of the runs before and after is used.`,
        `The service runs as in production (src/server.ts, default pool, delivery worker ${worker === 'inline' ? 'inline' : 'off: intake only, as on a node with WORKER=off'}) except INBOUND_RATE_LIMIT=100000, so the per-source limit does not cap the measurement; each receive writes the deal, stage history, contact, committee row, two outbox events, the replay key and the receive log in one transaction, shared with the receives arriving alongside (one delivery job per transaction).`,
        `Ceilings, measured in every round right after its receives: HTTP alone is autocannon and the service with no database work (${HTTP_SECONDS} s); the database alone is pgbench running bench/inbound-floor.sql (a batch of ${CEILING_BATCH.batch} receives' rows in one statement, no reads, fewer writes than the service makes; ${PGBENCH_SECONDS} s) with the service idle. Each takes both cores at its rate, so no service on this machine stores receives faster than the combined ceiling. Other work on the machine moves all three, so the ratio of a round is steadier than any absolute figure.`,
        `CPU per request is read from /proc around each run (utime + stime of the service, of every PostgreSQL process including exited backends, and of this process, which runs autocannon), divided by the requests sent. A receive's figure less HTTP alone's is the service's and PostgreSQL's work for the receive itself; PostgreSQL's figure less the database alone's is what the service's statements cost beyond the rows a receive must write.`,
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
