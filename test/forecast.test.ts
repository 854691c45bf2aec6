import { beforeAll, describe, expect, it } from 'vitest';
import { setupApp, type TestContext } from './helpers/app.js';
import { createDeal, createPipeline, createUser, type TestPipeline, type TestUser } from './helpers/factories.js';

/**
 * The forecast against hand-computed figures: deals with known amounts, stage
 * probabilities, close dates, owners and outcomes, in the first quarter of 2026.
 */
let t: TestContext;
let pipeline: TestPipeline;
let ann: TestUser;
let bob: TestUser;
let cid: TestUser;

beforeAll(async () => {
  t = await setupApp();
  ann = await createUser(t.db, [], { name: 'Ann' });
  bob = await createUser(t.db, [], { name: 'Bob' });
  cid = await createUser(t.db, ['service:deals:viewown', 'service:pipelines:view'], { name: 'Cid' });
  pipeline = await createPipeline(t.db);
  const [a, b, won, lost] = pipeline.stages;
  const probabilities = [10, 50, 100, 0];
  for (const [i, stage] of pipeline.stages.entries()) {
    await t.db.updateTable('stages').set({ probability: probabilities[i]! }).where('id', '=', stage.id).execute();
  }
  const deal = async (values: { stage: number; amount: string; currency?: string; owner: number | null; close?: string }, dates: Record<string, string> = {}) => {
    const { id } = await createDeal(t.db, {
      pipelineId: pipeline.id,
      stageId: values.stage,
      amount: values.amount,
      currency: values.currency ?? 'USD',
      ownerId: values.owner,
      closeDate: values.close ?? null,
    });
    if (Object.keys(dates).length) await t.db.updateTable('deals').set(dates).where('id', '=', id).execute();
  };
  await deal({ stage: a!.id, amount: '1000.00', owner: ann.id, close: '2026-01-15' });
  await deal({ stage: b!.id, amount: '2000.00', owner: bob.id, close: '2026-01-31' });
  await deal({ stage: b!.id, amount: '300.50', currency: 'EUR', owner: ann.id, close: '2026-03-01' });
  await deal({ stage: a!.id, amount: '999.00', owner: ann.id, close: '2026-04-01' }); // after the period
  await deal({ stage: won!.id, amount: '5000.00', owner: ann.id }, { created_at: '2026-01-01T00:00:00Z', won_at: '2026-02-11T00:00:00Z' }); // 41 days
  await deal({ stage: won!.id, amount: '1500.00', owner: bob.id }, { created_at: '2026-02-01T00:00:00Z', won_at: '2026-02-21T12:00:00Z' }); // 20.5 days
  await deal({ stage: lost!.id, amount: '700.00', owner: bob.id }, { lost_at: '2026-03-10T09:00:00Z' });
  await deal({ stage: won!.id, amount: '100.00', owner: bob.id }, { won_at: '2025-12-31T23:00:00Z' }); // before the period
  await deal({ stage: a!.id, amount: '50.00', owner: null, close: '2026-02-10' });
  await deal({ stage: b!.id, amount: '400.00', owner: cid.id, close: '2026-02-02' });
});

const forecast = (query = 'from=2026-01-01&to=2026-03-31', as?: TestUser) =>
  t.call({ method: 'GET', url: `/service/pipelines/${pipeline.id}/forecast?${query}` }, as);

const none = { open: { count: 0, amount: 0, weighted: 0 }, won: { count: 0, amount: 0 } };

