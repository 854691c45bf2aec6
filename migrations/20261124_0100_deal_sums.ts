import { sql, type Kysely } from 'kysely';

/**
 * Amount sums beside the deal counts, so the pipeline summary and the forecast
 * of a million-deal pipeline read a few thousand rows instead of aggregating
 * every deal at each call.
 *
 * - deal_counters gains `currency` in its key and an `amount` sum: the summary
 *   is a sum over a pipeline's rows (per stage and currency; weighted amounts
 *   are sum × the stage's probability at read time, so changing a probability
 *   needs no rewrite).
 * - deal_forecast_sums keeps, per calendar month, the figures the forecast
 *   reads: open deals by expected close month, won deals by the month (UTC)
 *   they were won with the sum of their days from creation to won, lost deals
 *   by the month they were lost. Deals without that date are in no month.
 *
 * The same triggers keep both, with the sharding and lock order of the
 * counters (see 20261122_1000_deal_list): inserts and deletes per statement,
 * updates per row only when a column either table depends on changes, rows
 * touched in key order, deal_counters before deal_forecast_sums.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    -- No deal may change while the sums are rebuilt from the table.
    lock table deals in share row exclusive mode;

    drop trigger deals_count_update on deals;
    drop table deal_counters;

    create table deal_counters (
      pipeline_id integer not null,
      stage_id integer not null,
      status text not null,
      owner_id integer not null,
      created_by_id integer not null,
      currency char(3) not null,
      shard smallint not null default 0,
      deals bigint not null,
      amount numeric not null default 0,
      primary key (pipeline_id, stage_id, status, owner_id, created_by_id, currency, shard)
    );

    create table deal_forecast_sums (
      pipeline_id integer not null,
      month date not null,
      status text not null,
      stage_id integer not null,
      owner_id integer not null,
      currency char(3) not null,
      shard smallint not null default 0,
      deals bigint not null,
      amount numeric not null default 0,
      days numeric not null default 0,
      primary key (pipeline_id, month, status, stage_id, owner_id, currency, shard)
    );

    -- The month a deal counts in for the forecast (null: in none).
    create function deal_forecast_month(status text, close_date date, won_at timestamptz, lost_at timestamptz)
    returns date language sql immutable as $$
      select case status
        when 'open' then date_trunc('month', close_date::timestamp)::date
        when 'won' then date_trunc('month', won_at at time zone 'UTC')::date
        when 'lost' then date_trunc('month', lost_at at time zone 'UTC')::date
      end
    $$;

    create function deal_days_to_win(status text, created_at timestamptz, won_at timestamptz)
    returns numeric language sql immutable as $$
      select case when status = 'won' and won_at is not null then extract(epoch from won_at - created_at) / 86400 else 0 end
    $$;

    create or replace function deal_counters_add_statement() returns trigger language plpgsql as $$
    declare
      v_sign integer := case when tg_op = 'INSERT' then 1 else -1 end;
      v_shard smallint := pg_backend_pid() % 32;
    begin
      insert into deal_counters as c (pipeline_id, stage_id, status, owner_id, created_by_id, currency, shard, deals, amount)
      select pipeline_id, stage_id, status, coalesce(owner_id, 0), coalesce(created_by_id, 0), currency, v_shard,
             v_sign * count(*), v_sign * sum(amount)
      from changed_rows
      group by 1, 2, 3, 4, 5, 6
      order by 1, 2, 3, 4, 5, 6
      on conflict (pipeline_id, stage_id, status, owner_id, created_by_id, currency, shard)
      do update set deals = c.deals + excluded.deals, amount = c.amount + excluded.amount;

      insert into deal_forecast_sums as f (pipeline_id, month, status, stage_id, owner_id, currency, shard, deals, amount, days)
      select pipeline_id, month, status, stage_id, owner_id, currency, v_shard, v_sign * count(*), v_sign * sum(amount), v_sign * sum(days)
      from (
        select pipeline_id, deal_forecast_month(status, close_date, won_at, lost_at) as month, status, stage_id,
               coalesce(owner_id, 0) as owner_id, currency, amount, deal_days_to_win(status, created_at, won_at) as days
        from changed_rows
      ) as rows
      where month is not null
      group by 1, 2, 3, 4, 5, 6
      order by 1, 2, 3, 4, 5, 6
      on conflict (pipeline_id, month, status, stage_id, owner_id, currency, shard)
      do update set deals = f.deals + excluded.deals, amount = f.amount + excluded.amount, days = f.days + excluded.days;
      return null;
    end $$;

    create or replace function deal_counters_move_row() returns trigger language plpgsql as $$
    declare
      v_shard smallint := pg_backend_pid() % 32;
    begin
      insert into deal_counters as c (pipeline_id, stage_id, status, owner_id, created_by_id, currency, shard, deals, amount)
      select pipeline_id, stage_id, status, owner_id, created_by_id, currency, v_shard, sum(deals), sum(amount) from (values
        (old.pipeline_id, old.stage_id, old.status, coalesce(old.owner_id, 0), coalesce(old.created_by_id, 0), old.currency, -1::bigint, -old.amount),
        (new.pipeline_id, new.stage_id, new.status, coalesce(new.owner_id, 0), coalesce(new.created_by_id, 0), new.currency, 1::bigint, new.amount)
      ) as moved (pipeline_id, stage_id, status, owner_id, created_by_id, currency, deals, amount)
      group by 1, 2, 3, 4, 5, 6
      order by 1, 2, 3, 4, 5, 6
      on conflict (pipeline_id, stage_id, status, owner_id, created_by_id, currency, shard)
      do update set deals = c.deals + excluded.deals, amount = c.amount + excluded.amount;

      insert into deal_forecast_sums as f (pipeline_id, month, status, stage_id, owner_id, currency, shard, deals, amount, days)
      select pipeline_id, month, status, stage_id, owner_id, currency, v_shard, sum(deals), sum(amount), sum(days) from (values
        (old.pipeline_id, deal_forecast_month(old.status, old.close_date, old.won_at, old.lost_at), old.status, old.stage_id,
         coalesce(old.owner_id, 0), old.currency, -1::bigint, -old.amount, -deal_days_to_win(old.status, old.created_at, old.won_at)),
        (new.pipeline_id, deal_forecast_month(new.status, new.close_date, new.won_at, new.lost_at), new.status, new.stage_id,
         coalesce(new.owner_id, 0), new.currency, 1::bigint, new.amount, deal_days_to_win(new.status, new.created_at, new.won_at))
      ) as moved (pipeline_id, month, status, stage_id, owner_id, currency, deals, amount, days)
      where month is not null
      group by 1, 2, 3, 4, 5, 6
      order by 1, 2, 3, 4, 5, 6
      on conflict (pipeline_id, month, status, stage_id, owner_id, currency, shard)
      do update set deals = f.deals + excluded.deals, amount = f.amount + excluded.amount, days = f.days + excluded.days;
      return null;
    end $$;

    create or replace function deal_counters_reset() returns trigger language plpgsql as $$
    begin
      delete from deal_counters;
      delete from deal_forecast_sums;
      return null;
    end $$;

    create trigger deals_count_update after update on deals for each row
      when ((old.pipeline_id, old.stage_id, old.status, old.owner_id, old.created_by_id, old.currency, old.amount,
             old.close_date, old.won_at, old.lost_at, old.created_at)
            is distinct from
            (new.pipeline_id, new.stage_id, new.status, new.owner_id, new.created_by_id, new.currency, new.amount,
             new.close_date, new.won_at, new.lost_at, new.created_at))
      execute function deal_counters_move_row();

    insert into deal_counters (pipeline_id, stage_id, status, owner_id, created_by_id, currency, deals, amount)
    select pipeline_id, stage_id, status, coalesce(owner_id, 0), coalesce(created_by_id, 0), currency, count(*), sum(amount)
    from deals group by 1, 2, 3, 4, 5, 6;

    insert into deal_forecast_sums (pipeline_id, month, status, stage_id, owner_id, currency, deals, amount, days)
    select pipeline_id, month, status, stage_id, owner_id, currency, count(*), sum(amount), sum(days)
    from (
      select pipeline_id, deal_forecast_month(status, close_date, won_at, lost_at) as month, status, stage_id,
             coalesce(owner_id, 0) as owner_id, currency, amount, deal_days_to_win(status, created_at, won_at) as days
      from deals
    ) as rows
    where month is not null
    group by 1, 2, 3, 4, 5, 6;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    lock table deals in share row exclusive mode;
    drop trigger deals_count_update on deals;
    drop table deal_counters, deal_forecast_sums;

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

    create or replace function deal_counters_add_statement() returns trigger language plpgsql as $$
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

    create or replace function deal_counters_move_row() returns trigger language plpgsql as $$
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

    create or replace function deal_counters_reset() returns trigger language plpgsql as $$
    begin
      delete from deal_counters;
      return null;
    end $$;

    create trigger deals_count_update after update on deals for each row
      when ((old.pipeline_id, old.stage_id, old.status, old.owner_id, old.created_by_id)
            is distinct from (new.pipeline_id, new.stage_id, new.status, new.owner_id, new.created_by_id))
      execute function deal_counters_move_row();

    drop function deal_forecast_month(text, date, timestamptz, timestamptz), deal_days_to_win(text, timestamptz, timestamptz);

    insert into deal_counters (pipeline_id, stage_id, status, owner_id, created_by_id, deals)
    select pipeline_id, stage_id, status, coalesce(owner_id, 0), coalesce(created_by_id, 0), count(*)
    from deals group by 1, 2, 3, 4, 5;
  `.execute(db);
}
