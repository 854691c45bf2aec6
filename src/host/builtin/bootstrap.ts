import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/database.js';
import { lockSeeding, seedDefaultPipeline } from '../../domain/pipelines/seed.js';
import { hashPassword } from '../passwords.js';

export interface BootstrapResult {
  /** Set only on the first start, when the admin user was created. */
  admin?: { username: string; password: string; generated: boolean };
}

/**
 * First start on an empty database: the Administrator role, the admin user and
 * the default "Sales" pipeline. Later starts find them and change nothing. An
 * advisory lock keeps two processes starting at once from both seeding.
 */
export async function bootstrap(db: Db, options: { username: string; password?: string }): Promise<BootstrapResult> {
  return db.transaction().execute(async (trx) => {
    await lockSeeding(trx);
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
          // Someone else chose it (the config or the log): the pages ask for a new one until it is changed.
          must_change_password: true,
        })
        .execute();
      result.admin = { username: options.username, password, generated: !options.password };
    }

    await seedDefaultPipeline(trx);
    return result;
  });
}