describe('GET /service/pipelines/{id}/forecast', () => {
  it('answers every figure as computed by hand, in total and per currency', async () => {
    const res = await forecast();
    expect(res.statusCode).toBe(200);
    const body = res.json().forecast;
    expect(body).toMatchObject({ pipeline: { id: pipeline.id }, from: '2026-01-01', to: '2026-03-31', months: ['2026-01', '2026-02', '2026-03'] });
    expect(body.totals).toEqual([
      {
        currency: 'EUR',
        open: { count: 1, amount: 300.5, weighted: 150.25 },
        won: { count: 0, amount: 0 },
        lost: { count: 0 },
        winRate: null,
        averageDaysToWin: null,
        months: [
          { month: '2026-01', ...none },
          { month: '2026-02', ...none },
          { month: '2026-03', open: { count: 1, amount: 300.5, weighted: 150.25 }, won: { count: 0, amount: 0 } },
        ],
      },
      {
        currency: 'USD',
        // 1000 × 10 % + 2000 × 50 % + 50 × 10 % + 400 × 50 %
        open: { count: 4, amount: 3450, weighted: 1305 },
        won: { count: 2, amount: 6500 },
        lost: { count: 1 },
        winRate: 0.6667,
        averageDaysToWin: 30.8, // (41 + 20.5) / 2
        months: [
          { month: '2026-01', open: { count: 2, amount: 3000, weighted: 1100 }, won: { count: 0, amount: 0 } },
          { month: '2026-02', open: { count: 2, amount: 450, weighted: 205 }, won: { count: 2, amount: 6500 } },
          { month: '2026-03', ...none },
        ],
      },
    ]);
  });

  it('answers the same figures by owner, deals without an owner last', async () => {
    const owners = (await forecast()).json().forecast.owners as { owner: { name: string } | null; currencies: { currency: string; open: object; won: object; winRate: number | null; averageDaysToWin: number | null }[] }[];
    expect(owners.map((o) => o.owner?.name ?? null)).toEqual(['Ann', 'Bob', 'Cid', null]);
    const [annF, bobF, cidF, nobody] = owners;
    expect(annF!.currencies.map((c) => [c.currency, c.open, c.won, c.winRate, c.averageDaysToWin])).toEqual([
      ['EUR', { count: 1, amount: 300.5, weighted: 150.25 }, { count: 0, amount: 0 }, null, null],
      ['USD', { count: 1, amount: 1000, weighted: 100 }, { count: 1, amount: 5000 }, 1, 41],
    ]);
    expect(bobF!.currencies.map((c) => [c.currency, c.open, c.won, c.winRate, c.averageDaysToWin])).toEqual([
      ['USD', { count: 1, amount: 2000, weighted: 1000 }, { count: 1, amount: 1500 }, 0.5, 20.5],
    ]);
    expect(cidF!.currencies[0]).toMatchObject({ currency: 'USD', open: { count: 1, amount: 400, weighted: 200 } });
    expect(nobody!.currencies[0]).toMatchObject({ currency: 'USD', open: { count: 1, amount: 50, weighted: 5 } });
  });

  it('answers every owner’s figures in full, month by month', async () => {
    const body = (await forecast()).json().forecast;
    expect(body.pipeline).toEqual({ id: pipeline.id, name: pipeline.name });
    const usd = (figures: object) => ({ currency: 'USD', lost: { count: 0 }, winRate: null, averageDaysToWin: null, ...figures });
    const open = (count: number, amount: number, weighted: number) => ({ open: { count, amount, weighted }, won: { count: 0, amount: 0 } });
    const won = (count: number, amount: number) => ({ open: { count: 0, amount: 0, weighted: 0 }, won: { count, amount } });
    expect(body.owners).toEqual([
      {
        owner: { id: ann.id, name: 'Ann' },
        currencies: [
          {
            currency: 'EUR',
            ...open(1, 300.5, 150.25), // 300.50 × 50 %
            lost: { count: 0 },
            winRate: null,
            averageDaysToWin: null,
            months: [{ month: '2026-01', ...none }, { month: '2026-02', ...none }, { month: '2026-03', ...open(1, 300.5, 150.25) }],
          },
          usd({
            open: { count: 1, amount: 1000, weighted: 100 }, // 1000 × 10 %; the 999 closing in April is outside
            won: { count: 1, amount: 5000 },
            winRate: 1, // 1 won, 0 lost
            averageDaysToWin: 41, // 1 Jan → 11 Feb
            months: [{ month: '2026-01', ...open(1, 1000, 100) }, { month: '2026-02', ...won(1, 5000) }, { month: '2026-03', ...none }],
          }),
        ],
      },
      {
        owner: { id: bob.id, name: 'Bob' },
        currencies: [
          usd({
            open: { count: 1, amount: 2000, weighted: 1000 }, // 2000 × 50 %
            won: { count: 1, amount: 1500 }, // the 100 won on 31 Dec 2025 is outside
            lost: { count: 1 },
            winRate: 0.5,
            averageDaysToWin: 20.5, // 1 Feb 00:00 → 21 Feb 12:00
            // A lost deal counts in the win rate only: months carry open and won figures.
            months: [{ month: '2026-01', ...open(1, 2000, 1000) }, { month: '2026-02', ...won(1, 1500) }, { month: '2026-03', ...none }],
          }),
        ],
      },
      {
        owner: { id: cid.id, name: 'Cid' },
        currencies: [
          usd({
            ...open(1, 400, 200),
            months: [{ month: '2026-01', ...none }, { month: '2026-02', ...open(1, 400, 200) }, { month: '2026-03', ...none }],
          }),
        ],
      },
      {
        owner: null,
        currencies: [
          usd({ ...open(1, 50, 5), months: [{ month: '2026-01', ...none }, { month: '2026-02', ...open(1, 50, 5) }, { month: '2026-03', ...none }] }),
        ],
      },
    ]);
  });

  it('includes the first and the last day of the period whole', async () => {
    // Won at 00:00 on 11 Feb: a period of that one day holds it.
    const first = (await forecast('from=2026-02-11&to=2026-02-11')).json().forecast;
    expect(first.months).toEqual(['2026-02']);
    expect(first.totals).toEqual([
      { currency: 'USD', open: { count: 0, amount: 0, weighted: 0 }, won: { count: 1, amount: 5000 }, lost: { count: 0 }, winRate: 1, averageDaysToWin: 41, months: [{ month: '2026-02', open: { count: 0, amount: 0, weighted: 0 }, won: { count: 1, amount: 5000 } }] },
    ]);
    // Won at 12:00 on 21 Feb: a period ending that day still holds it.
    const last = (await forecast('from=2026-02-12&to=2026-02-21')).json().forecast;
    expect(last.totals[0]).toMatchObject({ currency: 'USD', won: { count: 1, amount: 1500 }, winRate: 1, averageDaysToWin: 20.5, open: { count: 0 } });
    // An expected close date on the period's only day.
    const close = (await forecast('from=2026-01-31&to=2026-01-31')).json().forecast;
    expect(close.totals.map((c: { currency: string; open: object; won: object }) => [c.currency, c.open, c.won])).toEqual([
      ['USD', { count: 1, amount: 2000, weighted: 1000 }, { count: 0, amount: 0 }],
    ]);
    // Nothing closes, is won or lost between 22 and 28 Feb.
    expect((await forecast('from=2026-02-22&to=2026-02-28')).json().forecast).toMatchObject({ totals: [], owners: [] });
  });

  it('agrees with the deal list on what an own-deals seller sees', async () => {
    const mine = (await forecast(undefined, cid)).json().forecast;
    expect(mine.totals).toHaveLength(1);
    expect(mine.totals[0]).toMatchObject({ currency: 'USD', open: { count: 1, amount: 400, weighted: 200 }, won: { count: 0 } });
    const list = (await t.call({ method: 'GET', url: `/service/deals?pipeline=${pipeline.id}&status=open` }, cid)).json();
    expect(list.deals.map((d: { amount: number }) => d.amount)).toEqual([400]);
  });

  it('refuses a period backwards or over 36 months, and a missing pipeline', async () => {
    expect((await forecast('from=2026-03-01&to=2026-01-01')).statusCode).toBe(422);
    const long = await forecast('from=2024-01-01&to=2027-01-31');
    expect(long.statusCode).toBe(422);
    expect(long.json().errors[0].message).toMatch(/36 months/);
    expect((await forecast('from=2026-02-30')).statusCode).toBe(422);
    expect((await t.call({ method: 'GET', url: '/service/pipelines/999999/forecast' })).statusCode).toBe(404);
  });

  it('defaults to the current quarter', async () => {
    const body = (await forecast('')).json().forecast;
    expect(body.months).toHaveLength(3);
    expect(new Date(`${body.from}T00:00:00Z`).getUTCMonth() % 3).toBe(0);
  });
});
