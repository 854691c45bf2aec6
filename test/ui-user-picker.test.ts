import { join } from 'node:path';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { startBrowserApp, type BrowserTest } from './helpers/browser.js';
import { createDeal, createRole, defaultPipeline } from './helpers/factories.js';

/**
 * Owner and assignee pickers of a team with more people than a select lists
 * (200): a search beside the select finds anyone, in the real browser, and the
 * person found can be made a deal's owner, a task's assignee or an inbound
 * source's default owner, filtered by on the board and the deals table, and
 * given deals by a batch reassign.
 */

let t: BrowserTest;
let dealId: number;
let stageId: number;
const PEOPLE = 230;
const userId = async (username: string) => (await sql<{ id: number }>`select id from users where username = ${username}`.execute(t.db)).rows[0]!.id;

beforeAll(async () => {
  t = await startBrowserApp();
  const pipeline = await defaultPipeline(t.db);
  stageId = pipeline.stages[0]!.id;
  dealId = (await createDeal(t.db, { title: 'Big team deal', stageId })).id;
  const role = await createRole(t.db, ['service:deals:viewown']);
  // Names sort after "Administrator", so the last ones are beyond the select's first 200; one holds markup, shown as text.
  await sql`
    insert into users (username, name, email, password_hash, role_id)
    select 'rep-' || g, 'Rep ' || lpad(g::text, 3, '0'), 'rep-' || g || '@example.test', 'not-a-login', ${role.id}
    from generate_series(1, ${PEOPLE}) as g`.execute(t.db);
  await sql`update users set name = 'Zoë <b onmouseover=alert(1)>Zimmer</b>' where username = ${`rep-${PEOPLE}`}`.execute(t.db);
  await t.login();
  await t.page.goto(`${t.origin}/service/${dealId}/view`);
});

