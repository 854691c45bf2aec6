import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { hashPassword } from '../passwords.js';

export interface BootstrapResult {
  /** Set only on the first start, when the admin user was created. */
  admin?: { username: string; password: string; generated: boolean };
}

const SALES_STAGES = [
  { name: 'Qualification', type: 'open', probability: 10 },
  { name: 'Discovery', type: 'open', probability: 20 },
  { name: 'Proposal', type: 'open', probability: 40 },
  { name: 'Negotiation', type: 'open', probability: 70 },
  { name: 'Won', type: 'won', probability: 100 },
  { name: 'Lost', type: 'lost', probability: 0 },
] as const;

/**
 * First start on an empty database: the Administrator role, the admin user and
 * the default "Sales" pipeline. Later starts find them and change nothing. An
 * advisory lock keeps two processes starting at once from both seeding.
 */
export async function bootstrap(db: Db, options: { username: string; password?: string }): Promise<BootstrapResult> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('deal-pipeline-bootstrap'))`.execute(trx);
    const result: BootstrapResult = {};

    const anyUser = await trx.selectFrom('users').select('id').limit(1).executeTakeFirst();
    if (!anyUser) {
      const role =
        (await trx.selectFrom('roles').select('id').where('is_admin', '=', true).orderBy('id').executeTakeFirst()) ??
        (await trx
          .insertInto('roles')
          .values({ name: 'Administrator', is_admin: true, permissions: [] })
          .returning('id')
          .executeTakeFirstOrThrow());
      const password = options.password ?? randomBytes(12).toString('base64url');
      await trx
        .insertInto('users')
        .values({
          username: options.username,
          name: 'Administrator',
          password_hash: await hashPassword(password),
          role_id: role.id,
        })
        .execute();
      result.admin = { username: options.username, password, generated: !options.password };
    }

    const anyPipeline = await trx.selectFrom('pipelines').select('id').limit(1).executeTakeFirst();
    if (!anyPipeline) {
      const pipeline = await trx
        .insertInto('pipelines')
        .values({ name: 'Sales', is_default: true })
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx
        .insertInto('stages')
        .values(SALES_STAGES.map((stage, index) => ({ ...stage, pipeline_id: pipeline.id, position: index + 1 })))
        .execute();
    }
    return result;
  });
}
