import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { startBrowserApp, type BrowserTest } from './helpers/browser.js';
import { createDeal, createPipeline, createUser, defaultPipeline, type TestPipeline, type TestUser } from './helpers/factories.js';

/**
 * The forecast page in a real browser: charts drawn (canvas), tables equal to
 * the API's JSON, the CSV download (hand-computed rows, formula-injection
 * guard), and a 403 for a user who may not view deals.
 */

let t: BrowserTest;
let pipeline: TestPipeline;
let other: TestPipeline;
let noRights: TestUser;
const ANN = 'Ann Archer';
const BO = 'Bo Brandt';
// Owners of the Renewals deals: names a user chose, shown as text and defused in the CSV.
const MARKUP = '<i>Eve</i> Evans';
const FORMULA = '=HYPERLINK("http://evil.example","Bo")';

interface Figures {
  currency: string;
  open: { count: number; amount: number; weighted: number };
  won: { count: number; amount: number };
  lost: { count: number };
  winRate: number | null;
  averageDaysToWin: number | null;
  months: { month: string; open: Figures['open']; won: Figures['won'] }[];
}
interface ForecastJson {
  pipeline: { id: number; name: string };
  months: string[];
  totals: Figures[];
  owners: { owner: { name: string } | null; currencies: Figures[] }[];
}

beforeAll(async () => {
  t = await startBrowserApp();
  pipeline = await defaultPipeline(t.db);
  other = await createPipeline(t.db, { name: 'Renewals' });
  const open = pipeline.stages.filter((s) => s.type === 'open');
  const won = pipeline.stages.find((s) => s.type === 'won')!;
  const lost = pipeline.stages.find((s) => s.type === 'lost')!;
  await t.db.updateTable('stages').set({ probability: 10 }).where('id', '=', open[0]!.id).execute();
  await t.db.updateTable('stages').set({ probability: 50 }).where('id', '=', open[1]!.id).execute();
  const ann = await createUser(t.db, [], { name: ANN });
  const bo = await createUser(t.db, [], { name: BO });
  const eve = await createUser(t.db, [], { name: MARKUP });
  const formula = await createUser(t.db, [], { name: FORMULA });
  noRights = await createUser(t.db, ['service:pipelines:view'], { name: 'Nadia No-Deals' });
  const deal = async (stage: number, amount: string, owner: number | null, close: string | null, dates: Record<string, string> = {}, currency = 'USD') => {
    const { id } = await createDeal(t.db, { pipelineId: pipeline.id, stageId: stage, amount, currency, ownerId: owner, closeDate: close });
    if (Object.keys(dates).length) await t.db.updateTable('deals').set(dates).where('id', '=', id).execute();
  };
  await deal(open[0]!.id, '1000', ann.id, '2026-01-15');
  await deal(won.id, '5000', ann.id, null, { created_at: '2026-01-01T00:00:00Z', won_at: '2026-02-11T00:00:00Z' }); // 41 days
  await deal(open[1]!.id, '2000', bo.id, '2026-02-20');
  await deal(lost.id, '800', bo.id, null, { lost_at: '2026-03-10T09:00:00Z' });
  await deal(won.id, '1500', bo.id, null, { created_at: '2026-02-01T00:00:00Z', won_at: '2026-02-21T12:00:00Z' }); // 20.5 days
  await deal(open[0]!.id, '50', null, '2026-02-10');
  await deal(open[1]!.id, '300.50', ann.id, '2026-03-01', {}, 'EUR');
  await deal(open[0]!.id, '999', ann.id, '2026-04-01'); // after the period
  await createDeal(t.db, { pipelineId: other.id, stageId: other.stages[0]!.id, amount: '70', ownerId: eve.id, closeDate: '2026-02-01' });
  await createDeal(t.db, { pipelineId: other.id, stageId: other.stages[0]!.id, amount: '30', ownerId: formula.id, closeDate: '2026-02-15' });
  await t.login();
});

