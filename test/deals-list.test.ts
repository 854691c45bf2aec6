import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { setupApp, type TestContext } from './helpers/app.js';
import { createDeal, createPipeline, createUser, defaultPipeline } from './helpers/factories.js';

interface Summary {
  id: number;
  title: string;
  amount: number;
  closeDate: string | null;
}

async function list(t: TestContext, query: string, as?: { username: string; password: string }) {
  const res = await t.call({ method: 'GET', url: `/service/deals?${query}` }, as);
  expect(res.statusCode).toBe(200);
  return res.json() as { total: number; totalApproximate: boolean; page: number; limit: number; pages: number; deals: Summary[]; next: string | null };
}

/** Follows `next` from the first page to the end. */
async function walk(t: TestContext, query: string): Promise<number[]> {
  const ids: number[] = [];
  let page = await list(t, query);
  ids.push(...page.deals.map((d) => d.id));
  while (page.next) {
    page = await list(t, `${query}&after=${encodeURIComponent(page.next)}`);
    ids.push(...page.deals.map((d) => d.id));
  }
  return ids;
}

describe('deal list', () => {
  it('pages with page/limit, reports total and pages, and filters', async () => {
    const t = await setupApp();
    const p = await createPipeline(t.db);
    const bob = await createUser(t.db, []);
    for (let i = 0; i < 7; i++) await createDeal(t.db, { title: `Sales ${i}` });
    for (let i = 0; i < 3; i++) await createDeal(t.db, { title: `Other ${i}`, pipelineId: p.id, ownerId: bob.id, closeDate: `2026-0${i + 1}-15` });
    await createDeal(t.db, { title: 'Won one', stageId: p.stages[2]!.id });

    const first = await list(t, 'limit=4');
    expect(first).toMatchObject({ total: 11, totalApproximate: false, page: 1, limit: 4, pages: 3 });
    expect(first.deals).toHaveLength(4);
    const third = await list(t, 'limit=4&page=3');
    expect(third.deals).toHaveLength(3);
    expect(third.next).toBeNull();

    expect((await list(t, `pipeline=${p.id}`)).total).toBe(4);
    expect((await list(t, `stage=${p.stages[2]!.id}`)).deals.map((d) => d.title)).toEqual(['Won one']);
    expect((await list(t, 'status=won')).total).toBe(1);
    expect((await list(t, `owner=${bob.id}`)).total).toBe(3);
    const search = await list(t, 'search=other');
    expect(search.deals.map((d) => d.title)).toEqual(['Other 0', 'Other 1', 'Other 2']);
    expect(search.totalApproximate).toBe(false);
    const range = await list(t, 'closeDateFrom=2026-02-01&closeDateTo=2026-03-31');
    expect(range.deals.map((d) => d.title)).toEqual(['Other 1', 'Other 2']);
    expect(range.total).toBe(2);
  });

  it('treats search wildcards literally', async () => {
    const t = await setupApp();
    await createDeal(t.db, { title: '100% done' });
    await createDeal(t.db, { title: '1000 units' });
    expect((await list(t, 'search=0%25')).deals.map((d) => d.title)).toEqual(['100% done']);
  });

  it('sorts by each orderBy in both directions, and cursor pages give the same order as one big page', async () => {
    const t = await setupApp();
    const amounts = ['5', '1.5', '5', '0', '20', '1.5', '7.25'];
    const dates = ['2026-03-01', null, '2026-01-01', '2026-03-01', null, '2026-02-01', '2026-01-01'];
    for (let i = 0; i < amounts.length; i++) {
      await createDeal(t.db, { title: `T${(i * 3) % 7}`, amount: amounts[i], closeDate: dates[i] });
    }
    for (const orderBy of ['id', 'title', 'amount', 'closeDate', 'createdAt', 'updatedAt']) {
      for (const dir of ['asc', 'desc']) {
        const all = await list(t, `orderBy=${orderBy}&orderByDir=${dir}&limit=200`);
        const walked = await walk(t, `orderBy=${orderBy}&orderByDir=${dir}&limit=2`);
        expect(walked, `${orderBy} ${dir}`).toEqual(all.deals.map((d) => d.id));
        const key = (d: Summary) => (orderBy === 'amount' ? d.amount : orderBy === 'title' ? d.title : orderBy === 'closeDate' ? d.closeDate : d.id);
        const values = all.deals.map(key);
        const sorted = [...values].sort((a, b) => {
          if (a === b) return 0;
          if (a === null) return dir === 'asc' ? 1 : -1; // NULL close dates last ascending, first descending
          if (b === null) return dir === 'asc' ? -1 : 1;
          return (a < b ? -1 : 1) * (dir === 'asc' ? 1 : -1);
        });
        expect(values, `${orderBy} ${dir}`).toEqual(sorted);
      }
    }
  });

  it('rejects a cursor of another sort order or a forged one with 422', async () => {
    const t = await setupApp();
    for (let i = 0; i < 3; i++) await createDeal(t.db);
    const page = await list(t, 'limit=1&orderBy=title');
    const mismatch = await t.call({ method: 'GET', url: `/service/deals?limit=1&after=${page.next}` });
    expect(mismatch.statusCode).toBe(422);
    expect(mismatch.json().errors[0].details).toHaveProperty('after');
    const forged = await t.call({ method: 'GET', url: '/service/deals?after=bm90LWpzb24' });
    expect(forged.statusCode).toBe(422);
    const badLimit = await t.call({ method: 'GET', url: '/service/deals?limit=201' });
    expect(badLimit.statusCode).toBe(422);
    expect(badLimit.json().errors[0].details).toHaveProperty('limit');
  });

  it('keeps the maintained counters and sums equal to the rows through creates, edits, moves, reopens, reassigns, deletes and user removal', async () => {
    const t = await setupApp();
    const sales = await defaultPipeline(t.db);
    const won = sales.stages.find((s) => s.type === 'won')!;
    const lost = sales.stages.find((s) => s.type === 'lost')!;
    const bob = await createUser(t.db, []);
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push((await createDeal(t.db, { ownerId: i % 2 ? bob.id : 1 })).id);
    await t.call({ method: 'POST', url: `/service/${ids[0]}/stage`, payload: { stage_id: sales.stages[4]!.id } });
    const edited = await t.call({ method: 'PATCH', url: `/service/${ids[1]}`, payload: { deal: { amount: 1234.5, currency: 'EUR', closeDate: '2026-05-17' } } });
    expect(edited.statusCode).toBe(200);
    await t.call({ method: 'POST', url: `/service/${ids[4]}/stage`, payload: { stage_id: won.id } });
    expect((await t.call({ method: 'PATCH', url: `/service/${ids[4]}`, payload: { deal: { amount: 99 } } })).statusCode).toBe(200);
    await t.call({ method: 'POST', url: `/service/${ids[5]}/stage`, payload: { stage_id: won.id } });
    await t.call({ method: 'POST', url: `/service/${ids[5]}/stage`, payload: { stage_id: sales.stages[0]!.id } });
    await t.call({ method: 'POST', url: '/service/deals/batch', payload: { ids: [ids[1], ids[2]], action: 'reassign', owner: bob.id } });
    expect((await t.call({ method: 'POST', url: `/service/${ids[2]}/stage`, payload: { stage_id: lost.id, lost_reason: 'Budget' } })).statusCode).toBe(200);
    await t.call({ method: 'DELETE', url: `/service/${ids[3]}` });
    await t.db.deleteFrom('users').where('id', '=', bob.id).execute();

    // Both ways round: no group of the rows missing from the kept figures, and no kept figure without its rows.
    const drift = async (rows: ReturnType<typeof sql>, kept: ReturnType<typeof sql>) => {
      const { rows: found } = await sql<{ n: number }>`
        select (select count(*) from (${rows} except ${kept}) a)::int + (select count(*) from (${kept} except ${rows}) b)::int as n`.execute(t.db);
      return found[0]!.n;
    };
    expect(
      await drift(
        sql`select pipeline_id, stage_id, status, coalesce(owner_id, 0), coalesce(created_by_id, 0), currency, count(*), sum(amount)
            from deals group by 1, 2, 3, 4, 5, 6`,
        sql`select pipeline_id, stage_id, status, owner_id, created_by_id, currency, sum(deals), sum(amount)
            from deal_counters group by 1, 2, 3, 4, 5, 6 having sum(deals) <> 0`,
      ),
    ).toBe(0);
    expect(
      await drift(
        sql`select pipeline_id, status, stage_id, coalesce(owner_id, 0), currency,
                   case status when 'open' then date_trunc('month', close_date::timestamp)::date
                               when 'won' then date_trunc('month', won_at at time zone 'UTC')::date
                               else date_trunc('month', lost_at at time zone 'UTC')::date end as month,
                   count(*), sum(amount), round(sum(case when status = 'won' then extract(epoch from won_at - created_at) / 86400 else 0 end), 6)
            from deals group by 1, 2, 3, 4, 5, 6
            having bool_and(case status when 'open' then close_date when 'won' then won_at::date else lost_at::date end is not null)`,
        sql`select pipeline_id, status, stage_id, owner_id, currency, month, sum(deals), sum(amount), round(sum(days), 6)
            from deal_forecast_sums group by 1, 2, 3, 4, 5, 6 having sum(deals) <> 0`,
      ),
    ).toBe(0);
    // The data above reached every kind of figure the sums keep.
    const { rows: kinds } = await sql<{ status: string }>`select distinct status from deal_forecast_sums where deals <> 0`.execute(t.db);
    expect(kinds.map((k) => k.status).sort()).toEqual(['lost', 'open', 'won']);
    expect((await list(t, '')).total).toBe(5);
    expect((await list(t, 'status=won')).total).toBe(2);
  });

  it('caps the count with a title search past 1,000 matches and flags it approximate', async () => {
    const t = await setupApp();
    const sales = await defaultPipeline(t.db);
    await sql`
      insert into deals (title, currency, pipeline_id, stage_id, status, created_by_id, owner_id)
      select 'Bulk ' || n, 'USD', ${sales.id}, ${sales.stages[0]!.id}, 'open', 1, 1 from generate_series(1, 1050) n`.execute(t.db);
    const searched = await list(t, 'search=bulk&limit=5');
    expect(searched).toMatchObject({ total: 1000, totalApproximate: true, pages: 200 });
    const exact = await list(t, 'limit=5');
    expect(exact).toMatchObject({ total: 1050, totalApproximate: false });
    const ranged = await list(t, 'closeDateFrom=2020-01-01');
    expect(ranged).toMatchObject({ total: 0, totalApproximate: false });
  });
});
