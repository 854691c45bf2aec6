import { sql, type Kysely } from 'kysely';

/**
 * What keeps the deal list fast at a million rows:
 *
 * - deal_counters: deal counts per (pipeline, stage, status, owner, creator),
 *   kept exact by triggers, so `total` of an unfiltered or pipeline/stage/
 *   status/owner-filtered list (visibility and view-own included) is a sum over
 *   a few hundred rows instead of count(*) over a million. owner_id and
 *   created_by_id use 0 for "none" so they can be part of the primary key.
 *   Each bucket is split into COUNTER_SHARDS rows chosen by the writing
 *   backend, so concurrent transactions adding deals to the same bucket (every
 *   inbound receive lands in one pipeline's first stage) do not queue on one
 *   row lock until commit; readers sum the shards.
 *   Inserts and deletes are counted per statement (bulk loads stay cheap);
 *   updates per row, only when a counted column changes, touching the two
 *   counter rows in key order so concurrent moves cannot deadlock on them.
 * - (column, id) indexes for every sort order, so cursor pages are index range scans.
 * - a trigram index for the title search.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table deal_counters (
      pipeline_id integer not null,
      stage_id integer not null,
      status text not null,
      owner_id integer not null,
      created_by_id integer not null,
      shard smallint not null default 0,
      deals bigint not null,
      primary key (pipeline_id, stage_id, status, owner_id, created_by_id, shard)
    );

    create function deal_counters_add_statement() returns trigger language plpgsql as $$
    begin
      insert into deal_counters as c (pipeline_id, stage_id, status, owner_id, created_by_id, shard, deals)
      select pipeline_id, stage_id, status, coalesce(owner_id, 0), coalesce(created_by_id, 0), pg_backend_pid() % 32,
             case when tg_op = 'INSERT' then count(*) else -count(*) end
      from changed_rows
      group by 1, 2, 3, 4, 5
      order by 1, 2, 3, 4, 5
      on conflict (pipeline_id, stage_id, status, owner_id, created_by_id, shard)
      do update set deals = c.deals + excluded.deals;
      return null;
    end $$;

    create function deal_counters_move_row() returns trigger language plpgsql as $$
    begin
      insert into deal_counters as c (pipeline_id, stage_id, status, owner_id, created_by_id, shard, deals)
      select pipeline_id, stage_id, status, owner_id, created_by_id, (pg_backend_pid() % 32)::smallint, deals from (values
        (old.pipeline_id, old.stage_id, old.status, coalesce(old.owner_id, 0), coalesce(old.created_by_id, 0), -1::bigint),
        (new.pipeline_id, new.stage_id, new.status, coalesce(new.owner_id, 0), coalesce(new.created_by_id, 0), 1::bigint)
      ) as moved (pipeline_id, stage_id, status, owner_id, created_by_id, deals)
      order by 1, 2, 3, 4, 5
      on conflict (pipeline_id, stage_id, status, owner_id, created_by_id, shard)
      do update set deals = c.deals + excluded.deals;
      return null;
    end $$;

    create function deal_counters_reset() returns trigger language plpgsql as $$
    begin
      delete from deal_counters;
      return null;
    end $$;

    create trigger deals_count_insert after insert on deals
      referencing new table as changed_rows for each statement execute function deal_counters_add_statement();
    create trigger deals_count_delete after delete on deals
      referencing old table as changed_rows for each statement execute function deal_counters_add_statement();
    create trigger deals_count_update after update on deals for each row
      when ((old.pipeline_id, old.stage_id, old.status, old.owner_id, old.created_by_id)
            is distinct from (new.pipeline_id, new.stage_id, new.status, new.owner_id, new.created_by_id))
      execute function deal_counters_move_row();
    create trigger deals_count_truncate after truncate on deals
      for each statement execute function deal_counters_reset();

    insert into deal_counters (pipeline_id, stage_id, status, owner_id, created_by_id, deals)
    select pipeline_id, stage_id, status, coalesce(owner_id, 0), coalesce(created_by_id, 0), count(*)
    from deals group by 1, 2, 3, 4, 5;

    create index deals_title_sort_idx on deals (title, id);
    create index deals_amount_sort_idx on deals (amount, id);
    create index deals_close_date_sort_idx on deals (close_date, id);
    create index deals_created_at_sort_idx on deals (created_at, id);
    create index deals_updated_at_sort_idx on deals (updated_at, id);

    create extension if not exists pg_trgm;
    create index deals_title_trgm_idx on deals using gin (title gin_trgm_ops);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop index deals_title_trgm_idx, deals_title_sort_idx, deals_amount_sort_idx, deals_close_date_sort_idx,
      deals_created_at_sort_idx, deals_updated_at_sort_idx;
    drop trigger deals_count_insert on deals;
    drop trigger deals_count_delete on deals;
    drop trigger deals_count_update on deals;
    drop trigger deals_count_truncate on deals;
    drop function deal_counters_add_statement(), deal_counters_move_row(), deal_counters_reset();
    drop table deal_counters;
  `.execute(db);
}
