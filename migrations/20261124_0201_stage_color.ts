import { sql, type Kysely } from 'kysely';

/** A stage's colour (#rrggbb, lower case), for the board and the settings pages; null: the default look. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table stages add column color text check (color ~ '^#[0-9a-f]{6}$')`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table stages drop column color`.execute(db);
}