const usd = (n: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(n);
const fmt = (n: number, currency: string) => new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(n);
const rate = (r: number | null) => (r === null ? '—' : `${(r * 100).toFixed(1)}%`);
const days = (d: number | null) => (d === null ? '—' : `${d.toFixed(1)} days`);

async function showQ1() {
  const { page } = t;
  await page.goto(`${t.origin}/service/forecast`);
  await page.fill('input[name=from]', '2026-01');
  await page.fill('input[name=to]', '2026-03');
  await Promise.all([page.waitForURL(/to=2026-03/), page.click('.filters button.primary')]);
}

describe('forecast page', () => {
  it('is in the top bar, opens on the default pipeline and the current quarter', async () => {
    const { page } = t;
    await page.goto(`${t.origin}/service/board`);
    await Promise.all([page.waitForURL(/\/service\/forecast$/), page.click('.topbar nav a:has-text("Forecast")')]);
    const options = await page.locator('select[name=pipeline] option').allTextContents();
    expect(options[0]).toBe(`${pipeline.name} (default)`);
    expect(options).toContain('Renewals');
    await expect(page.locator('select[name=pipeline]').inputValue()).resolves.toBe(String(pipeline.id));
    const now = new Date();
    const first = Math.floor(now.getUTCMonth() / 3) * 3;
    const month = (m: number) => `${now.getUTCFullYear()}-${String(m + 1).padStart(2, '0')}`;
    await expect(page.locator('input[name=from]').inputValue()).resolves.toBe(month(first));
    await expect(page.locator('input[name=to]').inputValue()).resolves.toBe(month(first + 2));
  });

  it('draws the charts and shows the JSON’s figures in its tables', async () => {
    const { page } = t;
    await showQ1();
    const json = (await t.call({ method: 'GET', url: `/service/pipelines/${pipeline.id}/forecast?from=2026-01-01&to=2026-03-31` })).json().forecast as ForecastJson;
    expect(json.totals.map((c) => c.currency)).toEqual(['EUR', 'USD']);
    // Three charts per currency, each drawn on a canvas by uPlot.
    await page.locator('.chart[data-currency=USD][data-chart=months] canvas').waitFor();
    for (const chart of ['months', 'winRate', 'days']) expect(await page.locator(`.chart[data-currency=USD][data-chart=${chart}] canvas`).count()).toBe(1);
    // No euro deal closed in the period: its owner charts say so in words instead of drawing empty axes.
    expect(await page.locator('.chart[data-currency=EUR][data-chart=months] canvas').count()).toBe(1);
    await expect(page.locator('.chart[data-currency=EUR][data-chart=winRate]').textContent()).resolves.toBe('No deal was won or lost in this period.');
    await expect(page.locator('.chart[data-currency=USD][data-chart=months] .u-legend').textContent()).resolves.toContain('Weighted');

    for (const c of json.totals) {
      const section = page.locator(`.forecast-currency[data-currency=${c.currency}]`);
      const rows = await section.locator('table[data-table=months] tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => cell.textContent)));
      const label = (m: string) => new Date(`${m}-01T00:00:00Z`).toLocaleDateString('en-US', { month: 'short', year: 'numeric', timeZone: 'UTC' });
      expect(rows).toEqual(
        c.months.map((m) => [label(m.month), String(m.open.count), fmt(m.open.amount, c.currency), fmt(m.open.weighted, c.currency), String(m.won.count), fmt(m.won.amount, c.currency)]),
      );
      const owners = await section.locator('table[data-table=owners] tr:is(tbody tr, tfoot tr)').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => cell.textContent)));
      const line = (name: string, f: Figures) => [
        name,
        String(f.open.count),
        fmt(f.open.amount, c.currency),
        fmt(f.open.weighted, c.currency),
        String(f.won.count),
        fmt(f.won.amount, c.currency),
        String(f.lost.count),
        rate(f.winRate),
        days(f.averageDaysToWin),
      ];
      const expected = json.owners.flatMap((o) => o.currencies.filter((f) => f.currency === c.currency).map((f) => line(o.owner?.name ?? 'No owner', f)));
      expect(owners).toEqual([...expected, line('All owners', c)]);
    }
    // Hand-computed anchors: open 1000×10 % + 2000×50 % + 50×10 %; win rate 2 of 3; (41 + 20.5) / 2 days.
    const total = page.locator('.forecast-currency[data-currency=USD] table[data-table=owners] tfoot tr');
    await expect(total.textContent()).resolves.toBe(`All owners3${usd(3050)}${usd(1105)}2${usd(6500)}166.7%30.8 days`);
    await page.setViewportSize({ width: 1440, height: 1660 });
    await t.screenshot('forecast');
    await page.setViewportSize({ width: 1440, height: 900 });
    expect(t.dialogs).toEqual([]);
  });

  it('downloads the table as CSV with hand-computed rows and formula-like names defused', async () => {
    const { page } = t;
    await showQ1();
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('a:has-text("Download CSV")')]);
    expect(download.suggestedFilename()).toBe(`forecast-pipeline-${pipeline.id}-2026-01-01-to-2026-03-31.csv`);
    const text = readFileSync((await download.path())!, 'utf8');
    const lines = text.split('\r\n');
    const p = `"${pipeline.name}"`;
    expect(lines[0]).toBe(
      '"Pipeline","Currency","Row","Name","Open deals","Open amount","Weighted amount","Won deals","Won amount","Lost deals","Win rate","Average days to win"',
    );
    expect(lines.at(-1)).toBe('');
    expect(lines.slice(1, -1).sort()).toEqual(
      [
        `${p},"EUR","Month","2026-01",0,0,0,0,0,,,`,
        `${p},"EUR","Month","2026-02",0,0,0,0,0,,,`,
        `${p},"EUR","Month","2026-03",1,300.5,150.25,0,0,,,`,
        `${p},"EUR","Owner","${ANN}",1,300.5,150.25,0,0,0,,`,
        `${p},"EUR","Total","2026-01-01 to 2026-03-31",1,300.5,150.25,0,0,0,,`,
        `${p},"USD","Month","2026-01",1,1000,100,0,0,,,`,
        `${p},"USD","Month","2026-02",2,2050,1005,2,6500,,,`,
        `${p},"USD","Month","2026-03",0,0,0,0,0,,,`,
        `${p},"USD","Owner","${ANN}",1,1000,100,1,5000,0,1,41`,
        `${p},"USD","Owner","${BO}",1,2000,1000,1,1500,1,0.5,20.5`,
        `${p},"USD","Owner","No owner",1,50,5,0,0,0,,`,
        `${p},"USD","Total","2026-01-01 to 2026-03-31",3,3050,1105,2,6500,1,0.6667,30.8`,
      ].sort(),
    );
    // Served as a download, from the page session.
    const res = await page.request.get(`${t.origin}/service/forecast.csv?pipeline=${other.id}&from=2026-02&to=2026-02`);
    expect(res.status()).toBe(200);
    expect(res.headers()['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers()['content-disposition']).toBe(`attachment; filename="forecast-pipeline-${other.id}-2026-02-01-to-2026-02-28.csv"`);
    const renewals = (await res.text()).split('\r\n');
    expect(renewals).toContain(`"Renewals","USD","Owner","${MARKUP}",1,70,0,0,0,0,,`);
    expect(renewals).toContain(`"Renewals","USD","Owner","'=HYPERLINK(""http://evil.example"",""Bo"")",1,30,0,0,0,0,,`);
    expect(renewals).toContain(`"Renewals","USD","Total","2026-02-01 to 2026-02-28",2,100,0,0,0,0,,`);
  });

  it('switches pipeline, and shows a refused period next to its input keeping what was typed', async () => {
    const { page } = t;
    await showQ1();
    await Promise.all([page.waitForURL(new RegExp(`pipeline=${other.id}`)), page.selectOption('select[name=pipeline]', String(other.id))]);
    await expect(page.locator('h1').textContent()).resolves.toContain('Renewals');
    await expect(page.locator('table[data-table=owners] tfoot tr').textContent()).resolves.toContain(usd(100));
    // Names are text, never markup, in the tables and on the charts' axes.
    await expect(page.locator('table[data-table=owners] tbody th', { hasText: 'Evans' }).textContent()).resolves.toBe(MARKUP);
    expect(await page.locator('main i').count()).toBe(0);
    expect(t.dialogs).toEqual([]);
    await page.fill('input[name=from]', '2026-05');
    await page.fill('input[name=to]', '2026-02');
    await Promise.all([page.waitForURL(/from=2026-05/), page.click('.filters button.primary')]);
    await expect(page.locator('.field.invalid').textContent()).resolves.toContain('Must not be before from');
    await expect(page.locator('input[name=from]').inputValue()).resolves.toBe('2026-05');
    await expect(page.locator('input[name=to]').inputValue()).resolves.toBe('2026-02');
    expect(await page.locator('.chart').count()).toBe(0);
  });

  it('answers bad input with words, never a 500', async () => {
    const html = { accept: 'text/html' };
    const month = await t.call({ method: 'GET', url: '/service/forecast?from=2026-13&to=2026-02', headers: html });
    expect(month.statusCode).toBe(422);
    expect(month.body).toContain('Must be a month in YYYY-MM format');
    expect(month.body).toContain('value="2026-13"');
    const long = await t.call({ method: 'GET', url: '/service/forecast?from=2023-01&to=2026-03', headers: html });
    expect(long.statusCode).toBe(422);
    expect(long.body).toContain('at most 36 months');
    expect((await t.call({ method: 'GET', url: '/service/forecast?pipeline=999999', headers: html })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: '/service/forecast.csv?from=2026-1', headers: html })).statusCode).toBe(422);
    expect((await t.call({ method: 'GET', url: '/service/forecast.csv?pipeline=999999', headers: html })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: '/service/forecast.csv?from=2026-03&to=2026-01', headers: html })).statusCode).toBe(422);
  });

  it('refuses a user who may not view deals (403, no link)', async () => {
    const { page } = t;
    await t.logout();
    await t.login(noRights);
    const res = await page.goto(`${t.origin}/service/forecast`);
    expect(res!.status()).toBe(403);
    expect(await page.locator('.topbar nav a:has-text("Forecast")').count()).toBe(0);
    expect((await page.request.get(`${t.origin}/service/forecast.csv?pipeline=${pipeline.id}`)).status()).toBe(403);
  });
});
