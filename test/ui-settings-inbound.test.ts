import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBrowserApp, type BrowserTest } from './helpers/browser.js';

/**
 * An administrator connects a lead form through the settings page, in the real
 * browser: creates a source, copies the curl example the page shows, runs it
 * as shown, and finds the receive in the log and the deal on the board.
 */

const run = promisify(execFile);
let t: BrowserTest;
const scratch = mkdtempSync(join(tmpdir(), 'inbound-example-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

beforeAll(async () => {
  // The endpoint URL the page shows is the app's real address: the example works as shown.
  t = await startBrowserApp({ publicOrigin: true });
  await t.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.origin });
  await t.login();
});

describe('inbound sources in the browser', () => {
  it('creates a source, runs the copied curl example, and sees the receive in the log and the deal on the board', async () => {
    const { page } = t;
    await page.goto(`${t.origin}/service/settings/inbound`);
    await page.getByText('No sources yet').waitFor();
    await page.fill('input[name="source[name]"]', 'Website contact form');
    await page.click('button:has-text("Create source")');
    await page.locator('.secret-panel').waitFor();
    // htmx put the source's own address in the location bar.
    expect(page.url()).toMatch(/\/service\/settings\/inbound\/[0-9a-f-]{36}$/);
    const secret = (await page.locator('#secret').textContent())!;
    expect(secret).toMatch(/^[0-9a-f]{64}$/);

    // The copy button puts the example on the clipboard; what the test runs is what was copied.
    await page.click('button[data-copy="curl-example"]');
    await page.locator('button[data-copy="curl-example"]:has-text("Copied")').waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(await page.locator('#curl-example').textContent());
    expect(copied).toContain(secret);
    expect(copied).not.toContain('PASTE-THE-SECRET-HERE');
    const { stdout } = await run('bash', ['-c', copied], { cwd: scratch });
    const answer = JSON.parse(stdout);
    expect(answer).toMatchObject({ success: true, created: true, contact: { created: true } });

    // The Node snippet works as shown too (Node 18+ has fetch).
    writeFileSync(join(scratch, 'send.mjs'), (await page.locator('#node-example').textContent())!);
    const node = await run(process.execPath, ['send.mjs'], { cwd: scratch });
    expect(node.stdout).toMatch(/^200 \{\s+success: true,\s+created: true,/);

    // A reload is a plain GET: the secret is gone for good.
    await page.reload();
    await page.locator('#receive-log').waitFor();
    expect(await page.locator('.secret-panel').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    expect(await page.locator('#curl-example').textContent()).toContain("SECRET='PASTE-THE-SECRET-HERE'");

    const rows = page.locator('#receive-log tbody tr');
    expect(await rows.count()).toBe(2);
    const curlRow = rows.filter({ hasText: `Deal #${answer.deal.id}` });
    expect(await curlRow.locator('td').nth(1).textContent()).toBe('Created a deal');
    expect(await curlRow.locator('td').nth(2).textContent()).toBe('200');

    // A forged post shows up as refused, with the reason in words, and the filter finds it alone.
    const endpoint = (await page.locator('#endpoint-url').textContent())!;
    const forged = await fetch(endpoint, { method: 'POST', headers: { 'x-service-signature': `sha256=${'0'.repeat(64)}` }, body: '{"title":"x"}' });
    expect(forged.status).toBe(403);
    await page.reload();
    await Promise.all([page.waitForURL(/outcome=rejected/), page.selectOption('select[name=outcome]', 'rejected')]);
    expect(await page.locator('#receive-log tbody tr').count()).toBe(1);
    expect(await page.locator('#receive-log tbody tr td.error-text').textContent()).toMatch(/signature/i);
    await page.selectOption('select[name=outcome]', '');
    await page.waitForURL((url) => !url.search.includes('rejected'));

    await page.screenshot({ path: join(process.cwd(), 'docs', 'screenshots', 'settings-inbound.png'), fullPage: true });

    // The log links to the deal, and the deal is on the board.
    await Promise.all([page.waitForURL(new RegExp(`/service/${answer.deal.id}/view$`)), page.click(`a:has-text("Deal #${answer.deal.id}")`)]);
    await page.getByRole('heading', { name: 'Test deal from the curl example' }).waitFor();
    await page.goto(`${t.origin}/service/board`);
    await page.locator('.card', { hasText: 'Test deal from the curl example' }).waitFor();
    await page.locator('.card', { hasText: 'Acme renewal' }).waitFor();

    // The list shows the source, never its secret.
    await page.goto(`${t.origin}/service/settings/inbound`);
    await page.getByRole('link', { name: 'Website contact form' }).waitFor();
    expect(await page.content()).not.toContain(secret);
    expect(t.dialogs).toEqual([]);
  });
});
