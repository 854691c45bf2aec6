import { sql, type Kysely } from 'kysely';

/**
 * Each running delivery worker beats here every few seconds. A worker whose
 * beat stopped (its process was killed) has its jobs unlocked by the others,
 * instead of waiting for graphile-worker's 4-hour lock expiry.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table worker_heartbeats (
      worker_id text primary key,
      beat_at timestamptz not null default now()
    );
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table worker_heartbeats`.execute(db);
}
