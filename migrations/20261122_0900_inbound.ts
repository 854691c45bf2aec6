import { sql, type Kysely } from 'kysely';

/**
 * Inbound webhook intake: the per-source receive log and the replay-safety keys
 * (Idempotency-Key / webhook-id header, or the hash of a signed body).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table inbound_receive_log (
      id bigint generated always as identity primary key,
      source_id uuid not null references inbound_sources (id) on delete cascade,
      received_at timestamptz not null default now(),
      status integer not null,
      outcome text not null,
      error text,
      deal_id integer references deals (id) on delete set null
    );
    create index inbound_receive_log_source_idx on inbound_receive_log (source_id, id desc);

    create table inbound_idempotency (
      source_id uuid not null references inbound_sources (id) on delete cascade,
      key text not null,
      created_at timestamptz not null default now(),
      status integer,
      response jsonb,
      primary key (source_id, key)
    );
    create index inbound_idempotency_created_at_idx on inbound_idempotency (created_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table inbound_idempotency, inbound_receive_log`.execute(db);
}
