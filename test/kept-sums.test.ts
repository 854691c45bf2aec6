import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { compactKeptSums } from '../src/domain/deals/kept-sums.js';
import { setupApp } from './helpers/app.js';
import { defaultPipeline } from './helpers/factories.js';

/**
 * The kept figures spread over one shard per writing backend; compaction folds
 * them into shard 0 and drops zero rows without changing any figure.
 */
describe('compaction of the kept deal figures', () => {
  it('folds every shard into shard 0, drops zero rows, and leaves every sum as it was', async () => {
    const t = await setupApp();
    const sales = await defaultPipeline(t.db);
    const [first, second] = sales.stages;
    const won = sales.stages.find((s) => s.type === 'won')!;

    // Writers on different backends (shard = backend pid % 32): open connections until three shards differ, none 0.
    const clients: pg.Client[] = [];
    const shards = new Set<number>();
    while (shards.size < 3) {
      const client = new pg.Client({ connectionString: t.url });
      await client.connect();
      const { rows } = await client.query<{ shard: number }>('select pg_backend_pid() % 32 as shard');
      if (rows[0]!.shard === 0 || shards.has(rows[0]!.shard)) {
        await client.end();
        continue;
      }
      shards.add(rows[0]!.shard);
      clients.push(client);
    }
    try {
      for (const [i, client] of clients.entries()) {
        await client.query(
          `insert into deals (title, amount, currency, pipeline_id, stage_id, status, close_date, owner_id, created_by_id)
           select 'Shard ' || $1 || ' #' || n, n * 10, 'USD', $2, $3, 'open', date '2026-02-01' + n, 1, 1 from generate_series(1, 5) n`,
          [i, sales.id, first!.id],
        );
      }
      for (const [i, client] of clients.entries()) {
        // Moves and deletes from other backends leave shards that cancel out (zero rows).
        await client.query(`update deals set stage_id = $1 where title = $2`, [second!.id, `Shard ${i} #1`]);
        await client.query(`update deals set stage_id = $1, status = 'won', won_at = '2026-03-10T12:00:00Z' where title = $2`, [won.id, `Shard ${i} #2`]);
        await client.query(`delete from deals where title = $1`, [`Shard ${(i + 1) % clients.length} #3`]);
        // Away and back: the no-owner bucket of this shard ends at zero.
        await client.query(`update deals set owner_id = null where title = $1`, [`Shard ${i} #4`]);
        await client.query(`update deals set owner_id = 1 where title = $1`, [`Shard ${i} #4`]);
      }
    } finally {
      await Promise.all(clients.map((client) => client.end()));
    }

    const snapshot = async () => {
      const counters = await sql<{ key: string; deals: string; amount: string }>`
        select concat_ws('/', pipeline_id, stage_id, status, owner_id, created_by_id, currency) as key, sum(deals)::text as deals, sum(amount)::text as amount
        from deal_counters group by 1 having sum(deals) <> 0 order by 1`.execute(t.db);
      const forecast = await sql<{ key: string; deals: string; amount: string; days: string }>`
        select concat_ws('/', pipeline_id, month, status, stage_id, owner_id, currency) as key, sum(deals)::text as deals,
               sum(amount)::text as amount, sum(days)::text as days
        from deal_forecast_sums group by 1 having sum(deals) <> 0 order by 1`.execute(t.db);
      return { counters: counters.rows, forecast: forecast.rows };
    };
    const shardsIn = async (table: 'deal_counters' | 'deal_forecast_sums') =>
      (await sql<{ shard: number }>`select distinct shard from ${sql.table(table)} order by shard`.execute(t.db)).rows.map((r) => r.shard);
    const zeroRows = async () =>
      (await sql<{ n: number }>`select (select count(*) from deal_counters where deals = 0)::int + (select count(*) from deal_forecast_sums where deals = 0)::int as n`.execute(t.db)).rows[0]!.n;

    const before = await snapshot();
    const summaryBefore = (await t.call({ method: 'GET', url: `/service/pipelines/${sales.id}/summary?status=all` })).json();
    const forecastBefore = (await t.call({ method: 'GET', url: `/service/pipelines/${sales.id}/forecast?from=2026-02-01&to=2026-03-31` })).json();
    expect((await shardsIn('deal_counters')).length).toBeGreaterThanOrEqual(3);
    expect(await zeroRows()).toBeGreaterThan(0);
    // 15 deals made, 3 deleted: the figures the compaction must keep.
    expect(before.counters.reduce((n, row) => n + Number(row.deals), 0)).toBe(12);

    const result = await compactKeptSums(t.db);
    expect(result.deal_counters.folded).toBeGreaterThan(0);
    expect(result.deal_counters.dropped).toBeGreaterThan(0);

    expect(await shardsIn('deal_counters')).toEqual([0]);
    expect(await shardsIn('deal_forecast_sums')).toEqual([0]);
    expect(await zeroRows()).toBe(0);
    expect(await snapshot()).toEqual(before);
    expect((await t.call({ method: 'GET', url: `/service/pipelines/${sales.id}/summary?status=all` })).json()).toEqual(summaryBefore);
    expect((await t.call({ method: 'GET', url: `/service/pipelines/${sales.id}/forecast?from=2026-02-01&to=2026-03-31` })).json()).toEqual(forecastBefore);

    // A second run finds nothing to do.
    expect(await compactKeptSums(t.db)).toEqual({ deal_counters: { folded: 0, dropped: 0 }, deal_forecast_sums: { folded: 0, dropped: 0 } });
  });

  it('loses nothing when it runs while other backends write', async () => {
    const t = await setupApp();
    const sales = await defaultPipeline(t.db);
    const stageIds = sales.stages.filter((s) => s.type === 'open').map((s) => s.id);
    const clients = await Promise.all(
      [0, 1, 2].map(async () => {
        const client = new pg.Client({ connectionString: t.url });
        await client.connect();
        return client;
      }),
    );
    let writing = true;
    const writers = clients.map(async (client, i) => {
      for (let round = 0; round < 40; round++) {
        await client.query('begin');
        await client.query(
          `insert into deals (title, amount, currency, pipeline_id, stage_id, status, close_date, owner_id, created_by_id)
           select 'W' || $1 || '-' || $2 || '-' || n, n, 'EUR', $3, $4, 'open', date '2026-01-01' + n * 7, 1, 1 from generate_series(1, 3) n`,
          [i, round, sales.id, stageIds[round % stageIds.length]],
        );
        await client.query(`update deals set stage_id = $1, amount = amount + 1 where title = $2`, [stageIds[(round + 1) % stageIds.length], `W${i}-${round}-1`]);
        if (round % 3 === 0) await client.query(`delete from deals where title like $1`, [`W${(i + 1) % 3}-${round - 3}-%`]);
        await client.query('commit');
      }
    });
    const compactions = (async () => {
      let runs = 0;
      while (writing || runs === 0) {
        await compactKeptSums(t.db);
        runs++;
      }
      return runs;
    })();
    try {
      await Promise.all(writers);
    } finally {
      writing = false;
      await Promise.all(clients.map((client) => client.end()));
    }
    expect(await compactions).toBeGreaterThan(0);
    await compactKeptSums(t.db);

    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from (
        (select pipeline_id, stage_id, status, owner_id, created_by_id, currency, count(*), sum(amount) from deals group by 1, 2, 3, 4, 5, 6
         except select pipeline_id, stage_id, status, owner_id, created_by_id, currency, deals, amount from deal_counters)
        union all
        (select pipeline_id, stage_id, status, owner_id, created_by_id, currency, deals, amount from deal_counters
         except select pipeline_id, stage_id, status, owner_id, created_by_id, currency, count(*), sum(amount) from deals group by 1, 2, 3, 4, 5, 6)
      ) drift`.execute(t.db);
    expect(rows[0]!.n).toBe(0);
    expect((await sql<{ n: number }>`select count(*)::int as n from deal_counters where shard <> 0`.execute(t.db)).rows[0]!.n).toBe(0);
  });
});
