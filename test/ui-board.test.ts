import { beforeAll, describe, expect, it } from 'vitest';
import { startBrowserApp, type BrowserTest } from './helpers/browser.js';
import { createDealsInTransaction } from '../src/domain/deals/deals.service.js';
import { createDeal, createPipeline, createUser, defaultPipeline, type TestPipeline } from './helpers/factories.js';

/** The board in a real browser: log in, add a deal in a column, drag it along to Won. */

let t: BrowserTest;
let pipeline: TestPipeline;

beforeAll(async () => {
  t = await startBrowserApp();
  pipeline = await defaultPipeline(t.db);
});

async function drag(cardSelector: string, listSelector: string) {
  const { page } = t;
  const from = (await page.locator(cardSelector).boundingBox())!;
  const to = (await page.locator(listSelector).boundingBox())!;
  await page.mouse.move(from.x + from.width / 2, from.y + 12);
  await page.mouse.down();
  await page.mouse.move(from.x + from.width / 2 + 10, from.y + 20, { steps: 5 });
  await page.mouse.move(to.x + to.width / 2, to.y + Math.min(to.height / 2, 40), { steps: 20 });
  await page.mouse.up();
}

describe('board', () => {
  it('sends a browser without a session to the login page and back', async () => {
    await t.page.goto(`${t.origin}/`);
    expect(t.page.url()).toContain('/service/login?next=');
    await t.login();
    expect(new URL(t.page.url()).pathname).toBe('/service/board');
    await expect(t.page.locator('.column').count()).resolves.toBe(4); // the Sales pipeline's open stages
  });

  it('adds a deal from a column, drags it to the next stage and then to Won', async () => {
    const { page } = t;
    const [first, second] = pipeline.stages;
    const won = pipeline.stages.find((s) => s.type === 'won')!;
    await page.click(`#add-${first!.id} summary`);
    await page.fill(`#add-${first!.id} input[name="deal[title]"]`, 'Board deal');
    await page.fill(`#add-${first!.id} input[name="deal[amount]"]`, '1200');
    await page.click(`#add-${first!.id} button.primary`);
    const card = page.locator(`#cards-${first!.id} .card`, { hasText: 'Board deal' });
    await card.waitFor();
    const dealId = Number(await card.getAttribute('data-deal-id'));
    await page.locator(`#head-${first!.id}`, { hasText: '$1,200' }).waitFor();

    await drag(`#deal-${dealId}`, `#cards-${second!.id}`);
    // The card moves in the page at once; the column figures change when the server has moved the deal.
    await page.locator(`#head-${second!.id}`, { hasText: '1 deal' }).waitFor();
    await expect(page.locator(`#head-${first!.id}`).textContent()).resolves.toContain('No deals');

    await drag(`#deal-${dealId}`, `#cards-${won.id}`);
    await page.locator(`#deal-${dealId}`).waitFor({ state: 'detached' });

    const deal = (await t.call({ method: 'GET', url: `/service/${dealId}/view` })).json().deal;
    expect(deal.status).toBe('won');
    expect(deal.stage.id).toBe(won.id);
    const events = await t.db.selectFrom('event_outbox').select('event').where('deal_id', '=', dealId).orderBy('sequence').execute();
    expect(events.map((e) => e.event)).toEqual(['service.deal.created', 'deal.stage_changed', 'deal.stage_changed', 'service.deal.won']);
  });

  it('asks why when a card is dropped on Lost, and records the reason', async () => {
    const [first] = pipeline.stages;
    const lost = pipeline.stages.find((s) => s.type === 'lost')!;
    const deal = await createDeal(t.db, { title: 'Lost cause', stageId: first!.id });
    await t.page.goto(`${t.origin}/service/board`);
    await drag(`#deal-${deal.id}`, `#cards-${lost.id}`);
    const form = t.page.locator('form.lost-reason');
    await form.locator('input[name=lost_reason]').fill('Went with <b>a competitor</b>');
    await form.locator('button.primary').click();
    await t.page.locator(`#deal-${deal.id}`).waitFor({ state: 'detached' });
    const moved = (await t.call({ method: 'GET', url: `/service/${deal.id}/view` })).json().deal;
    expect(moved).toMatchObject({ status: 'lost', lostReason: 'Went with <b>a competitor</b>' });
  });

  it('shows a view-own user only their deals, and others cannot be dragged by them', async () => {
    const rep = await createUser(t.db, ['service:pipelines:view', 'service:deals:viewown', 'service:deals:editown', 'service:deals:create'], { name: 'Rita Rep' });
    const [first] = pipeline.stages;
    await createDeal(t.db, { title: 'Rita own deal', stageId: first!.id, ownerId: rep.id, createdById: rep.id });
    await createDeal(t.db, { title: 'Someone else deal', stageId: first!.id });
    await t.logout();
    await t.login(rep);
    const titles = await t.page.locator('.card-title').allTextContents();
    expect(titles).toContain('Rita own deal');
    expect(titles).not.toContain('Someone else deal');
    expect(titles).not.toContain('Board deal');
    await t.logout();
    await t.login();
  });

  it('marks what a user may see but not edit, and refuses to move it', async () => {
    const viewer = await createUser(t.db, ['service:pipelines:view', 'service:deals:viewown', 'service:deals:viewother', 'service:deals:editown'], { name: 'Vic Viewer' });
    const [first, second] = pipeline.stages;
    const other = await createDeal(t.db, { title: 'Admin-only deal', stageId: first!.id });
    await t.logout();
    await t.login(viewer);
    const card = t.page.locator(`#deal-${other.id}`);
    await expect(card.getAttribute('class')).resolves.toContain('locked');
    await expect(card.textContent()).resolves.toContain('View only');
    await drag(`#deal-${other.id}`, `#cards-${second!.id}`);
    await t.page.waitForTimeout(300);
    expect(await t.page.locator(`#cards-${first!.id} #deal-${other.id}`).count()).toBe(1);
    expect((await t.call({ method: 'GET', url: `/service/${other.id}/view` })).json().deal.stage.id).toBe(first!.id);
    // The server refuses it anyway (the guard and the domain), whatever the page shows.
    const refused = await t.call({ method: 'POST', url: '/service/ui/board/move', payload: { deal_id: other.id, stage_id: second!.id } }, viewer);
    expect(refused.statusCode).toBe(403);
    await t.logout();
    await t.login();
  });

  it('loads a column 50 cards at a time as it scrolls', async () => {
    const proposal = pipeline.stages[2]!;
    await t.db.transaction().execute((trx) =>
      createDealsInTransaction(
        trx,
        Array.from({ length: 120 }, (_, i) => ({
          ctx: { changedBy: { id: 1, name: 'Seed' } },
          input: { title: `Bulk deal ${i + 1}`, amount: '100', currency: 'USD', stageId: proposal.id, ownerId: 1, createdById: 1 },
        })),
      ),
    );
    await t.page.goto(`${t.origin}/service/board`);
    const cards = t.page.locator(`#cards-${proposal.id} .card`);
    await expect(cards.count()).resolves.toBe(50);
    await expect(t.page.locator(`#head-${proposal.id}`).textContent()).resolves.toContain('120 deals');
    for (const expected of [100, 120]) {
      await t.page.locator(`#cards-${proposal.id} .more`).scrollIntoViewIfNeeded();
      await t.page.waitForFunction(([id, n]) => document.querySelectorAll(`#cards-${id} .card`).length === n, [proposal.id, expected] as const);
    }
    expect(await t.page.locator(`#cards-${proposal.id} .more`).count()).toBe(0);
    const titles = await cards.locator('.card-title').allTextContents();
    expect(new Set(titles).size).toBe(120); // no card twice, none skipped
  });

  it('switches pipeline with the switcher, the default pipeline first', async () => {
    const { page } = t;
    const partners = await createPipeline(t.db, {
      name: 'Partners',
      stages: [
        { name: 'Referred', type: 'open' },
        { name: 'Qualified', type: 'open' },
        { name: 'Signed', type: 'won' },
        { name: 'Dropped', type: 'lost' },
      ],
    });
    const referral = await createDeal(t.db, { title: 'Partner referral', amount: '3300', stageId: partners.stages[0]!.id });
    const options = async () => page.locator('select[name=pipeline] option').evaluateAll((os) => os.map((o) => [(o as HTMLOptionElement).value, o.textContent]));
    await page.goto(`${t.origin}/service/board`);
    expect(await options()).toEqual([[String(pipeline.id), pipeline.name], [String(partners.id), 'Partners']]);
    // Made the default, the newer pipeline is offered first and opens first.
    expect((await t.call({ method: 'POST', url: `/service/pipelines/${partners.id}/edit`, payload: { pipeline: { isDefault: true } } })).statusCode).toBe(200);
    await page.goto(`${t.origin}/service/board`);
    expect(await options()).toEqual([[String(partners.id), 'Partners'], [String(pipeline.id), pipeline.name]]);
    await expect(page.locator('select[name=pipeline]').inputValue()).resolves.toBe(String(partners.id));
    await t.call({ method: 'POST', url: `/service/pipelines/${pipeline.id}/edit`, payload: { pipeline: { isDefault: true } } });
    await page.goto(`${t.origin}/service/board`);
    expect((await options())[0]).toEqual([String(pipeline.id), pipeline.name]);
    await Promise.all([page.waitForURL(new RegExp(`pipeline=${partners.id}`)), page.selectOption('select[name=pipeline]', String(partners.id))]);
    await expect(page.locator('.column h2').evaluateAll((hs) => hs.map((h) => h.firstChild!.textContent!.trim()))).resolves.toEqual(['Referred', 'Qualified']);
    await expect(page.locator(`#cards-${partners.stages[0]!.id} #deal-${referral.id}`).count()).resolves.toBe(1);
    expect(await page.locator('.card', { hasText: 'Lost cause' }).count()).toBe(0);
    await expect(page.locator('.drop-zone').allTextContents()).resolves.toEqual([expect.stringContaining('Signed'), expect.stringContaining('Dropped')]);
    await expect(page.locator('select[name=pipeline]').inputValue()).resolves.toBe(String(partners.id));
    // And back: the default pipeline's columns again.
    await Promise.all([page.waitForURL(new RegExp(`pipeline=${pipeline.id}`)), page.selectOption('select[name=pipeline]', String(pipeline.id))]);
    await expect(page.locator('.column').count()).resolves.toBe(pipeline.stages.filter((s) => s.type === 'open').length);
    expect(await page.locator(`#deal-${referral.id}`).count()).toBe(0);
  });

  it('shows figures per currency, overdue and idle marks (and the README screenshot)', async () => {
    const enterprise = await createPipeline(t.db, {
      name: 'Enterprise',
      stages: [
        { name: 'Lead', type: 'open' },
        { name: 'Demo', type: 'open' },
        { name: 'Proposal', type: 'open' },
        { name: 'Contract', type: 'open' },
        { name: 'Won', type: 'won' },
        { name: 'Lost', type: 'lost' },
      ],
    });
    const probabilities = [10, 30, 60, 80, 100, 0];
    for (const [i, stage] of enterprise.stages.entries()) await t.db.updateTable('stages').set({ probability: probabilities[i]! }).where('id', '=', stage.id).execute();
    const dana = await createUser(t.db, [], { name: 'Dana Diaz' });
    const eli = await createUser(t.db, [], { name: 'Eli Ito' });
    const seed: [string, string, string, number, number, string | null][] = [
      ['Acme Corp renewal', '48000', 'USD', 0, dana.id, '2027-01-31'],
      ['Globex data platform', '125000', 'USD', 0, eli.id, '2027-03-15'],
      ['Initech support plan', '9500', 'USD', 1, dana.id, '2026-11-02'],
      ['Umbrella EU rollout', '72000', 'EUR', 1, eli.id, '2027-02-28'],
      ['Hooli analytics pilot', '15000', 'USD', 2, eli.id, '2026-12-20'],
      ['Stark Industries expansion with a rather long deal title that wraps', '240000', 'USD', 2, dana.id, '2027-04-30'],
      ['Wayne Enterprises security', '88000', 'USD', 3, dana.id, '2026-12-05'],
    ];
    for (const [title, amount, currency, stage, owner, closeDate] of seed) {
      await createDeal(t.db, { title, amount, currency, stageId: enterprise.stages[stage]!.id, ownerId: owner, createdById: owner, closeDate });
    }
    // Idle: untouched for three weeks.
    await t.db.updateTable('deals').set({ updated_at: new Date(Date.now() - 21 * 86_400_000), stage_changed_at: new Date(Date.now() - 30 * 86_400_000) }).where('title', '=', 'Hooli analytics pilot').execute();
    await t.page.goto(`${t.origin}/service/board?pipeline=${enterprise.id}`);
    const demo = t.page.locator(`#head-${enterprise.stages[1]!.id}`);
    await expect(demo.textContent()).resolves.toMatch(/1 deal.*\$9,500\.00.*\$2,850\.00/s);
    await expect(demo.textContent()).resolves.toMatch(/1 deal.*€72,000\.00.*€21,600\.00/s);
    await expect(t.page.locator('.card', { hasText: 'Initech' }).locator('.overdue').textContent()).resolves.toContain('Overdue');
    const hooli = await t.page.locator('.card', { hasText: 'Hooli' }).textContent();
    expect(hooli).toContain('No activity for 21 days');
    expect(hooli).toContain('30 days in stage');
    expect(await t.page.locator('.card', { hasText: 'Acme Corp' }).locator('.stale').count()).toBe(0);
    await t.page.mouse.move(0, 0);
    await t.screenshot('board');
  });
});
