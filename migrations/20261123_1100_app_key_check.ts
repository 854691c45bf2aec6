import { sql, type Kysely } from 'kysely';

/**
 * A key check value: a known text sealed with APP_KEY (never the key). At
 * start-up it tells at once whether APP_KEY can open the stored secrets.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table app_key_check (
      id boolean primary key default true check (id),
      check_value text not null,
      updated_at timestamptz not null default now()
    );
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table app_key_check`.execute(db);
}
