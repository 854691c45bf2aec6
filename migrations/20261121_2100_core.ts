import { sql, type Kysely } from 'kysely';

/**
 * Core schema: the built-in host (roles, users, contacts, API credentials, OAuth
 * tokens), pipelines and stages, deals with their committee, notes, tasks and
 * stage history, and the event outbox.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table roles (
      id integer generated always as identity primary key,
      name text not null,
      is_admin boolean not null default false,
      permissions text[] not null default '{}',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index roles_name_key on roles (lower(name));

    create table users (
      id integer generated always as identity primary key,
      username text not null,
      password_hash text not null,
      name text not null,
      email text,
      role_id integer not null references roles (id),
      is_active boolean not null default true,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index users_username_key on users (lower(username));
    create index users_role_id_idx on users (role_id);

    create table contacts (
      id integer generated always as identity primary key,
      email text not null,
      first_name text,
      last_name text,
      company text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index contacts_email_key on contacts (lower(email));

    create table api_credentials (
      id integer generated always as identity primary key,
      name text not null,
      user_id integer not null references users (id) on delete cascade,
      client_id text not null unique,
      client_secret_hash text not null,
      created_at timestamptz not null default now(),
      last_used_at timestamptz
    );

    create table oauth_tokens (
      token_hash text primary key,
      credential_id integer not null references api_credentials (id) on delete cascade,
      user_id integer not null references users (id) on delete cascade,
      expires_at timestamptz not null,
      created_at timestamptz not null default now()
    );
    create index oauth_tokens_expires_at_idx on oauth_tokens (expires_at);

    create table pipelines (
      id integer generated always as identity primary key,
      name text not null,
      is_default boolean not null default false,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index pipelines_single_default on pipelines (is_default) where is_default;

    create table pipeline_roles (
      pipeline_id integer not null references pipelines (id) on delete cascade,
      role_id integer not null references roles (id) on delete cascade,
      primary key (pipeline_id, role_id)
    );
    create index pipeline_roles_role_id_idx on pipeline_roles (role_id);

    create table stages (
      id integer generated always as identity primary key,
      pipeline_id integer not null references pipelines (id) on delete cascade,
      name text not null,
      type text not null check (type in ('open', 'won', 'lost')),
      position integer not null,
      probability integer not null default 0 check (probability between 0 and 100),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (pipeline_id, position) deferrable initially deferred
    );

    create table inbound_sources (
      id uuid primary key,
      name text not null,
      pipeline_id integer not null references pipelines (id),
      secret_encrypted text not null,
      previous_secret_encrypted text,
      previous_secret_expires_at timestamptz,
      enabled boolean not null default true,
      created_by_id integer references users (id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      last_received_at timestamptz
    );

    create table deals (
      id integer generated always as identity primary key,
      title text not null,
      amount numeric(15, 2) not null default 0,
      currency char(3) not null,
      pipeline_id integer not null references pipelines (id),
      stage_id integer not null references stages (id),
      status text not null check (status in ('open', 'won', 'lost')),
      close_date date,
      owner_id integer references users (id) on delete set null,
      created_by_id integer references users (id) on delete set null,
      custom_fields jsonb not null default '{}',
      source_id uuid references inbound_sources (id) on delete set null,
      external_id text,
      lost_reason text,
      stage_changed_at timestamptz not null default now(),
      won_at timestamptz,
      lost_at timestamptz,
      event_sequence integer not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index deals_pipeline_id_idx on deals (pipeline_id, id);
    create index deals_stage_id_idx on deals (stage_id, id);
    create index deals_owner_id_idx on deals (owner_id, id);
    create index deals_created_by_id_idx on deals (created_by_id, id);
    create index deals_status_idx on deals (status, id);
    create unique index deals_source_external_id_key on deals (source_id, external_id) where external_id is not null;

    create table deal_contacts (
      deal_id integer not null references deals (id) on delete cascade,
      contact_id integer not null references contacts (id) on delete cascade,
      role text,
      is_primary boolean not null default false,
      created_at timestamptz not null default now(),
      primary key (deal_id, contact_id)
    );
    create unique index deal_contacts_one_primary on deal_contacts (deal_id) where is_primary;
    create index deal_contacts_contact_id_idx on deal_contacts (contact_id);

    create table deal_notes (
      id integer generated always as identity primary key,
      deal_id integer not null references deals (id) on delete cascade,
      body text not null,
      author_id integer references users (id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index deal_notes_deal_id_idx on deal_notes (deal_id, id);

    create table deal_tasks (
      id integer generated always as identity primary key,
      deal_id integer not null references deals (id) on delete cascade,
      title text not null,
      due_date date,
      assignee_id integer references users (id) on delete set null,
      is_completed boolean not null default false,
      completed_at timestamptz,
      created_by_id integer references users (id) on delete set null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index deal_tasks_deal_id_idx on deal_tasks (deal_id, id);

    create table deal_stage_history (
      id integer generated always as identity primary key,
      deal_id integer not null references deals (id) on delete cascade,
      from_stage_id integer references stages (id) on delete set null,
      to_stage_id integer references stages (id) on delete set null,
      changed_by_id integer references users (id) on delete set null,
      changed_by_name text not null,
      changed_at timestamptz not null default now()
    );
    create index deal_stage_history_deal_id_idx on deal_stage_history (deal_id, id);

    create table event_outbox (
      id uuid primary key,
      event text not null,
      deal_id integer,
      sequence integer,
      payload jsonb not null,
      created_at timestamptz not null default now()
    );
    create index event_outbox_deal_id_idx on event_outbox (deal_id, sequence);
    create index event_outbox_created_at_idx on event_outbox (created_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop table event_outbox, deal_stage_history, deal_tasks, deal_notes, deal_contacts, deals,
      inbound_sources, stages, pipeline_roles, pipelines, oauth_tokens, api_credentials, contacts, users, roles;
  `.execute(db);
}
