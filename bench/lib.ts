/**
 * Shared pieces of the benchmarks: a persistent embedded PostgreSQL under
 * bench/.data, the real service started as a child process against it,
 * autocannon runs repeated for medians, progress lines and a report file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pino from 'pino';
import { createDatabase, type Database } from '../src/db/database.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { bootstrap } from '../src/host/builtin/bootstrap.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const BENCH_ADMIN = { username: 'admin', password: 'bench-admin-password' };
export const BENCH_APP_KEY = '0'.repeat(64);
export const basicHeader = `Basic ${Buffer.from(`${BENCH_ADMIN.username}:${BENCH_ADMIN.password}`).toString('base64')}`;

export function progress(label: string, done: number, total: number): void {
  const pct = total ? ((done / total) * 100).toFixed(1) : '100';
  process.stderr.write(`\r${label}: ${done.toLocaleString('en')}/${total.toLocaleString('en')} (${pct}%)${done >= total ? '\n' : ''}`);
}

export interface BenchDatabase {
  url: string;
  database: Database;
  server?: EmbeddedPostgres;
  stop(): Promise<void>;
}

/**
 * BENCH_DATABASE_URL when set, else an embedded server kept under
 * bench/.data/<name> between runs (seeding a million rows once is enough);
 * `fresh` starts that one from an empty cluster, so runs that write compare.
 */
export async function benchDatabase(name: string, settings: Record<string, string> = {}, options: { fresh?: boolean } = {}): Promise<BenchDatabase> {
  const logger = pino({ level: 'warn' });
  let url = process.env.BENCH_DATABASE_URL;
  let server: EmbeddedPostgres | undefined;
  if (!url) {
    if (options.fresh) await rm(join(ROOT, 'bench', '.data', name), { recursive: true, force: true });
    server = await startEmbeddedPostgres({
      dataDir: join(ROOT, 'bench', '.data', name),
      logger,
      settings: { max_connections: '300', shared_buffers: '512MB', ...settings },
    });
    url = server.url;
  }
  const database = createDatabase(url, { max: 8 });
  await migrateToLatest(database, logger);
  await bootstrap(database.db, BENCH_ADMIN);
  return {
    url,
    database,
    server,
    async stop() {
      await database.destroy();
      await server?.stop();
    },
  };
}

export interface RunningService {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** The real service (`src/server.ts`) as a child process on a free port; BENCH_NODE_ARGS adds Node flags (e.g. --cpu-prof). */
export async function startService(databaseUrl: string, env: Record<string, string> = {}): Promise<RunningService> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', join(ROOT, 'src', 'server.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      APP_KEY: BENCH_APP_KEY,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 120; i++) {
    if (child.exitCode !== null) throw new Error(`service exited with code ${child.exitCode}`);
    const ok = await fetch(`${url}/health`).then((r) => r.ok).catch(() => false);
    if (ok) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/** One autocannon run; latencies in milliseconds. */
export async function load(options: autocannon.Options): Promise<LoadResult> {
  const result = await autocannon({ connections: 10, duration: 10, ...options });
  return {
    requests: result.requests.total,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

/** CPU time (ms) spent so far by the service, the PostgreSQL server's processes and this bench process (the load generator). */
export interface CpuTimes {
  service: number;
  postgres: number;
  bench: number;
}

/**
 * Reads /proc (Linux; zeros elsewhere). PostgreSQL's count includes backends
 * that already exited (the postmaster's reaped children), so a run's figure is
 * the difference of two readings. Clock ticks are 10 ms, so runs of a few
 * seconds give figures to a few per cent.
 */
export function cpuTimes(servicePid: number | undefined): CpuTimes {
  const times: CpuTimes = { service: 0, postgres: 0, bench: 0 };
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return times;
  }
  for (const name of entries) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // exited while we read
    }
    const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    // Fields after the command: state is 3, utime 14, stime 15, cutime 16, cstime 17 (man 5 proc).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
    const own = (fields[11]! + fields[12]!) * 10;
    const pid = Number(name);
    if (pid === servicePid) times.service += own;
    else if (pid === process.pid) times.bench += own;
    else if (command === 'postgres') times.postgres += own + (fields[13]! + fields[14]!) * 10;
  }
  return times;
}

/** CPU microseconds per request of each process between two readings. */
export function cpuPerRequest(before: CpuTimes, after: CpuTimes, requests: number): CpuTimes {
  const per = (key: keyof CpuTimes) => Math.round(((after[key] - before[key]) * 1000) / Math.max(requests, 1));
  return { service: per('service'), postgres: per('postgres'), bench: per('bench') };
}

/** The median of each process's figure over runs. */
export function medianCpu(runs: CpuTimes[]): CpuTimes {
  return { service: median(runs.map((r) => r.service)), postgres: median(runs.map((r) => r.postgres)), bench: median(runs.map((r) => r.bench)) };
}

/** `sum (service a, PostgreSQL b, autocannon c)`, for reports. */
export function cpuLine(cpu: CpuTimes): string {
  return `${cpu.service + cpu.postgres + cpu.bench} (service ${cpu.service}, PostgreSQL ${cpu.postgres}, autocannon ${cpu.bench})`;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Runs `fn` `rounds` times and keeps the median of each numeric field. */
export async function medianOf<T extends Record<string, number>>(rounds: number, label: string, fn: () => Promise<T>): Promise<T> {
  const runs: T[] = [];
  for (let i = 0; i < rounds; i++) {
    runs.push(await fn());
    progress(label, i + 1, rounds);
  }
  const out = {} as Record<string, number>;
  for (const key of Object.keys(runs[0]!)) out[key] = median(runs.map((r) => r[key]!));
  return out as T;
}

/** Writes bench/results/<name>.json and .md, and prints the table. */
export async function writeReport(name: string, title: string, rows: Record<string, string | number>[], notes: string[] = []) {
  const dir = join(ROOT, 'bench', 'results');
  await mkdir(dir, { recursive: true });
  const columns = Object.keys(rows[0] ?? {});
  const table = [
    `| ${columns.join(' | ')} |`,
    `| ${columns.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${columns.map((c) => row[c]).join(' | ')} |`),
  ].join('\n');
  // Other work on the machine depresses absolute numbers: the load average at the end of the run says how busy it was.
  const load = loadavg().map((n) => n.toFixed(2));
  const markdown = `# ${title}\n\nRun ${new Date().toISOString()} on ${process.version}; load average at the end (1/5/15 min): ${load.join(' / ')}.\n\n${table}\n\n${notes.map((n) => `- ${n}`).join('\n')}\n`;
  await writeFile(join(dir, `${name}.md`), markdown);
  await writeFile(join(dir, `${name}.json`), JSON.stringify({ title, at: new Date().toISOString(), loadavg: loadavg(), rows, notes }, null, 2));
  process.stdout.write(`${markdown}\n`);
}

/** mulberry32: a fixed seed gives the same sequence every run (the benches' generated bodies and choices). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
