import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { csrfTokenFor, SESSION_COOKIE } from '../src/http/session.js';
import { ADMIN, setupApp, type TestContext } from './helpers/app.js';
import { createPipeline, createUser, defaultPipeline, type TestPipeline } from './helpers/factories.js';

/** The settings pages for inbound sources and outbound webhooks, through app.inject with page sessions. */

let t: TestContext;
let pipeline: TestPipeline;
let admin: Session;

interface Session {
  cookie: string;
  csrf: string;
}

async function login(user: { username: string; password: string }): Promise<Session> {
  const response = await t.app.inject({ method: 'POST', url: '/service/login', payload: user });
  const token = response.cookies.find((c) => c.name === SESSION_COOKIE)!.value;
  return { cookie: `${SESSION_COOKIE}=${token}`, csrf: csrfTokenFor(token) };
}

beforeAll(async () => {
  t = await setupApp();
  pipeline = await defaultPipeline(t.db);
  admin = await login(ADMIN);
});

const get = (url: string, session = admin) => t.app.inject({ method: 'GET', url, headers: { cookie: session.cookie, accept: 'text/html' } });

/** A form post as the browser sends it; `htmx` adds the header htmx sends. */
const post = (url: string, form: Record<string, string | string[]> = {}, options: { session?: Session; htmx?: boolean; csrf?: boolean } = {}) => {
  const session = options.session ?? admin;
  const body = new URLSearchParams();
  for (const [key, value] of Object.entries(form)) for (const one of [value].flat()) body.append(key, one);
  if (options.csrf !== false) body.set('_csrf', session.csrf);
  return t.app.inject({
    method: 'POST',
    url,
    headers: {
      cookie: session.cookie,
      'content-type': 'application/x-www-form-urlencoded',
      ...(options.htmx ? { 'hx-request': 'true' } : {}),
    },
    payload: body.toString(),
  });
};

