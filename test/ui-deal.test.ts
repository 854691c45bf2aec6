import { beforeAll, describe, expect, it } from 'vitest';
import { startBrowserApp, type BrowserTest } from './helpers/browser.js';
import { createContact, createDeal, defaultPipeline, type TestPipeline } from './helpers/factories.js';

/** The deal page in a real browser, with OWASP-style XSS vectors in everything users and webhooks write. */

const XSS_TITLE = `Acme <img src=x onerror="alert('title')"> renewal`;
let t: BrowserTest;
let pipeline: TestPipeline;
let dealId: number;

beforeAll(async () => {
  t = await startBrowserApp();
  pipeline = await defaultPipeline(t.db);
  dealId = (await createDeal(t.db, { title: XSS_TITLE, amount: '48000', closeDate: '2026-12-15', stageId: pipeline.stages[1]!.id })).id;
  await createContact(t.db, { email: 'ann@acme.example', first_name: 'Ann', last_name: `Lee<svg onload=alert('contact')>`, company: 'Acme' });
  await createContact(t.db, { email: 'bob@acme.example', first_name: 'Bob', last_name: 'Stone', company: 'Acme' });
  await createContact(t.db, { email: 'cara@acme.example', first_name: 'Cara', last_name: 'Moss', company: 'Acme' });
  await t.login();
  await t.page.goto(`${t.origin}/service/${dealId}/view`);
});

