import { sql, type Kysely } from 'kysely';

/**
 * Defaults of an inbound source for the deals it creates: the stage (else the
 * pipeline's first) and the owner (else none). A deleted stage or user falls
 * back to those.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table inbound_sources
      add column default_stage_id integer references stages (id) on delete set null,
      add column default_owner_id integer references users (id) on delete set null
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table inbound_sources drop column default_stage_id, drop column default_owner_id`.execute(db);
}