/** A receive signed the documented way: hex HMAC-SHA256 of the raw body, keyed with the secret text. */
function receive(sourceId: string, secret: string, body: Record<string, unknown>) {
  const raw = JSON.stringify(body);
  const signature = `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
  return t.app.inject({
    method: 'POST',
    url: `/service/settings/inbound-webhooks/${sourceId}/receive`,
    headers: { 'content-type': 'application/json', 'x-service-signature': signature },
    payload: raw,
  });
}

const SECRET_IN_PAGE = /<code id="secret" class="code one-line">([0-9a-f]{64})<\/code>/;

async function createSource(name: string): Promise<{ id: string; secret: string; body: string }> {
  const response = await post('/service/settings/inbound/new', { 'source[name]': name, 'source[pipeline]': String(pipeline.id) }, { htmx: true });
  expect(response.statusCode).toBe(200);
  const id = /\/service\/settings\/inbound\/([0-9a-f-]{36})$/.exec(String(response.headers['hx-push-url']))![1]!;
  return { id, secret: SECRET_IN_PAGE.exec(response.body)![1]!, body: response.body };
}

describe('inbound sources page', () => {
  it('answers a refused create with the errors in words next to the fields, keeping what was typed', async () => {
    const other = await createPipeline(t.db, { name: 'Partners' });
    const empty = await post('/service/settings/inbound/new', { 'source[name]': '  ', 'source[pipeline]': String(other.id) }, { htmx: true });
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toMatch(/name="source\[name\]"[^>]*>\s*<span class="field-error">[^<]+<\/span>/);
    expect(empty.body).toMatch(new RegExp(`<option value="${other.id}" selected>Partners</option>`));

    const unknown = await post('/service/settings/inbound/new', { 'source[name]': 'Lead form', 'source[pipeline]': '999999' }, { htmx: true });
    expect(unknown.body).toMatch(/name="source\[pipeline\]"[\s\S]*?<span class="field-error">Unknown pipeline<\/span>/);
    expect(unknown.body).toContain('value="Lead form"');
    expect(await t.db.selectFrom('inbound_sources').select('id').execute()).toEqual([]);
  });

  it('shows the secret once, in the answer that created it, with examples that carry it; the page itself never does', async () => {
    const { id, secret, body } = await createSource('Website form');
    expect(body).toContain('This is the only time the secret is shown');
    expect(body).toContain(`ENDPOINT=&#39;http://service.test/service/settings/inbound-webhooks/${id}/receive&#39;`);
    expect(body).toContain(`SECRET=&#39;${secret}&#39;`);
    expect(body).toContain(`const secret = &quot;${secret}&quot;;`);
    expect(body).toContain('hx-history="false"');
    // The secret shown is the one that signs.
    expect((await receive(id, secret, { title: 'From the page secret' })).statusCode).toBe(200);

    const again = await get(`/service/settings/inbound/${id}`);
    expect(again.statusCode).toBe(200);
    expect(again.headers['cache-control']).toBe('no-store');
    expect(again.body).not.toContain(secret);
    expect(again.body).toContain('PASTE-THE-SECRET-HERE');
    expect((await get('/service/settings/inbound')).body).not.toContain(secret);
  });

  it('edits the name and pipeline, with errors next to the fields', async () => {
    const { id } = await createSource('Before');
    const bad = await post(`/service/settings/inbound/${id}/edit`, { 'source[name]': 'After', 'source[pipeline]': '999999' });
    expect(bad.statusCode).toBe(200);
    expect(bad.body).toContain('Unknown pipeline');
    expect(bad.body).toContain('value="After"');
    const other = await createPipeline(t.db, { name: 'Renewals' });
    const good = await post(`/service/settings/inbound/${id}/edit`, { 'source[name]': 'After', 'source[pipeline]': String(other.id) });
    expect(good.statusCode).toBe(303);
    expect(good.headers.location).toBe(`/service/settings/inbound/${id}`);
    const api = await t.call({ method: 'GET', url: `/service/settings/inbound-webhooks/${id}` });
    expect(api.json().source).toMatchObject({ name: 'After', pipeline: { id: other.id, name: 'Renewals' } });
  });

  it('sets the stage and owner of created deals, refusing a stage of another pipeline next to its field', async () => {
    const owner = await createUser(t.db, ['service:deals:viewown'], { name: 'Olga Owner' });
    const second = pipeline.stages[1]!;
    const response = await post(
      '/service/settings/inbound/new',
      { 'source[name]': 'Staged', 'source[pipeline]': String(pipeline.id), 'source[stage]': String(second.id), 'source[owner]': String(owner.id) },
      { htmx: true },
    );
    const id = /\/service\/settings\/inbound\/([0-9a-f-]{36})$/.exec(String(response.headers['hx-push-url']))![1]!;
    const secret = SECRET_IN_PAGE.exec(response.body)![1]!;
    expect(response.body).toContain(`New deals: ${pipeline.name}, stage ${second.name}, owner Olga Owner`);
    const created = (await receive(id, secret, { title: 'Lands in the second stage' })).json();
    const deal = await t.db.selectFrom('deals').select(['stage_id', 'owner_id']).where('id', '=', created.deal.id).executeTakeFirstOrThrow();
    expect(deal).toEqual({ stage_id: second.id, owner_id: owner.id });

    const other = await createPipeline(t.db, { name: 'Elsewhere' });
    const refused = await post(`/service/settings/inbound/${id}/edit`, {
      'source[name]': 'Staged again',
      'source[pipeline]': String(pipeline.id),
      'source[stage]': String(other.stages[0]!.id),
      'source[owner]': '',
    });
    expect(refused.body).toMatch(/name="source\[stage\]"[\s\S]*?<span class="field-error">Not a stage of the chosen pipeline<\/span>/);
    expect(refused.body).toContain('value="Staged again"');
    expect(refused.body).toMatch(new RegExp(`<option value="${other.stages[0]!.id}" selected>`));

    // Through the API: another pipeline without a stage of its own starts deals in its first stage; owner cleared with an empty value.
    const api = await t.call({ method: 'POST', url: `/service/settings/inbound-webhooks/${id}/edit`, payload: { source: { pipeline: other.id, owner: null } } });
    expect(api.statusCode).toBe(200);
    expect(api.json().source).toMatchObject({ pipeline: { id: other.id }, stage: null, owner: null });
    const unknownOwner = await t.call({ method: 'POST', url: `/service/settings/inbound-webhooks/${id}/edit`, payload: { source: { owner: 999999 } } });
    expect(unknownOwner.statusCode).toBe(422);
    expect(unknownOwner.json().errors[0].details).toEqual({ 'source[owner]': ['Unknown user'] });
  });

  it('maps a sender\'s own field names onto the deal, with errors next to the mapping inputs', async () => {
    const { id, secret } = await createSource('Form builder');
    const bad = await post(`/service/settings/inbound/${id}/edit`, {
      'source[name]': 'Form builder',
      'source[pipeline]': String(pipeline.id),
      'source[fields][title]': 'subject',
      'source[fields][contact_email]': 'lead..email',
    });
    expect(bad.body).toMatch(/name="source\[fields\]\[contact_email\]"[^>]*>\s*<span class="field-error">Must be field names joined by dots, such as lead.email<\/span>/);
    expect(bad.body).toContain('value="subject"');
    expect(bad.body).toMatch(/<details class="mapping" open>/);

    const good = await post(`/service/settings/inbound/${id}/edit`, {
      'source[name]': 'Form builder',
      'source[pipeline]': String(pipeline.id),
      'source[fields][title]': 'subject',
      'source[fields][amount]': 'budget',
      'source[fields][contact_email]': 'lead.email',
      'source[fields][contact_first_name]': 'lead.name',
      'source[fields][external_id]': '',
    });
    expect(good.statusCode).toBe(303);
    await new Promise((done) => setImmediate(done)); // the receiver reads the changed source again
    const page = await get(`/service/settings/inbound/${id}`);
    expect(page.body).toContain('(4 mapped)');
    expect(page.body).toMatch(/name="source\[fields\]\[contact_email\]" type="text" value="lead.email"/);

    const answer = (await receive(id, secret, { subject: 'Mapped deal', budget: 900, lead: { email: 'Mapped@Example.com', name: 'Mia' } })).json();
    expect(answer).toMatchObject({ success: true, created: true, contact: { created: true } });
    const deal = await t.db.selectFrom('deals').select(['title', 'amount']).where('id', '=', answer.deal.id).executeTakeFirstOrThrow();
    expect(deal).toEqual({ title: 'Mapped deal', amount: '900.00' });
    const contact = await t.db.selectFrom('contacts').select(['email', 'first_name']).where('id', '=', answer.contact.id).executeTakeFirstOrThrow();
    expect(contact).toEqual({ email: 'Mapped@Example.com', first_name: 'Mia' });
    // A mapped value is checked by the receive's own rules, under the deal field's name.
    const refused = await receive(id, secret, { subject: 'Bad budget', budget: '900' });
    expect(refused.statusCode).toBe(422);
    expect(refused.json().errors[0].details).toHaveProperty('amount');

    const api = await t.call({ method: 'GET', url: `/service/settings/inbound-webhooks/${id}` });
    expect(api.json().source.fields).toEqual({ title: 'subject', amount: 'budget', contact_email: 'lead.email', contact_first_name: 'lead.name' });
    const unknown = await t.call({ method: 'POST', url: `/service/settings/inbound-webhooks/${id}/edit`, payload: { source: { fields: { stage: 'x' } } } });
    expect(unknown.statusCode).toBe(422);
  });

  it('disables and enables a source: a disabled one answers 404 to receives', async () => {
    const { id, secret } = await createSource('Toggle');
    // A receive first, so the receiver holds the source in its cache: disabling must reach it at once.
    expect((await receive(id, secret, { title: 'Before disabling' })).statusCode).toBe(200);
    expect((await post(`/service/settings/inbound/${id}/disable`)).statusCode).toBe(303);
    expect((await get(`/service/settings/inbound/${id}`)).body).toContain('This source is disabled');
    await new Promise((done) => setImmediate(done)); // the change notice is delivered on the next tick
    expect((await receive(id, secret, { title: 'While disabled' })).statusCode).toBe(404);
    expect((await post(`/service/settings/inbound/${id}/enable`)).statusCode).toBe(303);
    await new Promise((done) => setImmediate(done));
    expect((await receive(id, secret, { title: 'Enabled again' })).statusCode).toBe(200);
  });

  it('rotates the secret: the new one is shown once with the overlap, and both work during it', async () => {
    const { id, secret: old } = await createSource('Rotating');
    const rotated = await post(`/service/settings/inbound/${id}/rotate`, {}, { htmx: true });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.headers['hx-push-url']).toBe(`/service/settings/inbound/${id}`);
    const fresh = SECRET_IN_PAGE.exec(rotated.body)![1]!;
    expect(fresh).not.toBe(old);
    expect(rotated.body).toContain('The previous secret keeps working until');
    await new Promise((done) => setImmediate(done));
    expect((await receive(id, fresh, { title: 'New secret' })).statusCode).toBe(200);
    expect((await receive(id, old, { title: 'Old secret' })).statusCode).toBe(200);
    const page = await get(`/service/settings/inbound/${id}`);
    expect(page.body).toContain('A previous secret still works until');
    expect(page.body).not.toContain(fresh);
  });

  it('lists receives with time, result, error in words and deal link, filtered by result (page and API)', async () => {
    const { id, secret } = await createSource('Logged');
    const created = (await receive(id, secret, { title: 'Logged deal', external_id: 'x-1' })).json();
    await receive(id, 'f'.repeat(64), { title: 'Forged' });
    const all = await get(`/service/settings/inbound/${id}`);
    expect(all.body).toContain(`<a href="/service/${created.deal.id}/view">Deal #${created.deal.id}</a>`);
    expect(all.body).toContain('Refused');

    const refused = await get(`/service/settings/inbound/${id}?outcome=rejected`);
    expect(refused.body).not.toContain(`Deal #${created.deal.id}`);
    expect(refused.body).toMatch(/<td class="error-text">[^<]*signature[^<]*<\/td>/i);
    expect(refused.body).toMatch(/<option value="rejected" selected>/);

    const api = await t.call({ method: 'GET', url: `/service/settings/inbound-webhooks/${id}/log?outcome=created` });
    expect(api.json().log).toEqual([expect.objectContaining({ outcome: 'created', deal: { id: created.deal.id } })]);
    const badFilter = await t.call({ method: 'GET', url: `/service/settings/inbound-webhooks/${id}/log?outcome=lost` });
    expect(badFilter.statusCode).toBe(422);
    expect(badFilter.json().errors[0].details).toHaveProperty('outcome');
  });

  it('deletes a source, keeping its deals', async () => {
    const { id, secret } = await createSource('Doomed');
    const deal = (await receive(id, secret, { title: 'Survivor' })).json().deal.id;
    const response = await post(`/service/settings/inbound/${id}/delete`);
    expect(response.statusCode).toBe(303);
    expect((await get(`/service/settings/inbound/${id}`)).statusCode).toBe(404);
    expect(await t.db.selectFrom('deals').select('id').where('id', '=', deal).executeTakeFirst()).toEqual({ id: deal });
  });
});

