import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN } from './helpers/app.js';
import { startBrowserApp, type BrowserTest } from './helpers/browser.js';
import { createRole, createUser, type TestUser } from './helpers/factories.js';

/** The settings pages in a real browser: a pipeline set up from nothing and reordered by drag, users, a secret shown once. */

let t: BrowserTest;
let seller: TestUser;

beforeAll(async () => {
  t = await startBrowserApp();
  // The first-run admin would see the "change your password" banner on every page; these tests are about the rest.
  await t.db.updateTable('users').set({ must_change_password: false }).where('username', '=', ADMIN.username).execute();
  const sales = await createRole(t.db, ['service:deals:viewown', 'service:deals:editown', 'service:pipelines:view'], { name: 'Sales rep' });
  seller = await createUser(t.db, [], { name: 'Sam Seller', roleId: sales.id });
  await t.login();
});

/** A stage's row, by its own name (other rows name it too, in their move-deals-to choice). */
const stageRow = (name: string) => t.page.locator('.stage-item', { has: t.page.locator('.stage-title strong', { hasText: new RegExp(`^${name}$`) }) });

/** Drag a stage by its handle onto the place of another one (SortableJS follows the real mouse). */
async function dragStage(from: string, onto: string) {
  const { page } = t;
  // Mouse events land only inside the viewport: bring both rows into it.
  await stageRow(onto).scrollIntoViewIfNeeded();
  await stageRow(from).locator('.handle').scrollIntoViewIfNeeded();
  const handle = (await stageRow(from).locator('.handle').boundingBox())!;
  const target = (await stageRow(onto).boundingBox())!;
  await page.mouse.move(handle.x + handle.width / 2, handle.y + handle.height / 2);
  await page.mouse.down();
  await page.mouse.move(handle.x + handle.width / 2 + 5, handle.y + handle.height / 2 - 10, { steps: 5 });
  await page.mouse.move(target.x + 40, target.y + 10, { steps: 25 });
  await page.mouse.up();
}

const stageNames = (t: BrowserTest) => t.page.locator('.stage-item .stage-title strong').allTextContents();

