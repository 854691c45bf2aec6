import { sql, type Kysely } from 'kysely';

/**
 * Defaults of an inbound source for the deals it creates: the stage (else the
 * pipeline's first) and the owner (else none); a deleted stage or user falls
 * back to those. And its field mapping: where in a sender's JSON each deal
 * field is read from (empty: under its own name).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table inbound_sources
      add column default_stage_id integer references stages (id) on delete set null,
      add column default_owner_id integer references users (id) on delete set null,
      add column field_map jsonb not null default '{}'::jsonb
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table inbound_sources drop column default_stage_id, drop column default_owner_id, drop column field_map`.execute(db);
}