describe('outbound webhooks page', () => {
  async function createWebhook(name: string, url = 'http://127.0.0.1:9/hook') {
    const response = await post('/service/settings/webhooks/new', { name, url, 'events[]': ['service.deal.created', 'service.deal.won'] }, { htmx: true });
    expect(response.statusCode).toBe(200);
    const id = Number(/\/service\/settings\/webhooks\/(\d+)$/.exec(String(response.headers['hx-push-url']))![1]);
    return { id, body: response.body };
  }

  it('answers a refused create with errors next to the fields, keeping the name, URL and checked events', async () => {
    const none = await post('/service/settings/webhooks/new', { name: 'CRM', url: 'ftp://example.com/x', 'events[]': '' }, { htmx: true });
    expect(none.statusCode).toBe(200);
    expect(none.body).toMatch(/name="url"[^>]*>\s*<span class="field-error">Must be an http or https URL<\/span>/);
    expect(none.body).toContain('Select at least one event');
    expect(none.body).toContain('value="CRM"');
    expect(none.body).toContain('value="ftp://example.com/x"');

    const some = await post('/service/settings/webhooks/new', { name: '', url: 'https://example.com/x', 'events[]': ['service.deal.won'] }, { htmx: true });
    expect(some.body).toMatch(/value="service\.deal\.won" checked/);
    expect(some.body).not.toMatch(/value="service\.deal\.lost" checked/);
    expect(await t.db.selectFrom('webhook_subscriptions').select('id').execute()).toEqual([]);
  });

  it('shows the signing secret once', async () => {
    const { id, body } = await createWebhook('CRM sync');
    const secret = /<code id="secret" class="code one-line">(whsec_[A-Za-z0-9+/=]+)<\/code>/.exec(body)![1]!;
    const page = await get(`/service/settings/webhooks/${id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('CRM sync');
    expect(page.body).not.toContain(secret);
    expect(page.body).not.toContain('whsec_');
  });

  it('queues a test event, sends one again, and shows a disabled subscription with why and a re-enable button', async () => {
    const { id } = await createWebhook('Tester');
    expect((await post(`/service/settings/webhooks/${id}/test`)).statusCode).toBe(303);
    const page = await get(`/service/settings/webhooks/${id}`);
    expect(page.body).toContain('Test event');
    expect(page.body).toContain('Waiting to be sent');
    const delivery = await t.db.selectFrom('webhook_deliveries').select(['id', 'event']).where('subscription_id', '=', id).executeTakeFirstOrThrow();
    expect(delivery.event).toBe('webhook.test');

    expect((await post(`/service/settings/webhooks/${id}/deliveries/${delivery.id}/redeliver`)).statusCode).toBe(303);

    expect((await post(`/service/settings/webhooks/${id}/disable`)).statusCode).toBe(303);
    const disabled = await get(`/service/settings/webhooks/${id}`);
    expect(disabled.body).toContain('This subscription is disabled');
    expect(disabled.body).toContain('Disabled by an administrator');
    expect(disabled.body).toContain(`action="/service/settings/webhooks/${id}/enable"`);
    expect(disabled.body).not.toContain('/redeliver"');

    const refused = await post(`/service/settings/webhooks/${id}/test`);
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('The webhook is disabled; enable it first');

    expect((await post(`/service/settings/webhooks/${id}/enable`)).statusCode).toBe(303);
    const enabled = await get(`/service/settings/webhooks/${id}`);
    expect(enabled.body).not.toContain('This subscription is disabled');
    expect(enabled.body).toContain('Send test event');
  });

  it('changes the URL and events, with errors next to the fields keeping what was typed', async () => {
    const { id } = await createWebhook('Editable');
    const bad = await post(`/service/settings/webhooks/${id}/edit`, { name: 'Edited', url: 'javascript:alert(1)', 'events[]': ['service.deal.lost'] });
    expect(bad.statusCode).toBe(200);
    expect(bad.body).toMatch(/name="url"[^>]*value="javascript:alert\(1\)"[^>]*>\s*<span class="field-error">Must be an http or https URL<\/span>/);
    expect(bad.body).toContain('value="Edited"');
    expect(bad.body).toMatch(/<details open>/);
    expect(bad.body).toMatch(/value="service\.deal\.lost" checked/);
    expect(bad.body).not.toMatch(/value="service\.deal\.won" checked/);

    const good = await post(`/service/settings/webhooks/${id}/edit`, { name: 'Edited', url: 'https://hooks.example.com/new', 'events[]': ['service.deal.lost'] });
    expect(good.statusCode).toBe(303);
    const api = await t.call({ method: 'GET', url: `/host/webhooks/${id}` });
    expect(api.json().webhook).toMatchObject({ name: 'Edited', url: 'https://hooks.example.com/new', events: ['service.deal.lost'] });
  });

  it('filters the delivery log by status', async () => {
    const { id } = await createWebhook('Filtered');
    await post(`/service/settings/webhooks/${id}/test`);
    expect((await get(`/service/settings/webhooks/${id}?status=pending`)).body).toContain('Test event');
    const succeeded = await get(`/service/settings/webhooks/${id}?status=succeeded`);
    expect(succeeded.body).toContain('No deliveries with this status.');
    expect(succeeded.body).toMatch(/<option value="succeeded" selected>/);
  });
});

describe('permissions, CSRF and escaping', () => {
  it('gives a seller without these rights a 403 on every URL, GET and POST, and changes nothing', async () => {
    const { id: sourceId } = await createSource('Guarded');
    const { body } = await post('/service/settings/webhooks/new', { name: 'Guarded', url: 'https://example.com/h', 'events[]': 'service.deal.won' }, { htmx: true });
    const webhookId = /\/service\/settings\/webhooks\/(\d+)\/test/.exec(body)![1];
    const seller = await login(await createUser(t.db, ['service:deals:viewown', 'service:deals:create', 'service:pipelines:view']));
    const gets = ['/service/settings/inbound', `/service/settings/inbound/${sourceId}`, '/service/settings/webhooks', `/service/settings/webhooks/${webhookId}`];
    for (const url of gets) expect((await get(url, seller)).statusCode, url).toBe(403);
    const posts = [
      '/service/settings/inbound/new',
      `/service/settings/inbound/${sourceId}/edit`,
      `/service/settings/inbound/${sourceId}/disable`,
      `/service/settings/inbound/${sourceId}/rotate`,
      `/service/settings/inbound/${sourceId}/delete`,
      '/service/settings/webhooks/new',
      `/service/settings/webhooks/${webhookId}/test`,
      `/service/settings/webhooks/${webhookId}/edit`,
      `/service/settings/webhooks/${webhookId}/disable`,
      `/service/settings/webhooks/${webhookId}/deliveries/1/redeliver`,
      `/service/settings/webhooks/${webhookId}/delete`,
    ];
    for (const url of posts) {
      const response = await post(url, { 'source[name]': 'Hijack', name: 'Hijack', url: 'https://evil.example/', 'events[]': 'service.deal.won' }, { session: seller });
      expect(response.statusCode, url).toBe(403);
    }
    expect(await t.db.selectFrom('inbound_sources').select('id').where('name', '=', 'Hijack').execute()).toEqual([]);
    expect(await t.db.selectFrom('webhook_subscriptions').select('id').where('name', '=', 'Hijack').execute()).toEqual([]);
    expect((await t.call({ method: 'GET', url: `/service/settings/inbound-webhooks/${sourceId}` })).json().source.enabled).toBe(true);
  });

  it('lets a webhooks manager who is no host admin manage inbound sources but not outbound subscriptions', async () => {
    const manager = await login(await createUser(t.db, ['service:webhooks:manage', 'service:pipelines:view', 'service:deals:viewown']));
    expect((await get('/service/settings/inbound', manager)).statusCode).toBe(200);
    expect((await get('/service/settings/webhooks', manager)).statusCode).toBe(403);
  });

  it('refuses a post without the CSRF token', async () => {
    const response = await post('/service/settings/inbound/new', { 'source[name]': 'No token' }, { csrf: false });
    expect(response.statusCode).toBe(403);
    expect(await t.db.selectFrom('inbound_sources').select('id').where('name', '=', 'No token').execute()).toEqual([]);
  });

  it('shows a source name and a webhook name and URL carrying script as text', async () => {
    const evil = '<script>alert("x")</script><img src=x onerror=alert(1)>';
    const { id } = await createSource(evil);
    for (const page of [await get('/service/settings/inbound'), await get(`/service/settings/inbound/${id}`)]) {
      expect(page.body).not.toContain('<script>alert');
      expect(page.body).not.toContain('<img src=x');
      expect(page.body).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    }
    const url = 'https://example.com/hook?q="><script>alert(2)</script>';
    const created = await post('/service/settings/webhooks/new', { name: evil, url, 'events[]': 'service.deal.won' }, { htmx: true });
    const webhookId = /\/service\/settings\/webhooks\/(\d+)$/.exec(String(created.headers['hx-push-url']))![1];
    for (const page of [await get('/service/settings/webhooks'), await get(`/service/settings/webhooks/${webhookId}`)]) {
      expect(page.body).not.toContain('<script>alert');
      expect(page.body).not.toContain('"><script>');
      expect(page.body).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
      expect(page.body).toContain('q=&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;');
    }
  });
});

describe('when events go to the host instead (WEBHOOK_MODE=forward)', () => {
  it('says where outbound webhooks are managed instead, and keeps the inbound page', async () => {
    const forward = await setupApp({
      config: { WEBHOOK_MODE: 'forward', HOST_WEBHOOK_URL: 'https://host.example/dispatch', HOST_WEBHOOK_SECRET: 'a-forwarding-secret-for-tests' },
    });
    const response = await forward.app.inject({ method: 'POST', url: '/service/login', payload: ADMIN });
    const cookie = `${SESSION_COOKIE}=${response.cookies.find((c) => c.name === SESSION_COOKIE)!.value}`;
    const page = (url: string) => forward.app.inject({ method: 'GET', url, headers: { cookie, accept: 'text/html' } });
    const webhooks = await page('/service/settings/webhooks');
    expect(webhooks.statusCode).toBe(200);
    expect(webhooks.body).toContain('WEBHOOK_MODE=forward');
    expect(webhooks.body).not.toContain('New subscription');
    expect((await page('/service/settings/webhooks/1')).statusCode).toBe(404);
    expect((await page('/service/settings/inbound')).statusCode).toBe(200);
    // The index lists both sections, each linking where it lives.
    const index = await page('/service/settings');
    expect(index.body).toContain('href="/service/settings/inbound"');
    expect(index.body).toContain('href="/service/settings/webhooks"');
  });
});
