import { describe, expect, it } from 'vitest';
import { EVENT_NAMES } from '../src/events/events.js';
import { seal } from '../src/crypto/secret-box.js';
import { setupApp } from './helpers/app.js';
import { insertDeal, recordEvent, startReceiver, startTestWorker, until, verifyMauticSignature, verifyStandardWebhook } from './helpers/delivery.js';

describe('forward mode', () => {
  it('POSTs every event to HOST_WEBHOOK_URL signed with HOST_WEBHOOK_SECRET, with the same retries', async () => {
    const t = await setupApp();
    const host = await startReceiver((_request, index) => (index === 0 ? { status: 502 } : { status: 200 }));
    const subscriber = await startReceiver();
    // A builtin subscription exists but forward mode ignores it: the host fans out itself.
    await t.call({ method: 'POST', url: '/host/webhooks/new', payload: { name: 'Ignored', url: subscriber.url, events: EVENT_NAMES } });
    const hostSecret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
    await startTestWorker(t, { env: { WEBHOOK_MODE: 'forward', HOST_WEBHOOK_URL: host.url, HOST_WEBHOOK_SECRET: hostSecret } });

    const dealId = await insertDeal(t.db);
    const recorded = [];
    for (const name of EVENT_NAMES) recorded.push(await recordEvent(t.db, dealId, name));
    await until(async () => {
      const rows = await t.db.selectFrom('webhook_deliveries').select('status').execute();
      return rows.length === EVENT_NAMES.length && rows.every((row) => row.status === 'succeeded');
    }, 'all forwarded');

    for (const payload of recorded) {
      const tries = host.received.filter((r) => r.headers['webhook-id'] === payload.id);
      expect(tries).toHaveLength(2);
      expect(tries[1]!.json).toEqual(payload);
      expect(verifyStandardWebhook(hostSecret, tries[1]!)).toBe(1);
      expect(verifyMauticSignature(hostSecret, tries[1]!)).toBe(true);
      expect(tries[1]!.distinct['webhook-signature']).toHaveLength(1); // one field line
    }
    expect(subscriber.received).toHaveLength(0);
    const rows = await t.db.selectFrom('webhook_deliveries').select('subscription_id').execute();
    expect(rows.every((row) => row.subscription_id === null)).toBe(true);
  });
});

describe('SSRF guard', () => {
  const refused = [
    'http://127.0.0.1:8080/hook',
    'http://localhost/hook',
    'http://[::1]/hook',
    'http://10.1.2.3/hook',
    'http://172.16.0.1/hook',
    'http://192.168.1.10/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.100.100.200/latest/meta-data/',
    'http://[fd00:ec2::254]/latest/meta-data/',
    'http://[fe80::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://0.0.0.0/hook',
    'http://2130706433/hook', // 127.0.0.1 as one decimal number
    'http://0x7f.1/hook',
    'http://host.invalid/hook', // does not resolve
  ];

  it('refuses private, loopback, link-local and metadata targets at save time', async () => {
    const t = await setupApp({ config: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' } });
    for (const url of refused) {
      const response = await t.call({ method: 'POST', url: '/host/webhooks/new', payload: { name: 'Bad', url, events: ['service.deal.won'] } });
      expect(response.statusCode, url).toBe(422);
      expect(Object.keys(response.json().errors[0].details), url).toEqual(['url']);
    }
    const created = await t.call({ method: 'POST', url: '/host/webhooks/new', payload: { name: 'Good', url: 'https://93.184.215.14/hook', events: ['service.deal.won'] } });
    expect(created.statusCode).toBe(200);
    const edit = await t.call({ method: 'POST', url: `/host/webhooks/${created.json().webhook.id}/edit`, payload: { url: 'http://127.0.0.1/x' } });
    expect(edit.statusCode).toBe(422);
    expect(await t.db.selectFrom('webhook_subscriptions').select('url').execute()).toEqual([{ url: 'https://93.184.215.14/hook' }]);
  });

  it('refuses at connect time a name that resolves to a private address (DNS rebinding)', async () => {
    const t = await setupApp({ config: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' } });
    const receiver = await startReceiver();
    // Saved when the name still resolved to a public address; now it resolves to loopback.
    const url = receiver.url.replace('127.0.0.1', 'localhost');
    await t.db
      .insertInto('webhook_subscriptions')
      .values({ name: 'Rebound', url, events: ['service.deal.created'], secret_encrypted: seal(t.config.APP_KEY!, `whsec_${Buffer.alloc(32).toString('base64')}`), created_by_id: null })
      .execute();
    await startTestWorker(t, { policy: { retryWindowMs: 300 } });
    const event = await recordEvent(t.db, await insertDeal(t.db), 'service.deal.created');
    const delivery = await until(async () => {
      const row = await t.db.selectFrom('webhook_deliveries').selectAll().where('event_id', '=', event.id).executeTakeFirst();
      return row?.status === 'failed' && row;
    }, 'the refused delivery to give up');
    const attempts = await t.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', delivery.id).execute();
    expect(attempts.length).toBeGreaterThan(0);
    expect(attempts.every((a) => a.status_code === null && /not allowed/.test(a.error ?? ''))).toBe(true);
    expect(receiver.received).toHaveLength(0);
  });
});
