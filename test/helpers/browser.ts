import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, expect } from 'vitest';
import { ADMIN, setupApp, type TestContext } from './app.js';

/**
 * Browser tests: the real app on a real port (its own database, like every
 * test file), driven by Debian's Chromium through playwright-core. Never a
 * downloaded browser.
 */

export const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface BrowserTest extends TestContext {
  origin: string;
  context: BrowserContext;
  page: Page;
  /** Every dialog (alert, confirm, prompt) a page opened: a script ran that should not have. */
  dialogs: string[];
  login(user?: { username: string; password: string }): Promise<void>;
  logout(): Promise<void>;
  screenshot(name: string): Promise<void>;
}

/** A free port on 127.0.0.1 (asked of the system, then released). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

/**
 * `publicOrigin`: the app's PUBLIC_BASE_URL is its real address, so URLs it
 * shows (inbound endpoint URLs) work as shown from the test.
 */
export async function startBrowserApp(options: { publicOrigin?: boolean } = {}): Promise<BrowserTest> {
  const port = options.publicOrigin ? await freePort() : 0;
  const t = await setupApp(options.publicOrigin ? { config: { PUBLIC_BASE_URL: `http://127.0.0.1:${port}` } } : {});
  await t.app.listen({ host: '127.0.0.1', port });
  const origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  // launchPersistentContext is how playwright takes a --user-data-dir: a fresh one per file.
  const profile = mkdtempSync(join(tmpdir(), 'ui-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1440, height: 900 },
  });
  afterAll(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  });
  context.setDefaultTimeout(8000);
  const page = context.pages()[0] ?? (await context.newPage());
  const dialogs: string[] = [];
  context.on('page', (p) => p.on('dialog', (d) => void (dialogs.push(d.message()), d.dismiss())));
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    // A CSP violation is reported on the console: any is a bug in our pages.
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) errors.push(message.text());
  });
  // Failed requests are printed: a browser test's failure otherwise says only what did not appear.
  page.on('response', (response) => {
    if (response.status() >= 400) void response.text().then((body) => console.warn(`${response.status()} ${response.url()} ${body.slice(0, 300)}`), () => {});
  });
  page.on('console', (message) => message.type() === 'error' && console.warn(`console: ${message.text()}`));
  afterAll(() => expect(errors).toEqual([]));

  return {
    ...t,
    origin,
    context,
    page,
    dialogs,
    async login(user = ADMIN) {
      await page.goto(`${origin}/service/login`);
      await page.fill('input[name=username]', user.username);
      await page.fill('input[name=password]', user.password);
      await Promise.all([page.waitForURL(/\/service\/board/), page.click('button.primary')]);
    },
    async logout() {
      await Promise.all([page.waitForURL(/\/service\/login/), page.click('.topbar button.link')]);
    },
    async screenshot(name) {
      const dir = join(process.cwd(), 'docs', 'screenshots');
      mkdirSync(dir, { recursive: true });
      await page.screenshot({ path: join(dir, `${name}.png`), fullPage: false });
    },
  };
}
