import { beforeAll, describe, expect, it } from 'vitest';
import { startBrowserApp, type BrowserTest } from './helpers/browser.js';
import { createDeal, createUser, defaultPipeline, type TestPipeline, type TestUser } from './helpers/factories.js';

/** The deals table in a real browser: sorting, cursor pages, batch actions with per-item results. */

let t: BrowserTest;
let pipeline: TestPipeline;
let rep: TestUser;
const OWNERS = ['Dana Diaz', 'Eli Ito', 'Farah Khan'];

beforeAll(async () => {
  t = await startBrowserApp();
  pipeline = await defaultPipeline(t.db);
  rep = await createUser(t.db, ['service:pipelines:view', 'service:deals:viewown', 'service:deals:viewother', 'service:deals:editown', 'service:deals:deleteown'], { name: 'Rita Rep' });
  const owners = [await createUser(t.db, [], { name: OWNERS[0] }), await createUser(t.db, [], { name: OWNERS[1] }), await createUser(t.db, [], { name: OWNERS[2] })];
  const companies = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark', 'Wayne', 'Wonka', 'Tyrell', 'Cyberdyne', 'Soylent', 'Aperture'];
  for (let i = 0; i < 35; i++) {
    const owner = owners[i % 3]!;
    await createDeal(t.db, {
      title: `${companies[i % companies.length]} ${['renewal', 'expansion', 'pilot'][i % 3]} ${2026 + (i % 2)}`,
      amount: String(1000 + i * 750),
      closeDate: `2026-${String((i % 12) + 1).padStart(2, '0')}-15`,
      stageId: pipeline.stages[i % 4]!.id,
      ownerId: owner.id,
      createdById: owner.id,
    });
  }
  await t.login();
});

