import { sql } from 'kysely';
import type { Db, Executor } from '../../db/database.js';

const SALES_STAGES = [
  { name: 'Qualification', type: 'open', probability: 10 },
  { name: 'Discovery', type: 'open', probability: 20 },
  { name: 'Proposal', type: 'open', probability: 40 },
  { name: 'Negotiation', type: 'open', probability: 70 },
  { name: 'Won', type: 'won', probability: 100 },
  { name: 'Lost', type: 'lost', probability: 0 },
] as const;

/** The lock every first-run seeding takes, so two processes starting at once never both seed. */
export async function lockSeeding(trx: Executor): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('deal-pipeline-bootstrap'))`.execute(trx);
}

/** The default "Sales" pipeline on a database with no pipeline yet, whatever the host (callers hold lockSeeding). */
export async function seedDefaultPipeline(trx: Executor): Promise<boolean> {
  const anyPipeline = await trx.selectFrom('pipelines').select('id').limit(1).executeTakeFirst();
  if (anyPipeline) return false;
  const pipeline = await trx.insertInto('pipelines').values({ name: 'Sales', is_default: true }).returning('id').executeTakeFirstOrThrow();
  await trx
    .insertInto('stages')
    .values(SALES_STAGES.map((stage, index) => ({ ...stage, pipeline_id: pipeline.id, position: index + 1 })))
    .execute();
  return true;
}

/** First start with a remote host (no admin to create: users are the host's). */
export async function seedPipelines(db: Db): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockSeeding(trx);
    await seedDefaultPipeline(trx);
  });
}
