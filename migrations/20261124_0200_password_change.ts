import { sql, type Kysely } from 'kysely';

/**
 * Whether a user is still on a password someone else chose: the first-run
 * admin's (bootstrap) and one an administrator reset. The pages tell them to
 * change it until they have.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table users add column must_change_password boolean not null default false`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table users drop column must_change_password`.execute(db);
}