describe('deal page', () => {
  it('answers HTML to the browser, JSON to API clients, and shows the title as text', async () => {
    await expect(t.page.locator('h1').textContent()).resolves.toBe(XSS_TITLE);
    expect(await t.page.locator('img[src=x]').count()).toBe(0);
    const api = await t.call({ method: 'GET', url: `/service/${dealId}/view` });
    expect(api.headers['content-type']).toMatch(/application\/json/);
    expect(api.json().deal.title).toBe(XSS_TITLE);
    const page = await t.call({ method: 'GET', url: `/service/${dealId}/view`, headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.body).not.toContain('<img src=x');
  });

  it('adds committee contacts found by name or email and marks one primary', async () => {
    const { page } = t;
    for (const [search, role] of [['ann@', 'Champion'], ['Bob', 'Economic buyer']] as const) {
      await page.fill('#committee input[name=q]', search);
      const result = page.locator('#contact-results li').first();
      await result.waitFor();
      await result.locator('input[name=role]').fill(role);
      await result.locator('button').click();
      await page.locator('#committee li', { hasText: role }).waitFor();
    }
    await expect(page.locator('#committee').textContent()).resolves.toContain(`Ann Lee<svg onload=alert('contact')>`);
    const bob = page.locator('#committee li', { hasText: 'Bob Stone' });
    await bob.locator('button', { hasText: 'Make primary' }).click();
    await page.locator('#committee li', { hasText: 'Bob Stone' }).locator('.primary-mark').waitFor();
    const members = (await t.call({ method: 'GET', url: `/service/${dealId}/view` })).json().deal.contacts;
    expect(members.map((m: { contact: { first_name: string }; is_primary: boolean; role: string }) => [m.contact.first_name, m.is_primary, m.role])).toEqual([
      ['Bob', true, 'Economic buyer'],
      ['Ann', false, 'Champion'],
    ]);
  });

  it('removes a committee member after a second click, keeping the others', async () => {
    const { page } = t;
    await page.fill('#committee input[name=q]', 'cara@');
    const result = page.locator('#contact-results li').first();
    await result.waitFor();
    await result.locator('button').click();
    const cara = page.locator('#committee > ul.list > li', { hasText: 'cara@acme.example' });
    await cara.waitFor();
    expect((await t.call({ method: 'GET', url: `/service/${dealId}/view` })).json().deal.contacts).toHaveLength(3);
    const remove = cara.locator('button', { hasText: 'Remove' });
    await remove.click();
    // The first click only arms the button: nothing is removed yet.
    await expect(remove.textContent()).resolves.toBe('Click again to remove');
    expect((await t.call({ method: 'GET', url: `/service/${dealId}/view` })).json().deal.contacts).toHaveLength(3);
    await remove.click();
    await cara.waitFor({ state: 'detached' });
    await expect(page.locator('#committee li', { hasText: 'Bob Stone' }).locator('.primary-mark').count()).resolves.toBe(1);
    const members = (await t.call({ method: 'GET', url: `/service/${dealId}/view` })).json().deal.contacts;
    expect(members.map((m: { contact: { email: string }; is_primary: boolean }) => [m.contact.email, m.is_primary])).toEqual([
      ['bob@acme.example', true],
      ['ann@acme.example', false],
    ]);
  });

  it('renders a note’s safe HTML and runs none of its script', async () => {
    const { page } = t;
    await page.fill('textarea[name="note[body]"]', `<p>Called, <b>keen</b></p><script>alert('script')</script><img src=x onerror="alert('img')"><a href="javascript:alert('link')">x</a>`);
    await page.click('#notes button.primary');
    await page.locator('.note-body b', { hasText: 'keen' }).waitFor();
    expect(await page.locator('.note-body script').count()).toBe(0);
    expect(await page.locator('.note-body img[onerror]').count()).toBe(0);
    expect(await page.locator('.note-body a[href^="javascript"]').count()).toBe(0);
    await page.waitForTimeout(300);
    expect(t.dialogs).toEqual([]);
  });

  it('adds a task with a due date and completes it', async () => {
    const { page } = t;
    await page.fill('#tasks input[name="task[title]"]', 'Send the quote');
    await page.fill('#tasks input[name="task[dueDate]"]', '2026-12-01');
    await page.click('#tasks form button.primary');
    const task = page.locator('#tasks li', { hasText: 'Send the quote' });
    await task.waitFor();
    await task.locator('button', { hasText: 'Complete' }).click();
    await page.locator('#tasks li .done', { hasText: 'Send the quote' }).waitFor();
    const tasks = (await t.call({ method: 'GET', url: `/service/${dealId}/view` })).json().deal.tasks;
    expect(tasks).toMatchObject([{ title: 'Send the quote', dueDate: '2026-12-01', isCompleted: true }]);
  });

  it('reopens a completed task, and deletes another after a second click', async () => {
    const { page } = t;
    const quote = page.locator('#tasks li', { hasText: 'Send the quote' });
    await quote.locator('button', { hasText: 'Reopen' }).click();
    await page.locator('#tasks li', { hasText: 'Send the quote' }).locator('button', { hasText: 'Complete' }).waitFor();
    expect(await page.locator('#tasks .done').count()).toBe(0);
    expect((await t.call({ method: 'GET', url: `/service/${dealId}/view` })).json().deal.tasks).toMatchObject([{ title: 'Send the quote', isCompleted: false }]);

    await page.fill('#tasks input[name="task[title]"]', 'Book a call by mistake');
    await page.click('#tasks form button.primary');
    const mistake = page.locator('#tasks li', { hasText: 'Book a call by mistake' });
    await mistake.waitFor();
    const remove = mistake.locator('button', { hasText: 'Delete' });
    await remove.click();
    await expect(remove.textContent()).resolves.toBe('Click again to delete');
    expect((await t.call({ method: 'GET', url: `/service/${dealId}/view` })).json().deal.tasks).toHaveLength(2);
    await remove.click();
    await mistake.waitFor({ state: 'detached' });
    const tasks = (await t.call({ method: 'GET', url: `/service/${dealId}/view` })).json().deal.tasks;
    expect(tasks.map((task: { title: string; isCompleted: boolean }) => [task.title, task.isCompleted])).toEqual([['Send the quote', false]]);
    await expect(page.locator('#tasks li').count()).resolves.toBe(1);
  });

  it('shows a validation error next to the field and keeps what was typed', async () => {
    const { page } = t;
    await page.fill('#deal-details input[name="deal[amount]"]', '12,5 euros');
    await page.fill('#deal-details input[name="deal[title]"]', 'Acme renewal 2027');
    await page.click('#deal-details button.primary');
    await page.locator('#deal-details .field-error').waitFor();
    await expect(page.locator('#deal-details .field.invalid').textContent()).resolves.toContain('Must be a non-negative amount');
    await expect(page.locator('#deal-details input[name="deal[amount]"]').inputValue()).resolves.toBe('12,5 euros');
    await expect(page.locator('#deal-details input[name="deal[title]"]').inputValue()).resolves.toBe('Acme renewal 2027');
    await page.fill('#deal-details input[name="deal[amount]"]', '52000');
    await page.click('#deal-details button.primary');
    await page.locator('#deal-details .ok').waitFor();
    await page.locator('#deal-head h1', { hasText: 'Acme renewal 2027' }).waitFor();
    expect((await t.call({ method: 'GET', url: `/service/${dealId}/view` })).json().deal).toMatchObject({ title: 'Acme renewal 2027', amount: 52000 });
  });

  it('moves to a lost stage with a reason, shown as text in the header and the timeline', async () => {
    const { page } = t;
    await t.screenshot('deal');
    const lost = pipeline.stages.find((s) => s.type === 'lost')!;
    await page.selectOption('#deal-stage select[name=stage_id]', String(lost.id));
    await page.fill('#deal-stage input[name=lost_reason]', `Budget <svg onload=alert('reason')>`);
    await page.click('#deal-stage button.primary');
    await page.locator('#deal-head .badge.lost').waitFor();
    await expect(page.locator('#deal-head').textContent()).resolves.toContain(`Lost because: Budget <svg onload=alert('reason')>`);
    await expect(page.locator('#history li').first().textContent()).resolves.toContain('Lost');
    const deal = (await t.call({ method: 'GET', url: `/service/${dealId}/view` })).json().deal;
    expect(deal).toMatchObject({ status: 'lost', lostReason: `Budget <svg onload=alert('reason')>` });
    expect(t.dialogs).toEqual([]);
  });
});
