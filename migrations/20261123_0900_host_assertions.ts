import { sql, type Kysely } from 'kysely';

/**
 * The ids (jti) of host assertions already used: each is accepted once, by any
 * process sharing the database, until it would have expired anyway.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table host_assertion_jtis (
      jti text primary key,
      expires_at timestamptz not null
    );
    create index host_assertion_jtis_expires_at_idx on host_assertion_jtis (expires_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table host_assertion_jtis`.execute(db);
}
