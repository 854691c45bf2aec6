/**
 * Seeds the deal benchmark database: 1,000,000 deals spread over the Sales
 * stages and 20 owners, plus one deal with 5 contacts, 20 notes and 10 tasks.
 * Every value derives from the row number (a fixed seed), so each run builds
 * the same data. Rows go in with INSERT ... SELECT generate_series in chunks,
 * with a progress line; a database that already holds them is left alone.
 *
 *   npx tsx bench/deals-seed.ts       (also run by bench/deals-list.ts)
 */
import { sql } from 'kysely';
import type { Db } from '../src/db/database.js';
import { hashPassword } from '../src/host/passwords.js';
import { benchDatabase, progress } from './lib.js';

export const SEED_DEALS = 1_000_000;
const CHUNK = 50_000;
const OWNERS = 20;
export const RICH_DEAL_TITLE = 'Bench rich deal (5 contacts, 20 notes, 10 tasks)';
/** Owner 1, a view-own seller: the list as a non-admin sees it. */
export const BENCH_VIEWER = { username: 'bench-owner-1', password: 'bench-owner-password' };

async function ensureUsers(db: Db): Promise<number[]> {
  const existing = await db.selectFrom('users').select('id').where('username', 'like', 'bench-owner-%').orderBy('id').execute();
  if (existing.length >= OWNERS) return existing.map((u) => u.id);
  const role = await db.insertInto('roles').values({ name: 'Bench sellers', permissions: ['service:deals:viewown', 'service:deals:editown'] }).returning('id').executeTakeFirstOrThrow();
  const hash = await hashPassword(BENCH_VIEWER.password);
  const rows = await db
    .insertInto('users')
    .values(Array.from({ length: OWNERS }, (_, i) => ({ username: `bench-owner-${i + 1}`, name: `Owner ${i + 1}`, password_hash: hash, role_id: role.id })))
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

async function seedDeals(db: Db, owners: number[]): Promise<void> {
  const have = Number((await sql<{ n: string }>`select count(*) as n from deals`.execute(db)).rows[0]!.n);
  if (have >= SEED_DEALS) {
    progress('deals', SEED_DEALS, SEED_DEALS);
    return;
  }
  const stages = await db
    .selectFrom('stages')
    .innerJoin('pipelines', 'pipelines.id', 'stages.pipeline_id')
    .select(['stages.id', 'stages.type', 'stages.pipeline_id'])
    .where('pipelines.is_default', '=', true)
    .orderBy('stages.position')
    .execute();
  const stageIds = stages.map((s) => s.id);
  const stageTypes = stages.map((s) => s.type);
  const pipelineId = stages[0]!.pipeline_id;

  for (let from = have + 1; from <= SEED_DEALS; from += CHUNK) {
    const to = Math.min(from + CHUNK - 1, SEED_DEALS);
    // Multiplicative hashing of n gives well-spread, repeatable amounts, dates and owners.
    await sql`
      insert into deals (title, amount, currency, pipeline_id, stage_id, status, close_date, owner_id, created_by_id,
                         stage_changed_at, created_at, updated_at, won_at, lost_at)
      select 'Deal ' || n || ' ' || (array['Acme','Globex','Initech','Umbrella','Hooli','Stark','Wayne','Wonka'])[1 + (n * 7) % 8],
             ((n::bigint * 2654435761) % 10000000) / 100.0,
             'USD',
             ${pipelineId},
             (${stageIds}::int[])[1 + (n * 31) % ${stageIds.length}],
             (${stageTypes}::text[])[1 + (n * 31) % ${stageIds.length}],
             date '2026-01-01' + ((n * 37) % 730),
             (${owners}::int[])[1 + (n * 13) % ${owners.length}],
             (${owners}::int[])[1 + (n * 17) % ${owners.length}],
             timestamptz '2025-01-01' + n * interval '20 seconds',
             timestamptz '2025-01-01' + n * interval '20 seconds',
             timestamptz '2025-01-01' + n * interval '20 seconds',
             -- closed deals closed on their close date (the forecast's won and lost figures read these)
             case when (${stageTypes}::text[])[1 + (n * 31) % ${stageIds.length}] = 'won' then (date '2026-01-01' + ((n * 37) % 730))::timestamptz end,
             case when (${stageTypes}::text[])[1 + (n * 31) % ${stageIds.length}] = 'lost' then (date '2026-01-01' + ((n * 37) % 730))::timestamptz end
      from generate_series(${from}::int, ${to}::int) as n`.execute(db);
    progress('deals', to, SEED_DEALS);
  }
  await sql`vacuum analyze deals`.execute(db);
  await sql`analyze deal_counters`.execute(db);
}

/** The deal the view benchmark reads: 5 contacts, 20 notes, 10 tasks. */
async function seedRichDeal(db: Db, owners: number[]): Promise<number> {
  const found = await db.selectFrom('deals').select('id').where('title', '=', RICH_DEAL_TITLE).executeTakeFirst();
  if (found) return found.id;
  const stage = await db.selectFrom('stages').select(['id', 'pipeline_id']).orderBy('id').executeTakeFirstOrThrow();
  const deal = await db
    .insertInto('deals')
    .values({ title: RICH_DEAL_TITLE, amount: '125000.00', currency: 'USD', pipeline_id: stage.pipeline_id, stage_id: stage.id, status: 'open', owner_id: owners[0]!, created_by_id: owners[0]! })
    .returning('id')
    .executeTakeFirstOrThrow();
  const contacts = await db
    .insertInto('contacts')
    .values(Array.from({ length: 5 }, (_, i) => ({ email: `bench-buyer-${i + 1}@bench.example`, first_name: `Buyer${i + 1}`, last_name: 'Bench', company: 'Acme' })))
    .onConflict((oc) => oc.expression(sql`lower(email)`).where('deleted_at', 'is', null).doUpdateSet({ company: 'Acme' }))
    .returning('id')
    .execute();
  await db
    .insertInto('deal_contacts')
    .values(contacts.map((c, i) => ({ deal_id: deal.id, contact_id: c.id, role: ['Champion', 'Buyer', 'User', 'Legal', 'IT'][i]!, is_primary: i === 0 })))
    .execute();
  await db
    .insertInto('deal_notes')
    .values(Array.from({ length: 20 }, (_, i) => ({ deal_id: deal.id, body: `<p>Call ${i + 1}: <strong>discussed</strong> the proposal and next steps.</p>`, author_id: owners[i % owners.length]! })))
    .execute();
  await db
    .insertInto('deal_tasks')
    .values(Array.from({ length: 10 }, (_, i) => ({ deal_id: deal.id, title: `Follow-up ${i + 1}`, due_date: `2026-0${1 + (i % 9)}-15`, assignee_id: owners[i % owners.length]!, created_by_id: owners[0]! })))
    .execute();
  return deal.id;
}

export async function seed(db: Db): Promise<{ richDealId: number; ownerIds: number[] }> {
  const ownerIds = await ensureUsers(db);
  await seedDeals(db, ownerIds);
  const richDealId = await seedRichDeal(db, ownerIds);
  return { richDealId, ownerIds };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const bench = await benchDatabase('deals');
  try {
    const { richDealId } = await seed(bench.database.db);
    process.stderr.write(`seeded; rich deal id ${richDealId}\n`);
  } finally {
    await bench.stop();
  }
}
