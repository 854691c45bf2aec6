/**
 * The database's own ceiling for inbound receives: pgbench runs
 * bench/inbound-floor.sql (what a batch of receives writes, as one statement with
 * no reads, no service in front) against the bench's server, for a few batch sizes.
 * Whatever the service does, it cannot store receives faster than this on the
 * same server; bench/inbound.ts reports it beside the service's rate.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Db } from '../src/db/database.js';

const CONTACTS = 2000;
/** Batch sizes (receives per transaction) with the client count that suits each on two cores. */
export const FLOOR_RUNS = [
  { batch: 1, clients: 8 },
  { batch: 10, clients: 4 },
  { batch: 32, clients: 2 },
] as const;

/** Runs pgbench (`-n`, the given arguments, then the url) and answers its transactions per second. */
export function pgbenchTps(pgbench: string, args: string[], url: string): number {
  const run = spawnSync(pgbench, ['-n', ...args, url], { encoding: 'utf8' });
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(run.stdout)?.[1];
  if (run.status !== 0 || !tps) throw new Error(`pgbench ${args.join(' ')} failed (${run.status}): ${run.stderr || run.stdout}`);
  return Number(tps);
}

export interface FloorResult {
  batch: number;
  clients: number;
  receivesPerSecond: number;
}

export interface FloorRunner {
  /** One pgbench run of `batch` receives per transaction from `clients` clients for `seconds`; receives per second. */
  run(batch: number, clients: number, seconds: number): Promise<number>;
  close(): Promise<void>;
}

/** Seeds the floor's own contacts and source once; each run then writes batches of receives with pgbench (prepared statements). */
export async function floorRunner(db: Db, url: string, pgbench: string): Promise<FloorRunner> {
  // Its own contacts, in one statement so their ids are consecutive, and its own source.
  const contactMin = (
    await sql<{ id: number }>`insert into contacts (email, first_name, last_name)
      select 'floor-' || g || '@floor.example', 'Floor', 'Contact ' || g from generate_series(1, ${CONTACTS}) as g returning id`.execute(db)
  ).rows.reduce((min, row) => Math.min(min, row.id), Infinity);
  const place = await sql<{ pipeline_id: number; stage_id: number }>`
    select p.id as pipeline_id, s.id as stage_id from pipelines p join stages s on s.pipeline_id = p.id
    where p.is_default order by s.position limit 1`.execute(db);
  const source = await sql<{ id: string }>`insert into inbound_sources (id, name, pipeline_id, secret_encrypted, enabled)
    values (gen_random_uuid(), 'floor', ${place.rows[0]!.pipeline_id}, 'not a secret: never received through', false) returning id`.execute(db);
  const template = await readFile(new URL('./inbound-floor.sql', import.meta.url), 'utf8');
  const dir = await mkdtemp(join(tmpdir(), 'inbound-floor-'));
  return {
    async run(batch, clients, seconds) {
      const values: Record<string, string | number> = {
        BATCH: batch,
        CONTACTS,
        CONTACT_MIN: contactMin,
        PIPELINE_ID: place.rows[0]!.pipeline_id,
        STAGE_ID: place.rows[0]!.stage_id,
        SOURCE_ID: source.rows[0]!.id,
      };
      const script = join(dir, `floor-${batch}.sql`);
      await writeFile(script, template.replace(/\{\{(\w+)\}\}/g, (_, name: string) => String(values[name])));
      return pgbenchTps(pgbench, ['-M', 'prepared', '-c', String(clients), '-j', '2', '-T', String(seconds), '-f', script], url) * batch;
    },
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Runs each of FLOOR_RUNS for `seconds` with pgbench (prepared statements); `progress` after each. */
export async function databaseFloor(
  db: Db,
  url: string,
  pgbench: string,
  seconds: number,
  progress: (done: number, total: number) => void,
): Promise<FloorResult[]> {
  const runner = await floorRunner(db, url, pgbench);
  const results: FloorResult[] = [];
  try {
    for (const [i, run] of FLOOR_RUNS.entries()) {
      results.push({ ...run, receivesPerSecond: await runner.run(run.batch, run.clients, seconds) });
      progress(i + 1, FLOOR_RUNS.length);
    }
  } finally {
    await runner.close();
  }
  return results;
}
