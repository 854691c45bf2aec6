import { sql, type Kysely } from 'kysely';

/**
 * Browser sessions of the sales pages. Only a SHA-256 of the session token is
 * stored, so a read of this table cannot be replayed as a login. `rights` keeps
 * what the host granted at login, for users whose rights live in a remote host
 * (no local role to read again).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table page_sessions (
      token_hash text primary key,
      user_id integer not null references users (id) on delete cascade,
      rights jsonb not null default '{}',
      created_at timestamptz not null default now(),
      expires_at timestamptz not null
    );
    create index page_sessions_user_id_idx on page_sessions (user_id);
    create index page_sessions_expires_at_idx on page_sessions (expires_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table page_sessions`.execute(db);
}
