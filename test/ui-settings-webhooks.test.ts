import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBrowserApp, type BrowserTest } from './helpers/browser.js';
import { startTestWorker, until, verifyStandardWebhook } from './helpers/delivery.js';

/**
 * An administrator subscribes a receiver from the settings page, in the real
 * browser, with the delivery worker running: a test event arrives; with the
 * receiver down the failure shows with its next retry; with it back, "Send
 * again" delivers that same event; a rotated secret signs beside the old one.
 */

let t: BrowserTest;

/** A receiver that can be stopped and started again on the same port. */
interface Hook {
  url: string;
  received: { id: string; body: string; headers: http.IncomingHttpHeaders }[];
  start(): Promise<void>;
  stop(): Promise<void>;
}

async function hook(): Promise<Hook> {
  const received: Hook['received'] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ id: String(request.headers['webhook-id']), body: Buffer.concat(chunks).toString('utf8'), headers: request.headers });
      response.writeHead(200).end('ok');
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  let port = 0;
  const start = async () => {
    await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
  };
  const stop = () =>
    new Promise<void>((done) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => done());
    });
  await start();
  afterAll(() => (server.listening ? stop() : undefined));
  return { url: `http://127.0.0.1:${port}/hooks/deals`, received, start, stop };
}

beforeAll(async () => {
  t = await startBrowserApp();
  // Retries an hour apart: the failed delivery waits for its next retry, so "Send again" is what delivers it.
  await startTestWorker(t, { policy: { baseDelayMs: 3_600_000, maxDelayMs: 3_600_000, retryWindowMs: 3 * 86_400_000 } });
  await t.login();
});

describe('outbound webhooks in the browser', () => {
  it('subscribes a receiver, sends a test event, shows a failed delivery with its next retry, sends it again, and rotates the secret', async () => {
    const { page } = t;
    const receiver = await hook();
    await page.goto(`${t.origin}/service/settings/webhooks`);
    await page.getByText('No subscriptions yet').waitFor();
    await page.fill('input[name=name]', 'CRM sync');
    await page.fill('input[name=url]', receiver.url);
    await page.uncheck('input[value="service.deal.note_added"]');
    await page.click('button:has-text("Create subscription")');
    await page.locator('.secret-panel').waitFor();
    expect(page.url()).toMatch(/\/service\/settings\/webhooks\/\d+$/);
    const secret = (await page.locator('#secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);

    // A reload never shows the secret again.
    await page.reload();
    await page.locator('#delivery-log').waitFor();
    expect(await page.locator('.secret-panel').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    expect(await page.locator('.panel', { hasText: 'Events:' }).textContent()).not.toContain('Note added');

    // A test event arrives, signed with the secret the page showed.
    await page.click('button:has-text("Send test event")');
    await until(() => receiver.received.length === 1, 'the test event');
    expect(JSON.parse(receiver.received[0]!.body).event).toBe('webhook.test');
    expect(verifyStandardWebhook(secret, { headers: receiver.received[0]!.headers, distinct: {}, body: receiver.received[0]!.body, json: {} })).toBe(1);
    await until(async () => {
      await page.reload();
      return (await page.locator('tr.delivery-succeeded').count()) === 1;
    }, 'the delivered row');
    expect(await page.locator('tr.delivery-succeeded td').nth(3).textContent()).toBe('200');
    expect(await page.locator('tr.delivery-succeeded td').nth(4).textContent()).toMatch(/^\d+ ms$/);

    // Receiver down: the next test event fails and waits for its retry.
    await receiver.stop();
    await page.click('button:has-text("Send test event")');
    const failed = await until(
      () =>
        t.db
          .selectFrom('webhook_deliveries')
          .select(['id', 'event_id'])
          .where('status', '=', 'pending')
          .where('attempt_count', '>=', 1)
          .executeTakeFirst(),
      'the failed attempt',
    );
    await page.reload();
    const row = page.locator(`tr[data-delivery-id="${failed.id}"]`);
    expect(await row.locator('td').nth(2).textContent()).toBe('Failed, will retry');
    expect(await row.locator('td').nth(3).textContent()).toBe('none');
    expect(await row.locator('td').nth(6).textContent()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    expect(await row.locator('td.error-text').textContent()).toMatch(/^Connection refused: nothing is listening at that address/);
    await page.screenshot({ path: join(process.cwd(), 'docs', 'screenshots', 'settings-webhooks.png'), fullPage: true });
    await page.selectOption('select[name=status]', 'pending');
    await page.waitForURL(/status=pending/);
    expect(await page.locator('tr.delivery').count()).toBe(1);

    // Receiver back: "Send again" delivers that same event (same webhook-id).
    await receiver.start();
    await page.locator(`tr[data-delivery-id="${failed.id}"] button:has-text("Send again")`).click();
    await until(() => receiver.received.some((r) => r.id === failed.event_id), 'the event sent again');
    await until(async () => {
      await page.goto(`${t.origin}/service/settings/webhooks/${page.url().match(/webhooks\/(\d+)/)![1]}`);
      return (await page.locator(`tr[data-delivery-id="${failed.id}"].delivery-succeeded`).count()) === 1;
    }, 'the delivered row after sending again');
    expect(await page.locator(`tr[data-delivery-id="${failed.id}"] td`).nth(3).textContent()).toBe('200');

    // Rotation: a new secret, shown once; until the previous one expires, deliveries carry a signature of each.
    await page.click('button:has-text("Rotate signing secret")');
    await page.click('button:has-text("Rotate: click again")');
    await page.locator('.secret-panel').waitFor();
    expect(page.url()).toMatch(/\/service\/settings\/webhooks\/\d+$/);
    const rotated = (await page.locator('#secret').textContent())!;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    expect(await page.locator('.secret-panel').textContent()).toMatch(/every delivery carries two signatures/);
    await page.locator('.secret-panel').screenshot({ path: join(process.cwd(), 'docs', 'screenshots', 'settings-webhooks-rotated.png') });
    const beforeRotationTest = receiver.received.length;
    await page.click('button:has-text("Send test event")');
    await until(() => receiver.received.length > beforeRotationTest, 'the test event after the rotation');
    const signed = receiver.received.at(-1)!;
    const delivery = { headers: signed.headers, distinct: {}, body: signed.body, json: {} };
    expect(verifyStandardWebhook(rotated, delivery)).toBe(1);
    expect(verifyStandardWebhook(secret, delivery)).toBe(1);
    await page.reload();
    await page.locator('#webhook-secret').waitFor();
    expect(await page.content()).not.toContain(rotated);
    expect(await page.locator('#webhook-secret').textContent()).toMatch(/the previous secret also signs deliveries until \d{4}-\d\d-\d\d/);
    expect(t.dialogs).toEqual([]);
  });
});
