import { sql, type Kysely } from 'kysely';

/**
 * Outbound event delivery: webhook subscriptions of the built-in host, one
 * delivery per (subscription, event) — or per event in forward mode, where
 * subscription_id is null — and every attempt of each delivery.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table webhook_subscriptions (
      id integer generated always as identity primary key,
      name text not null,
      url text not null,
      events text[] not null,
      secret_encrypted text not null,
      previous_secret_encrypted text,
      previous_secret_expires_at timestamptz,
      enabled boolean not null default true,
      disabled_reason text,
      disabled_at timestamptz,
      failing_since timestamptz,
      created_by_id integer references users (id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );

    create table webhook_deliveries (
      id bigint generated always as identity primary key,
      subscription_id integer references webhook_subscriptions (id) on delete cascade,
      event_id uuid not null references event_outbox (id) on delete cascade,
      event text not null,
      status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
      attempt_count integer not null default 0,
      cycle_started_at timestamptz not null default now(),
      next_attempt_at timestamptz default now(),
      last_status_code integer,
      last_error text,
      delivered_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index webhook_deliveries_subscription_event_key on webhook_deliveries (subscription_id, event_id)
      where subscription_id is not null;
    create unique index webhook_deliveries_forward_event_key on webhook_deliveries (event_id) where subscription_id is null;
    create index webhook_deliveries_event_id_idx on webhook_deliveries (event_id);
    create index webhook_deliveries_subscription_id_idx on webhook_deliveries (subscription_id, id);
    create index webhook_deliveries_settled_idx on webhook_deliveries (updated_at) where status <> 'pending';

    create table webhook_attempts (
      id bigint generated always as identity primary key,
      delivery_id bigint not null references webhook_deliveries (id) on delete cascade,
      attempted_at timestamptz not null,
      status_code integer,
      duration_ms integer not null,
      response_body text,
      error text
    );
    create index webhook_attempts_delivery_id_idx on webhook_attempts (delivery_id, id);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table webhook_attempts, webhook_deliveries, webhook_subscriptions`.execute(db);
}
