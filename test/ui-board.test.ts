import { beforeAll, describe, expect, it } from 'vitest';
import { startBrowserApp, type BrowserTest } from './helpers/browser.js';
import { createDeal, createUser, defaultPipeline, type TestPipeline } from './helpers/factories.js';

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
    await t.screenshot('board');

    await drag(`#deal-${dealId}`, `#cards-${won.id}`);
    await page.locator(`#deal-${dealId}`).waitFor({ state: 'detached' });

    const deal = (await t.call({ method: 'GET', url: `/service/${dealId}/view` })).json().deal;
    expect(deal.status).toBe('won');
    expect(deal.stage.id).toBe(won.id);
    const events = await t.db.selectFrom('event_outbox').select('event').where('deal_id', '=', dealId).orderBy('sequence').execute();
    expect(events.map((e) => e.event)).toEqual(['service.deal.created', 'deal.stage_changed', 'deal.stage_changed', 'service.deal.won']);
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
});