describe('user pickers of a large team', () => {
  it('finds an owner beyond the first 200 by name and saves the deal with them', async () => {
    const { page } = t;
    const owner = page.locator('#deal-details select[name="deal[owner]"]');
    // The select lists the first 200 (plus "No owner"); the one sought is not among them.
    expect(await owner.locator('option').count()).toBe(201);
    expect(await owner.locator('option', { hasText: 'Zimmer' }).count()).toBe(0);

    await page.locator('#deal-details input.picker-search').fill('zimm');
    await owner.locator('option', { hasText: 'Zimmer' }).waitFor({ state: 'attached' });
    // What was typed filtered the list; "No owner" stays first, and the current owner (the deal's creator) stays chosen.
    expect(await owner.locator('option').allTextContents()).toEqual(['No owner', 'Zoë <b onmouseover=alert(1)>Zimmer</b>', 'Administrator']);
    await expect(owner.locator('option:checked').textContent()).resolves.toBe('Administrator');
    await page.locator('#deal-details').screenshot({ path: join(process.cwd(), 'docs', 'screenshots', 'deal-owner-picker.png') });
    const zimmer = await userId(`rep-${PEOPLE}`);
    await owner.selectOption(String(zimmer));
    await page.click('#deal-details button.primary');
    await page.locator('#deal-details .ok', { hasText: 'Saved' }).waitFor();
    const deal = (await t.call({ method: 'GET', url: `/service/${dealId}/view` })).json().deal;
    expect(deal.owner).toEqual({ id: zimmer, name: 'Zoë <b onmouseover=alert(1)>Zimmer</b>' });

    // After the save the select lists the first 200 again, with the owner kept in it and chosen.
    await expect(owner.locator('option:checked').textContent()).resolves.toBe('Zoë <b onmouseover=alert(1)>Zimmer</b>');
    expect(await page.locator('#deal-details b').count()).toBe(0);
    expect(t.dialogs).toEqual([]);
  });

  it('finds an assignee for a new task, keeping "Unassigned" and the current user on offer', async () => {
    const { page } = t;
    const assignee = page.locator('#tasks select[name="task[assignee]"]');
    await page.locator('#tasks input.picker-search').fill('Rep 229');
    await assignee.locator('option', { hasText: 'Rep 229' }).waitFor({ state: 'attached' });
    const offered = await assignee.locator('option').allTextContents();
    expect(offered[0]).toBe('Unassigned');
    expect(offered).toContain('Rep 229');
    // The signed-in user (the default assignee) stays selected while others are searched for.
    await expect(assignee.locator('option:checked').textContent()).resolves.toBe('Administrator');
    await assignee.selectOption({ label: 'Rep 229' });
    await page.fill('#tasks input[name="task[title]"]', 'Call the big team');
    await page.click('#tasks form button.primary');
    await page.locator('#tasks li', { hasText: 'Call the big team' }).waitFor();
    const tasks = (await t.call({ method: 'GET', url: `/service/${dealId}/view` })).json().deal.tasks;
    expect(tasks).toMatchObject([{ title: 'Call the big team', assignee: { name: 'Rep 229' } }]);
  });

  it('finds the default owner of a new inbound source the same way', async () => {
    const { page } = t;
    await page.goto(`${t.origin}/service/settings/inbound`);
    const owner = page.locator('#new-source select[name="source[owner]"]');
    await page.locator('#new-source input.picker-search').fill('Rep 215');
    await owner.locator('option', { hasText: 'Rep 215' }).waitFor({ state: 'attached' });
    await owner.selectOption({ label: 'Rep 215' });
    await page.fill('#new-source input[name="source[name]"]', 'Partner portal');
    await page.click('#new-source button.primary');
    await page.locator('.secret-panel').waitFor();
    const sources = (await t.call({ method: 'GET', url: '/service/settings/inbound-webhooks' })).json().sources;
    expect(sources).toMatchObject([{ name: 'Partner portal', owner: { name: 'Rep 215' } }]);
  });

  it('filters the board by an owner beyond the first 200, found by the search beside the filter', async () => {
    const { page } = t;
    const rep = await userId('rep-221');
    await createDeal(t.db, { title: 'Owned by rep 221', stageId, ownerId: rep });
    await createDeal(t.db, { title: 'Owned by the admin', stageId });
    await page.goto(`${t.origin}/service/board`);
    const filter = page.locator('form.filters select[name=owner]');
    expect(await filter.locator('option', { hasText: 'Rep 221' }).count()).toBe(0);
    await page.locator('form.filters input.picker-search').fill('Rep 221');
    await filter.locator('option', { hasText: 'Rep 221' }).waitFor({ state: 'attached' });
    // "Anyone" stays first; choosing submits the filter form, without what was typed in the search.
    expect(await filter.locator('option').allTextContents()).toEqual(['Anyone', 'Rep 221']);
    await filter.selectOption({ label: 'Rep 221' });
    await page.waitForURL(new RegExp(`owner=${rep}`));
    expect(new URL(page.url()).searchParams.has('q')).toBe(false);
    expect(await page.locator('.board .card-title').allTextContents()).toEqual(['Owned by rep 221']);
    // The page named the owner filtered by, though beyond the first 200, and keeps them chosen.
    await expect(filter.locator('option:checked').textContent()).resolves.toBe('Rep 221');
    await page.locator('form.filters').screenshot({ path: join(process.cwd(), 'docs', 'screenshots', 'board-owner-filter.png') });
  });

  it('filters the deals table by such an owner and reassigns selected deals to another one found the same way', async () => {
    const { page } = t;
    const rep = await userId('rep-221');
    await page.goto(`${t.origin}/service/deals?owner=${rep}`);
    await expect(page.locator('form.filters select[name=owner] option:checked').textContent()).resolves.toBe('Rep 221');
    expect(await page.locator('table.deals td.title').allTextContents()).toEqual(['Owned by rep 221']);

    await page.goto(`${t.origin}/service/deals?search=Owned%20by`);
    for (const id of await page.locator('tbody input[type=checkbox]').evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value))) {
      await page.check(`tbody input[value="${id}"]`);
    }
    await page.selectOption('#batch select[name=action]', 'reassign');
    const newOwner = page.locator('#batch select[name=owner]');
    await page.locator('#batch input.picker-search').fill('Rep 226');
    await newOwner.locator('option', { hasText: 'Rep 226' }).waitFor({ state: 'attached' });
    expect(await newOwner.locator('option').allTextContents()).toEqual(['No owner', 'Rep 226']);
    await newOwner.selectOption({ label: 'Rep 226' });
    await page.click('#batch button.primary');
    await page.locator('#batch-results', { hasText: '2 reassigned, 0 failed' }).waitFor();
    const owned = (await t.call({ method: 'GET', url: `/service/deals?owner=${await userId('rep-226')}` })).json().deals;
    expect(owned.map((d: { title: string }) => d.title).sort()).toEqual(['Owned by rep 221', 'Owned by the admin']);
  });

  it('answers the options to anyone who may see deals, and refuses a bad query in words', async () => {
    const options = await t.call({ method: 'GET', url: '/service/ui/users/options?q=Rep%20001&empty=No%20owner' });
    expect(options.statusCode).toBe(200);
    expect(options.body).toMatch(/^<option value="">No owner<\/option>/);
    expect(options.body).toContain('>Rep 001</option>');
    expect(options.body).not.toContain('Rep 002');
    const bad = await t.call({ method: 'GET', url: '/service/ui/users/options?current=abc' });
    expect(bad.statusCode).toBe(422);
  });
});