describe('deals table', () => {
  it('lists, sorts and pages by cursor', async () => {
    const { page } = t;
    await page.goto(`${t.origin}/service/deals`);
    await expect(page.locator('table.deals tbody tr').count()).resolves.toBe(30);
    await expect(page.locator('main').textContent()).resolves.toContain('35 deals');
    await page.click('th a:has-text("Amount")');
    await page.waitForURL(/orderBy=amount/);
    await expect(page.locator('table.deals tbody tr td.num').first().textContent()).resolves.toBe('$1,000.00');
    await page.click('th a:has-text("Amount")');
    await page.waitForURL(/orderByDir=desc/);
    await expect(page.locator('table.deals tbody tr td.num').first().textContent()).resolves.toBe('$26,500.00');
    await t.screenshot('deals-table');
    await page.click('.pager a.button');
    await page.waitForURL(/after=/);
    await expect(page.locator('table.deals tbody tr').count()).resolves.toBe(5);
    await expect(page.locator('table.deals tbody tr td.num').last().textContent()).resolves.toBe('$1,000.00');
  });

  it('filters by owner and keeps the API unchanged for JSON clients', async () => {
    const { page } = t;
    await page.goto(`${t.origin}/service/deals`);
    await page.selectOption('select[name=owner]', { label: OWNERS[1]! });
    await page.waitForURL(/owner=/);
    const owners = await page.locator('table.deals tbody tr td:nth-child(6)').allTextContents();
    expect(owners.length).toBeGreaterThan(0);
    expect(new Set(owners)).toEqual(new Set([OWNERS[1]]));
    const api = await t.call({ method: 'GET', url: '/service/deals?limit=5' });
    expect(api.json()).toMatchObject({ total: 35, limit: 5 });
  });

  it('moves the selected deals to a stage and shows each result', async () => {
    const { page } = t;
    const won = pipeline.stages.find((s) => s.type === 'won')!;
    await page.goto(`${t.origin}/service/deals?orderBy=amount&orderByDir=asc`);
    const ids = await page.locator('tbody input[type=checkbox]').evaluateAll((boxes) => boxes.slice(0, 2).map((b) => Number((b as HTMLInputElement).value)));
    const titles = await page.locator('tbody td.title').evaluateAll((cells) => cells.slice(0, 2).map((c) => c.textContent));
    for (const id of ids) await page.check(`tbody input[value="${id}"]`);
    await page.selectOption('#batch select[name=action]', 'move_stage');
    await page.selectOption('#batch select[name=stage_id]', String(won.id));
    await page.click('#batch button.primary');
    await page.locator('#batch-results', { hasText: '2 moved, 0 failed' }).waitFor();
    // One line per deal: its title and what happened to it.
    const lines = await page.locator('#batch-results li').evaluateAll((items) => items.map((li) => [...li.children].map((c) => c.textContent)));
    expect(lines).toEqual(titles.map((title) => [title, 'moved']));
    for (const id of ids) expect((await t.call({ method: 'GET', url: `/service/${id}/view` })).json().deal.status).toBe('won');
  });

  it('reassigns the selected deals to an owner, each result shown, a deal gone meanwhile named as failed', async () => {
    const { page } = t;
    await page.goto(`${t.origin}/service/deals?orderBy=amount&orderByDir=desc`);
    const rows = await page.locator('tbody tr').evaluateAll((trs) =>
      trs.slice(0, 3).map((tr) => ({ id: Number(tr.querySelector('input')!.value), title: tr.querySelector('td.title')!.textContent! })),
    );
    for (const row of rows) await page.check(`tbody input[value="${row.id}"]`);
    // Someone deletes the third deal while the table is open.
    const gone = rows[2]!;
    expect((await t.call({ method: 'DELETE', url: `/service/${gone.id}` })).statusCode).toBe(200);
    await page.selectOption('#batch select[name=action]', 'reassign');
    await page.selectOption('#batch select[name=owner]', { label: OWNERS[2]! });
    await page.click('#batch button.primary');
    await page.locator('#batch-results', { hasText: '2 reassigned, 1 failed' }).waitFor();
    const lines = await page.locator('#batch-results li').evaluateAll((items) => items.map((li) => [...li.children].map((c) => [c.className, c.textContent])));
    expect(lines.slice(0, 2)).toEqual(rows.slice(0, 2).map((row) => [['', row.title], ['ok', 'reassigned']]));
    expect(lines[2]![0]).toEqual(['', `Deal ${gone.id}`]);
    expect(lines[2]![1]![0]).toBe('fail');
    expect(lines[2]![1]![1]).toMatch(/not found/i);
    for (const row of rows.slice(0, 2)) expect((await t.call({ method: 'GET', url: `/service/${row.id}/view` })).json().deal.owner.name).toBe(OWNERS[2]);
  });

  it('filters by stage with the list API’s own query', async () => {
    const { page } = t;
    const stage = pipeline.stages[1]!;
    await page.goto(`${t.origin}/service/deals`);
    await page.selectOption('select[name=stage]', String(stage.id));
    await page.waitForURL(new RegExp(`stage=${stage.id}`));
    await expect(page.locator('select[name=stage]').inputValue()).resolves.toBe(String(stage.id));
    const stages = await page.locator('table.deals tbody tr td:nth-child(3)').allTextContents();
    const api = (await t.call({ method: 'GET', url: `/service/deals?stage=${stage.id}&limit=100` })).json();
    expect(api.total).toBeGreaterThan(0);
    expect(stages).toEqual(Array(api.total).fill(`${pipeline.name} · ${stage.name}`));
    await expect(page.locator('main').textContent()).resolves.toContain(`${api.total} deal${api.total === 1 ? '' : 's'}`);
    // The stage stays chosen when the table is sorted.
    await page.click('th a:has-text("Amount")');
    await page.waitForURL(/orderBy=amount/);
    expect(new URL(page.url()).searchParams.get('stage')).toBe(String(stage.id));
    expect(await page.locator('table.deals tbody tr').count()).toBe(api.total);
  });

  it('refuses per item what a user may not do (delete another owner’s deal)', async () => {
    const { page } = t;
    const own = await createDeal(t.db, { title: 'Rita’s small deal', amount: '10', ownerId: rep.id, createdById: rep.id });
    await t.logout();
    await t.login(rep);
    await page.goto(`${t.origin}/service/deals?orderBy=amount&orderByDir=asc`);
    const other = Number(await page.locator('tbody tr', { hasText: 'Acme' }).first().locator('input[type=checkbox]').getAttribute('value'));
    await page.check(`tbody input[value="${own.id}"]`);
    await page.check(`tbody input[value="${other}"]`);
    await page.selectOption('#batch select[name=action]', 'delete');
    await page.click('#batch button.primary');
    const results = page.locator('#batch-results');
    await results.locator('text=1 deleted, 1 failed.').waitFor();
    await expect(results.textContent()).resolves.toMatch(/You may not delete this deal/);
    expect((await t.call({ method: 'GET', url: `/service/${other}/view` })).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: `/service/${own.id}/view` })).statusCode).toBe(404);
  });
});