describe('settings in the browser', () => {
  it('leads an administrator from the top bar to the settings sections', async () => {
    const { page } = t;
    await page.locator('.topbar nav a', { hasText: 'Settings' }).click();
    await page.waitForURL(/\/service\/settings$/);
    await expect(page.locator('.section-cards li strong').allTextContents()).resolves.toEqual(['Pipelines and stages', 'Inbound webhook sources', 'Outbound webhooks', 'Users', 'Roles', 'API credentials']);
    await t.screenshot('settings-index');
  });

  it('creates a pipeline with four stages and reorders them by drag', async () => {
    const { page } = t;
    await page.locator('.settings-nav a', { hasText: 'Pipelines and stages' }).click();
    await page.locator('#new-pipeline').waitFor();
    await t.screenshot('settings-pipelines');
    await page.fill('input[name="pipeline[name]"]', 'Enterprise');
    const stages = [
      ['Discovery', 'open', '10', 'Blue'],
      ['Proposal', 'open', '40', 'Amber'],
      ['Contract sent', 'open', '80', 'Purple'],
      ['Signed', 'won', '', 'Green'],
    ];
    for (const [i, [name, type, probability, color]] of stages.entries()) {
      await page.fill(`input[name="stages[${i}][name]"]`, name!);
      await page.selectOption(`select[name="stages[${i}][type]"]`, type!);
      await page.fill(`input[name="stages[${i}][probability]"]`, probability!);
      await page.selectOption(`select[name="stages[${i}][color]"]`, { label: color! });
    }
    await Promise.all([page.waitForURL(/\/service\/settings\/pipelines\/\d+\?done=created/), page.click('#new-pipeline button.primary')]);
    await expect(page.locator('h1').first().textContent()).resolves.toBe('Enterprise');
    await expect(stageNames(t)).resolves.toEqual(['Discovery', 'Proposal', 'Contract sent', 'Signed']);
    const pipelineId = Number(/pipelines\/(\d+)/.exec(page.url())![1]);

    // "Contract sent" goes first, then "Signed" above "Proposal".
    await dragStage('Contract sent', 'Discovery');
    await page.locator('.stage-list[data-saved="1"]').waitFor();
    await dragStage('Signed', 'Proposal');
    await page.locator('.stage-list[data-saved="2"]').waitFor();
    const expected = ['Contract sent', 'Discovery', 'Signed', 'Proposal'];
    await expect(stageNames(t)).resolves.toEqual(expected);
    const api = (await t.call({ method: 'GET', url: `/service/pipelines/${pipelineId}` })).json().pipeline;
    expect(api.stages.map((s: { name: string }) => s.name)).toEqual(expected);
    expect(api.stages.map((s: { probability: number; color: string }) => [s.probability, s.color])).toEqual([
      [80, '#7a5af8'],
      [10, '#1d4ed8'],
      [100, '#079455'],
      [40, '#dc6803'],
    ]);
    await page.reload();
    await expect(stageNames(t)).resolves.toEqual(expected);

    // An edit with a bad probability is refused next to the input, keeping what was typed.
    const row = stageRow('Proposal');
    await row.locator('input[name="stage[probability]"]').fill('150');
    await Promise.all([page.waitForLoadState('load'), row.locator('button', { hasText: 'Save' }).click()]);
    await expect(stageRow('Proposal').locator('.field-error').textContent()).resolves.toBe('Must be a whole number from 0 to 100');
    await expect(stageRow('Proposal').locator('input[name="stage[probability]"]').inputValue()).resolves.toBe('150');
    await page.goto(`${t.origin}/service/settings/pipelines/${pipelineId}`);

    // Who sees it: limited to the Sales rep role by its checkbox, stored as the API's pipeline[roles].
    await page.locator('#visibility label', { hasText: 'Sales rep' }).locator('input').check();
    await Promise.all([page.waitForURL(/done=roles/), page.click('#visibility button.primary')]);
    const limited = (await t.call({ method: 'GET', url: `/service/pipelines/${pipelineId}` })).json().pipeline;
    expect(limited.roles).toEqual([seller.roleId]);
    await expect(page.locator('#visibility label', { hasText: 'Sales rep' }).locator('input').isChecked()).resolves.toBe(true);
    await expect(page.locator('#visibility p.muted').first().textContent()).resolves.toMatch(/^Only the roles checked below/);
    await page.evaluate(() => window.scrollTo(0, 0));
    await t.screenshot('settings-pipeline');
    expect(t.dialogs).toEqual([]);
  });

  it('creates a user and shows an API credential’s secret only once', async () => {
    const { page } = t;
    await page.goto(`${t.origin}/service/settings/users`);
    await page.fill('#new-user input[name=name]', 'Fox Mulder');
    await page.fill('#new-user input[name=username]', 'fox');
    await page.fill('#new-user input[name=email]', 'fox@example.test');
    await page.selectOption('#new-user select[name=role]', String(seller.roleId));
    await page.fill('#new-user input[name=password]', 'i-want-to-believe');
    await Promise.all([page.waitForURL(/\/service\/settings\/users\/\d+\?done=created/), page.click('#new-user button.primary')]);
    await expect(page.locator('h1').textContent()).resolves.toBe('Fox Mulder');
    await page.goto(`${t.origin}/service/settings/users`);
    await expect(page.locator('table tr', { hasText: 'fox@example.test' }).locator('td').nth(3).textContent()).resolves.toBe((await t.db.selectFrom('roles').select('name').where('id', '=', seller.roleId).executeTakeFirstOrThrow()).name);
    await t.screenshot('settings-users');

    await page.goto(`${t.origin}/service/settings/api-credentials`);
    await page.fill('#new-credential input[name=name]', 'Nightly report');
    await page.selectOption('#new-credential select[name=user]', { label: `${seller.name} (${seller.username})` });
    await page.click('#new-credential button.primary');
    const secret = (await page.locator('#client-secret').textContent())!;
    expect(secret.length).toBeGreaterThan(30);
    // The address bar now names the list, so a reload asks for the list and the secret is gone.
    await expect.poll(() => new URL(page.url()).pathname).toBe('/service/settings/api-credentials');
    await page.reload();
    await expect(page.locator('#client-secret').count()).resolves.toBe(0);
    await expect(page.content()).resolves.not.toContain(secret);
    await expect(page.locator('table tr', { hasText: 'Nightly report' }).count()).resolves.toBe(1);
    expect(await t.db.selectFrom('api_credentials').select('id').where('name', '=', 'Nightly report').execute()).toHaveLength(1);
    expect(t.dialogs).toEqual([]);
  });

  it('shows names with script in them as text, running none of it', async () => {
    const { page } = t;
    const name = `Eve <img src=x onerror="alert('user')"><script>alert('user')</script>`;
    await page.goto(`${t.origin}/service/settings/users`);
    await page.fill('#new-user input[name=name]', name);
    await page.fill('#new-user input[name=username]', 'eve');
    await page.selectOption('#new-user select[name=role]', String(seller.roleId));
    await page.fill('#new-user input[name=password]', 'eve-is-listening-1');
    await Promise.all([page.waitForURL(/\/service\/settings\/users\/\d+/), page.click('#new-user button.primary')]);
    await expect(page.locator('h1').textContent()).resolves.toBe(name);
    await page.goto(`${t.origin}/service/settings/pipelines`);
    await page.fill('input[name="pipeline[name]"]', `P <svg onload="alert('pipe')">`);
    await page.fill('input[name="stages[0][name]"]', `S <img src=x onerror="alert('stage')">`);
    await Promise.all([page.waitForURL(/done=created/), page.click('#new-pipeline button.primary')]);
    await expect(page.locator('h1').first().textContent()).resolves.toBe(`P <svg onload="alert('pipe')">`);
    await expect(page.locator('.stage-title strong').first().textContent()).resolves.toBe(`S <img src=x onerror="alert('stage')">`);
    expect(await page.locator('main img:not(.swatch), main svg, main script').count()).toBe(0);
    expect(t.dialogs).toEqual([]);
  });

  it('gives a seller no settings link and a 403 page on the settings URLs', async () => {
    const { page } = t;
    await t.logout();
    await t.login(seller);
    await expect(page.locator('.topbar nav a').allTextContents()).resolves.toEqual(['Board', 'All deals', 'Forecast']);
    for (const path of ['/service/settings', '/service/settings/pipelines', '/service/settings/users', '/service/settings/api-credentials']) {
      const response = await page.goto(`${t.origin}${path}`);
      expect(response!.status(), path).toBe(403);
      await expect(page.locator('h1').textContent()).resolves.toBe('Not allowed');
    }
  });
});
