import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { bootstrap, createBuiltinHost } from '../src/host/builtin/index.js';
import { csrfTokenFor, SESSION_COOKIE } from '../src/http/session.js';
import { ADMIN, basic, createTestDatabase, setupApp, testConfig, type TestContext } from './helpers/app.js';
import { createDeal, createPipeline, createUser, type TestUser } from './helpers/factories.js';

/** The settings pages through the real app: forms, errors in words next to inputs, permissions, escaping. */

let t: TestContext;
let admin: Session;
let seller: TestUser;
let sellerSession: Session;

interface Session {
  cookie: string;
  csrf: string;
}

async function login(user: { username: string; password: string } = ADMIN): Promise<Session> {
  const response = await t.app.inject({ method: 'POST', url: '/service/login', payload: { username: user.username, password: user.password } });
  const cookie = response.cookies.find((c) => c.name === SESSION_COOKIE);
  if (!cookie) throw new Error(`login failed for ${user.username}: ${response.statusCode}`);
  return { cookie: `${SESSION_COOKIE}=${cookie.value}`, csrf: csrfTokenFor(cookie.value) };
}

const get = (url: string, session = admin) => t.app.inject({ method: 'GET', url, headers: { cookie: session.cookie, accept: 'text/html' } });

/** A form post as a browser sends it: urlencoded bracket names, with the session's CSRF field. */
function post(url: string, fields: [string, string][] | Record<string, string>, session = admin) {
  const body = new URLSearchParams(Array.isArray(fields) ? fields : Object.entries(fields));
  body.set('_csrf', session.csrf);
  return t.app.inject({
    method: 'POST',
    url,
    headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    payload: body.toString(),
  });
}

/** The words shown next to an input: the field's label holds the input and its errors. */
function errorsNextTo(page: string, name: string): string[] {
  const escaped = name.replace(/[[\]]/g, '\\$&');
  const field = new RegExp(`<label class="field invalid"><span>[^<]*</span>\\s*<(?:input|select) name="${escaped}"[\\s\\S]*?</label>`).exec(page);
  if (!field) return [];
  return [...field[0].matchAll(/<span class="field-error">([^<]*)<\/span>/g)].map((m) => m[1]!);
}

const valueOf = (page: string, name: string) => new RegExp(`name="${name.replace(/[[\]]/g, '\\$&')}" type="[a-z]+" value="([^"]*)"`).exec(page)?.[1];

beforeAll(async () => {
  t = await setupApp();
  admin = await login();
  seller = await createUser(t.db, ['service:deals:viewown', 'service:deals:editown', 'service:deals:create', 'service:pipelines:view']);
  sellerSession = await login(seller);
});

describe('settings index and navigation', () => {
  it('shows an administrator one Settings link and every section they may open', async () => {
    const board = await get('/service/board');
    expect(board.body.match(/href="\/service\/settings"/g)).toHaveLength(1);
    const index = await get('/service/settings');
    expect(index.statusCode).toBe(200);
    for (const [label, path] of [
      ['Pipelines and stages', '/service/settings/pipelines'],
      ['Inbound webhook sources', '/service/settings/inbound'],
      ['Outbound webhooks', '/service/settings/webhooks'],
      ['Users', '/service/settings/users'],
      ['Roles', '/service/settings/roles'],
      ['API credentials', '/service/settings/api-credentials'],
    ]) {
      expect(index.body).toContain(`<a href="${path}"><strong>${label}</strong></a>`);
    }
  });

  it('shows a pipeline manager only the pipeline section', async () => {
    const manager = await createUser(t.db, ['service:pipelines:view', 'service:pipelines:manage']);
    const session = await login(manager);
    const index = await get('/service/settings', session);
    expect(index.statusCode).toBe(200);
    expect(index.body).toContain('href="/service/settings/pipelines"');
    expect(index.body).not.toContain('href="/service/settings/users"');
    expect((await get('/service/settings/users', session)).statusCode).toBe(403);
  });

  it('gives a seller without settings rights no link and a 403 page on every settings URL, GET and POST', async () => {
    const board = await get('/service/board', sellerSession);
    expect(board.statusCode).toBe(200);
    expect(board.body).not.toContain('/service/settings');
    const pipeline = await createPipeline(t.db);
    const stage = pipeline.stages[0]!.id;
    const gets = ['/service/settings', '/service/settings/pipelines', `/service/settings/pipelines/${pipeline.id}`, '/service/settings/users', `/service/settings/users/${seller.id}`, '/service/settings/roles', `/service/settings/roles/${seller.roleId}`, '/service/settings/api-credentials'];
    for (const url of gets) {
      const response = await get(url, sellerSession);
      expect(response.statusCode, url).toBe(403);
      expect(response.headers['content-type'], url).toMatch(/text\/html/);
      expect(response.body, url).toContain('Not allowed');
      // Still signed in: the top bar with the way back and Log out.
      expect(response.body, url).toContain('/service/logout');
      expect(response.body, url).toContain('All deals');
    }
    const posts: [string, Record<string, string>][] = [
      ['/service/settings/pipelines/new', { 'pipeline[name]': 'Mine', 'stages[0][name]': 'A' }],
      [`/service/settings/pipelines/${pipeline.id}/edit`, { 'pipeline[name]': 'Renamed by a seller' }],
      [`/service/settings/pipelines/${pipeline.id}/default`, {}],
      [`/service/settings/pipelines/${pipeline.id}/delete`, {}],
      [`/service/settings/pipelines/${pipeline.id}/stages/new`, { 'stage[name]': 'X' }],
      [`/service/settings/pipelines/${pipeline.id}/stages/reorder`, { 'order[]': String(stage) }],
      [`/service/settings/stages/${stage}/edit`, { 'stage[name]': 'Y' }],
      [`/service/settings/stages/${stage}/delete`, {}],
      ['/service/settings/users/new', { username: 'sneaky', name: 'Sneaky', password: 'long-enough-password', role: '1' }],
      [`/service/settings/users/${seller.id}/edit`, { role: '1' }],
      [`/service/settings/users/${seller.id}/password`, { password: 'long-enough-password' }],
      [`/service/settings/users/${seller.id}/deactivate`, {}],
      [`/service/settings/users/${seller.id}/activate`, {}],
      ['/service/settings/roles/new', { name: 'Sneaky role', isAdmin: 'true' }],
      [`/service/settings/roles/${seller.roleId}/edit`, { isAdmin: 'true', name: 'x' }],
      [`/service/settings/roles/${seller.roleId}/delete`, {}],
      ['/service/settings/api-credentials/new', { name: 'Sneaky', user: String(seller.id) }],
      ['/service/settings/api-credentials/1/delete', {}],
    ];
    for (const [url, fields] of posts) expect((await post(url, fields, sellerSession)).statusCode, url).toBe(403);
    const role = await t.call({ method: 'GET', url: `/host/roles/${seller.roleId}` });
    expect(role.json().role.isAdmin).toBe(false);
    const after = await t.call({ method: 'GET', url: `/service/pipelines/${pipeline.id}` });
    expect(after.json().pipeline.name).toBe(pipeline.name);
    // Their own account is theirs, though.
    expect((await get('/service/account', sellerSession)).statusCode).toBe(200);
  });

  it('refuses a settings form without the CSRF field', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/service/settings/pipelines/new',
      headers: { cookie: admin.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'pipeline%5Bname%5D=Forged&stages%5B0%5D%5Bname%5D=A',
    });
    expect(response.statusCode).toBe(403);
    expect(await t.db.selectFrom('pipelines').select('id').where('name', '=', 'Forged').execute()).toEqual([]);
  });
});

describe('pipelines and stages', () => {
  it('shows what is wrong next to the inputs and keeps what was typed', async () => {
    const response = await post('/service/settings/pipelines/new', [
      ['pipeline[name]', '   '],
      ['stages[0][name]', 'Discovery'],
      ['stages[0][type]', 'open'],
      ['stages[0][probability]', '140'],
      ['stages[1][name]', ''],
      ['stages[1][type]', 'open'],
      ['stages[1][probability]', ''],
    ]);
    expect(response.statusCode).toBe(422);
    expect(errorsNextTo(response.body, 'pipeline[name]')).toEqual(['Required']);
    expect(errorsNextTo(response.body, 'stages[0][probability]')).toEqual(['Must be a whole number from 0 to 100']);
    expect(valueOf(response.body, 'stages[0][name]')).toBe('Discovery');
    expect(valueOf(response.body, 'stages[0][probability]')).toBe('140');
  });

  it('creates a pipeline with its stages, renames it and makes it the default', async () => {
    const created = await post('/service/settings/pipelines/new', [
      ['pipeline[name]', 'Partners'],
      ['stages[0][name]', 'Intro'],
      ['stages[0][type]', 'open'],
      ['stages[0][probability]', '20'],
      ['stages[1][name]', 'Signed'],
      ['stages[1][type]', 'won'],
      ['stages[1][probability]', ''],
      ['stages[2][name]', ''],
      ['stages[2][type]', 'open'],
      ['stages[2][probability]', ''],
    ]);
    expect(created.statusCode, created.body.match(/field-error">[^<]*|form-error[^<]*</g)?.join()).toBe(303);
    const id = Number(/pipelines\/(\d+)\?done=created$/.exec(created.headers.location as string)![1]);
    const api = (await t.call({ method: 'GET', url: `/service/pipelines/${id}` })).json().pipeline;
    expect(api.stages.map((s: { name: string; type: string; probability: number }) => [s.name, s.type, s.probability])).toEqual([
      ['Intro', 'open', 20],
      ['Signed', 'won', 100],
    ]);
    const page = await get(created.headers.location as string);
    expect(page.body).toContain('Pipeline created.');

    const blank = await post(`/service/settings/pipelines/${id}/edit`, { 'pipeline[name]': '' });
    expect(blank.statusCode).toBe(422);
    expect(errorsNextTo(blank.body, 'pipeline[name]')).toEqual(['Required']);
    expect((await post(`/service/settings/pipelines/${id}/edit`, { 'pipeline[name]': 'Partner deals' })).statusCode).toBe(303);
    expect((await post(`/service/settings/pipelines/${id}/default`, {})).statusCode).toBe(303);
    const after = (await t.call({ method: 'GET', url: `/service/pipelines/${id}` })).json().pipeline;
    expect([after.name, after.isDefault]).toEqual(['Partner deals', true]);
    // The default cannot be deleted, and the page says why.
    const refused = await post(`/service/settings/pipelines/${id}/delete`, {});
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('The default pipeline cannot be deleted; make another pipeline the default first');
    const sales = (await t.db.selectFrom('pipelines').select('id').where('name', '=', 'Sales').executeTakeFirstOrThrow()).id;
    expect((await post(`/service/settings/pipelines/${sales}/default`, {})).statusCode).toBe(303);
  });

  it('refuses to delete a pipeline holding deals, in words on the page, and deletes an empty one', async () => {
    const full = await createPipeline(t.db, { name: 'Holds deals' });
    await createDeal(t.db, { title: 'Still here', pipelineId: full.id, stageId: full.stages[0]!.id });
    const page = await get(`/service/settings/pipelines/${full.id}`);
    expect(page.body).toContain('can be deleted only while it holds no deals');
    const refused = await post(`/service/settings/pipelines/${full.id}/delete`, {});
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('The pipeline holds 1 deal(s); move or delete them first');
    expect((await t.call({ method: 'GET', url: `/service/pipelines/${full.id}` })).statusCode).toBe(200);

    const empty = await createPipeline(t.db, { name: 'Empty one' });
    const deleted = await post(`/service/settings/pipelines/${empty.id}/delete`, {});
    expect(deleted.statusCode).toBe(303);
    expect(deleted.headers.location).toBe('/service/settings/pipelines?done=deleted');
    expect((await t.call({ method: 'GET', url: `/service/pipelines/${empty.id}` })).statusCode).toBe(404);
  });

  it('adds and edits stages, and deletes a stage only by moving its deals', async () => {
    const pipeline = await createPipeline(t.db, { name: 'Stage work' });
    const [a, b] = pipeline.stages;
    const bad = await post(`/service/settings/pipelines/${pipeline.id}/stages/new`, { 'stage[name]': 'Demo', 'stage[type]': 'maybe', 'stage[probability]': '30' });
    expect(bad.statusCode).toBe(422);
    expect(errorsNextTo(bad.body, 'stage[type]')).toEqual(['Must be open, won or lost']);
    const added = await post(`/service/settings/pipelines/${pipeline.id}/stages/new`, { 'stage[name]': 'Demo', 'stage[type]': 'open', 'stage[probability]': '30', 'stage[position]': '2', 'stage[color]': '#0e9384' });
    expect(added.statusCode).toBe(303);
    const edited = await post(`/service/settings/stages/${b!.id}/edit`, { 'stage[name]': 'Negotiation', 'stage[type]': 'open', 'stage[probability]': '70' });
    expect(edited.statusCode).toBe(303);
    let api = (await t.call({ method: 'GET', url: `/service/pipelines/${pipeline.id}` })).json().pipeline;
    expect(api.stages.map((s: { name: string }) => s.name)).toEqual(['Open A', 'Demo', 'Negotiation', 'Won', 'Lost']);
    expect(api.stages.slice(1, 3).map((s: { probability: number; color: string | null }) => [s.probability, s.color])).toEqual([[30, '#0e9384'], [70, null]]);
    const page = await get(`/service/settings/pipelines/${pipeline.id}`);
    expect(page.body).toContain(`alt="Teal"><strong>Demo</strong>`);
    const badColor = await post(`/service/settings/stages/${b!.id}/edit`, { 'stage[name]': 'Negotiation', 'stage[color]': 'javascript:x' });
    expect(badColor.statusCode).toBe(422);
    expect(errorsNextTo(badColor.body, 'stage[color]')).toEqual(['Must be a colour like #1d4ed8']);

    const deals = await Promise.all([1, 2].map((n) => createDeal(t.db, { title: `In A ${n}`, pipelineId: pipeline.id, stageId: a!.id })));
    const refused = await post(`/service/settings/stages/${a!.id}/delete`, { moveTo: '' });
    expect(refused.statusCode).toBe(409);
    expect(errorsNextTo(refused.body, 'moveTo')[0]).toMatch(/deal/);
    const moved = await post(`/service/settings/stages/${a!.id}/delete`, { moveTo: String(b!.id) });
    expect(moved.statusCode).toBe(303);
    api = (await t.call({ method: 'GET', url: `/service/pipelines/${pipeline.id}` })).json().pipeline;
    expect(api.stages.map((s: { name: string }) => s.name)).toEqual(['Demo', 'Negotiation', 'Won', 'Lost']);
    for (const deal of deals) {
      const json = (await t.call({ method: 'GET', url: `/service/${deal.id}/view` })).json().deal;
      expect(json.stage.name).toBe('Negotiation');
    }
  });

  it('saves a new stage order sent by the drag script, and refuses an incomplete one in words', async () => {
    const pipeline = await createPipeline(t.db, { name: 'Reorder me' });
    const ids = pipeline.stages.map((s) => s.id);
    const reversed = [...ids].reverse();
    const ok = await t.app.inject({
      method: 'POST',
      url: `/service/settings/pipelines/${pipeline.id}/stages/reorder`,
      headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf, 'hx-request': 'true', 'content-type': 'application/x-www-form-urlencoded' },
      payload: reversed.map((id) => `order%5B%5D=${id}`).join('&'),
    });
    expect(ok.statusCode).toBe(200);
    const api = (await t.call({ method: 'GET', url: `/service/pipelines/${pipeline.id}` })).json().pipeline;
    expect(api.stages.map((s: { id: number }) => s.id)).toEqual(reversed);
    const partial = await t.app.inject({
      method: 'POST',
      url: `/service/settings/pipelines/${pipeline.id}/stages/reorder`,
      headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf, 'hx-request': 'true', 'content-type': 'application/x-www-form-urlencoded' },
      payload: `order%5B%5D=${ids[0]}`,
    });
    expect(partial.statusCode).toBe(422);
    expect(partial.headers['content-type']).toMatch(/text\/plain/);
  });

  it('limits who sees a pipeline to the roles checked, and gives it back to everyone with none checked', async () => {
    const pipeline = await createPipeline(t.db, { name: 'Enterprise only' });
    const other = await createUser(t.db, ['service:deals:viewown', 'service:pipelines:view']);
    const otherSession = await login(other);
    const page = await get(`/service/settings/pipelines/${pipeline.id}`);
    expect(page.body).toContain('Everyone who may see deals sees this pipeline');
    // Every non-admin role is offered, unchecked; the hidden empty entry comes first.
    expect(page.body).toContain(`name="pipeline[roles][]" value="${seller.roleId}">`);
    expect(page.body).toContain(`name="pipeline[roles][]" value="${other.roleId}">`);

    const limited = await post(`/service/settings/pipelines/${pipeline.id}/roles`, [['pipeline[roles][]', ''], ['pipeline[roles][]', String(seller.roleId)]]);
    expect(limited.statusCode).toBe(303);
    expect(limited.headers.location).toBe(`/service/settings/pipelines/${pipeline.id}?done=roles#visibility`);
    expect((await t.call({ method: 'GET', url: `/service/pipelines/${pipeline.id}` })).json().pipeline.roles).toEqual([seller.roleId]);
    const shown = await get(`/service/settings/pipelines/${pipeline.id}?done=roles`);
    expect(shown.body).toContain('Saved who sees this pipeline.');
    expect(shown.body).toContain(`name="pipeline[roles][]" value="${seller.roleId}" checked>`);
    expect(shown.body).toContain(`name="pipeline[roles][]" value="${other.roleId}">`);
    // The seller's role sees it on the board; the other role does not.
    expect((await get(`/service/board?pipeline=${pipeline.id}`, sellerSession)).body).toContain('Enterprise only');
    expect((await get(`/service/board?pipeline=${pipeline.id}`, otherSession)).body).not.toContain('Enterprise only');

    // Nothing checked: only the hidden empty entry arrives, which is the empty list, and every role sees it again.
    const everyone = await post(`/service/settings/pipelines/${pipeline.id}/roles`, [['pipeline[roles][]', '']]);
    expect(everyone.statusCode).toBe(303);
    expect((await t.call({ method: 'GET', url: `/service/pipelines/${pipeline.id}` })).json().pipeline.roles).toEqual([]);
    expect((await get(`/service/board?pipeline=${pipeline.id}`, otherSession)).body).toContain('Enterprise only');

    // A seller cannot change it.
    expect((await post(`/service/settings/pipelines/${pipeline.id}/roles`, [['pipeline[roles][]', String(seller.roleId)]], sellerSession)).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `/service/pipelines/${pipeline.id}` })).json().pipeline.roles).toEqual([]);
  });

  it('shows pipeline and stage names with script as text', async () => {
    const name = `<script>alert('pipe')</script>`;
    const created = await post('/service/settings/pipelines/new', [
      ['pipeline[name]', name],
      ['stages[0][name]', `<img src=x onerror=alert('stage')>`],
      ['stages[0][type]', 'open'],
    ]);
    expect(created.statusCode).toBe(303);
    for (const url of ['/service/settings/pipelines', created.headers.location as string]) {
      const page = await get(url);
      expect(page.body).not.toContain('<script>alert');
      expect(page.body).not.toContain('<img src=x');
      expect(page.body).toContain('&lt;script&gt;alert(&#39;pipe&#39;)&lt;/script&gt;');
    }
  });
});

describe('users, roles and API credentials', () => {
  it('creates a user, with errors next to the fields and the password never shown back', async () => {
    const bad = await post('/service/settings/users/new', { name: 'Dana <b>Scully</b>', username: 'dana scully', email: 'not-an-email', password: 'short', role: '' });
    expect(bad.statusCode).toBe(422);
    expect(errorsNextTo(bad.body, 'username')).toEqual(['Must not contain colons or spaces']);
    expect(errorsNextTo(bad.body, 'password')).toEqual(['Must be at least 12 characters']);
    expect(errorsNextTo(bad.body, 'email')).toEqual(['Must be an email address']);
    expect(errorsNextTo(bad.body, 'role').length).toBe(1);
    expect(valueOf(bad.body, 'name')).toBe('Dana &lt;b&gt;Scully&lt;/b&gt;');
    expect(bad.body).not.toContain('value="short"');

    const created = await post('/service/settings/users/new', { name: 'Dana <b>Scully</b>', username: 'dana', email: 'dana@example.test', password: 'trust-no-one-1993', role: String(seller.roleId) });
    expect(created.statusCode).toBe(303);
    const list = await get('/service/settings/users');
    expect(list.body).toContain('Dana &lt;b&gt;Scully&lt;/b&gt;');
    expect(list.body).not.toContain('<b>Scully');
    const found = await get('/service/settings/users?search=scully');
    expect(found.body).toContain('dana@example.test');
    expect(found.body).not.toContain(`>${ADMIN.username}<`);
    expect(found.body).toContain('1 user<');
    // Basic works with the password the admin chose, and the new user is asked to choose their own.
    expect((await t.call({ method: 'GET', url: '/service/pipelines' }, { username: 'dana', password: 'trust-no-one-1993' })).statusCode).toBe(200);
    const dana = await login({ username: 'dana', password: 'trust-no-one-1993' });
    expect((await get('/service/board', dana)).body).toContain('You are still using the password you were given.');
  });

  it('assigns a role, resets a password and deactivates a user, whose session ends at once', async () => {
    const user = await createUser(t.db, ['service:deals:viewown', 'service:pipelines:view']);
    const managers = await t.call({ method: 'POST', url: '/host/roles/new', payload: { name: 'Managers', permissions: ['service:deals:viewother', 'service:pipelines:view'] } });
    const roleId = managers.json().role.id as number;
    const page = await get(`/service/settings/users/${user.id}`);
    expect(page.body).toContain(`<option value="${roleId}">Managers</option>`);
    const assigned = await post(`/service/settings/users/${user.id}/edit`, { name: user.name, username: user.username, email: '', role: String(roleId) });
    expect(assigned.statusCode).toBe(303);
    expect((await t.call({ method: 'GET', url: `/host/users/${user.id}` })).json().user.role).toEqual({ id: roleId, name: 'Managers' });

    const short = await post(`/service/settings/users/${user.id}/password`, { password: 'tiny' });
    expect(short.statusCode).toBe(422);
    expect(errorsNextTo(short.body, 'password')).toEqual(['Must be at least 12 characters']);
    expect((await post(`/service/settings/users/${user.id}/password`, { password: 'a-brand-new-password' })).statusCode).toBe(303);
    expect((await t.call({ method: 'GET', url: '/service/pipelines' }, { username: user.username, password: user.password })).statusCode).toBe(401);
    const theirs = await login({ username: user.username, password: 'a-brand-new-password' });
    expect((await get('/service/board', theirs)).statusCode).toBe(200);

    const deactivated = await post(`/service/settings/users/${user.id}/deactivate`, {});
    expect(deactivated.statusCode).toBe(303);
    const after = await get('/service/board', theirs);
    expect(after.statusCode).toBe(303);
    expect(after.headers.location).toMatch(/^\/service\/login/);
    expect((await t.call({ method: 'GET', url: '/service/pipelines' }, { username: user.username, password: 'a-brand-new-password' })).statusCode).toBe(401);
    expect((await get(`/service/settings/users/${user.id}`)).body).toContain('Deactivated');
    expect((await post(`/service/settings/users/${user.id}/activate`, {})).statusCode).toBe(303);
    expect((await t.call({ method: 'GET', url: `/host/users/${user.id}` })).json().user.isActive).toBe(true);
  });

  it('refuses to deactivate the last administrator, in words', async () => {
    const me = (await t.call({ method: 'GET', url: '/host/users?search=admin' })).json().users.find((u: { username: string }) => u.username === ADMIN.username);
    const refused = await post(`/service/settings/users/${me.id}/deactivate`, {});
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('This would leave no active administrator');
  });

  it('saves a role’s permission checkboxes, ticked and unticked', async () => {
    const created = await post('/service/settings/roles/new', [
      ['name', 'Sales leads'],
      ['isAdmin', 'false'],
      ['permissions[]', ''],
      ['permissions[]', 'service:deals:viewown'],
      ['permissions[]', 'service:deals:viewother'],
      ['permissions[]', 'service:pipelines:view'],
    ]);
    expect(created.statusCode).toBe(303);
    const id = Number(/roles\/(\d+)/.exec(created.headers.location as string)![1]);
    let role = (await t.call({ method: 'GET', url: `/host/roles/${id}` })).json().role;
    expect([role.isAdmin, [...role.permissions].sort()]).toEqual([false, ['service:deals:viewother', 'service:deals:viewown', 'service:pipelines:view']]);
    const page = await get(`/service/settings/roles/${id}`);
    expect(page.body).toContain('value="service:deals:viewother" checked');
    expect(page.body).toMatch(/value="service:deals:create">/);

    const edited = await post(`/service/settings/roles/${id}/edit`, [
      ['name', 'Sales leads'],
      ['isAdmin', 'false'],
      ['permissions[]', ''],
      ['permissions[]', 'service:deals:viewown'],
    ]);
    expect(edited.statusCode).toBe(303);
    role = (await t.call({ method: 'GET', url: `/host/roles/${id}` })).json().role;
    expect(role.permissions).toEqual(['service:deals:viewown']);
    const none = await post(`/service/settings/roles/${id}/edit`, [
      ['name', 'Sales leads'],
      ['isAdmin', 'false'],
      ['permissions[]', ''],
    ]);
    expect(none.statusCode).toBe(303);
    expect((await t.call({ method: 'GET', url: `/host/roles/${id}` })).json().role.permissions).toEqual([]);

    const forged = await post(`/service/settings/roles/${id}/edit`, [['name', 'Sales leads'], ['permissions[]', 'service:everything']]);
    expect(forged.statusCode).toBe(422);
    expect(forged.body).toContain('Unknown permission');
  });

  it('refuses to delete a role users hold, and deletes an unused one', async () => {
    const held = await post(`/service/settings/roles/${seller.roleId}/delete`, {});
    expect(held.statusCode).toBe(409);
    expect(held.body).toMatch(/The role is held by \d+ user\(s\); give them another role first/);
    const unused = (await t.call({ method: 'POST', url: '/host/roles/new', payload: { name: 'Unused' } })).json().role.id;
    expect((await post(`/service/settings/roles/${unused}/delete`, {})).statusCode).toBe(303);
    expect((await t.call({ method: 'GET', url: `/host/roles/${unused}` })).statusCode).toBe(404);
  });

  it('shows an API credential’s secret once, and that secret gets a token', async () => {
    const missing = await post('/service/settings/api-credentials/new', { name: '', user: '' });
    expect(missing.statusCode).toBe(422);
    expect(errorsNextTo(missing.body, 'name')).toEqual(['Required']);
    const created = await post('/service/settings/api-credentials/new', { name: 'Reporting <script>', user: String(seller.id) });
    expect(created.statusCode).toBe(200);
    expect(created.headers['cache-control']).toBe('no-store');
    const clientId = /<code id="client-id">([^<]+)<\/code>/.exec(created.body)![1]!;
    const secret = /<code id="client-secret">([^<]+)<\/code>/.exec(created.body)![1]!;
    expect(created.body).toContain('shown only this once');
    expect(created.body).toContain('Reporting &lt;script&gt;');
    const token = await t.app.inject({ method: 'POST', url: '/oauth/v2/token', payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret } });
    expect(token.statusCode).toBe(200);
    const list = await get('/service/settings/api-credentials');
    expect(list.body).toContain(clientId);
    expect(list.body).not.toContain(secret);
    const row = await t.db.selectFrom('api_credentials').select('id').where('client_id', '=', clientId).executeTakeFirstOrThrow();
    expect((await post(`/service/settings/api-credentials/${row.id}/delete`, {})).statusCode).toBe(303);
    const again = await t.app.inject({ method: 'POST', url: '/oauth/v2/token', payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret } });
    expect(again.statusCode).toBe(401);
  });
});

describe('your account', () => {
  it('marks the first-run admin to change their password', async () => {
    const row = await t.db.selectFrom('users').select('must_change_password').where('username', '=', ADMIN.username).executeTakeFirstOrThrow();
    expect(row.must_change_password).toBe(true);
    expect((await get('/service/board')).body).toContain('You are still using the password you were given.');
  });

  it('changes your own password; a wrong current password is refused next to the field', async () => {
    const user = await createUser(t.db, ['service:deals:viewown', 'service:pipelines:view']);
    await t.db.updateTable('users').set({ must_change_password: true }).where('id', '=', user.id).execute();
    const session = await login(user);
    expect((await get('/service/board', session)).body).toContain('Choose your own password');
    const wrong = await post('/service/account/password', { current_password: 'not-my-password', password: 'my-own-secret-phrase' }, session);
    expect(wrong.statusCode).toBe(422);
    expect(errorsNextTo(wrong.body, 'current_password')).toEqual(['That is not your current password']);
    expect(wrong.body).not.toContain('my-own-secret-phrase');
    const short = await post('/service/account/password', { current_password: user.password, password: 'short' }, session);
    expect(errorsNextTo(short.body, 'password')).toEqual(['Must be at least 12 characters']);
    const changed = await post('/service/account/password', { current_password: user.password, password: 'my-own-secret-phrase' }, session);
    expect(changed.statusCode).toBe(303);
    const board = await get('/service/board', session);
    expect(board.body).not.toContain('Choose your own password');
    expect((await t.call({ method: 'GET', url: '/service/pipelines' }, { username: user.username, password: user.password })).statusCode).toBe(401);
    expect((await t.call({ method: 'GET', url: '/service/pipelines' }, { username: user.username, password: 'my-own-secret-phrase' })).statusCode).toBe(200);
  });

  it('counts wrong current passwords as failed logins of that user, and stops them after ten', async () => {
    const user = await createUser(t.db, ['service:deals:viewown']);
    const session = await login(user);
    for (let i = 0; i < 10; i++) {
      const wrong = await post('/service/account/password', { current_password: `guess-${i}`, password: 'my-own-secret-phrase' }, session);
      expect(wrong.statusCode).toBe(422);
    }
    const stopped = await post('/service/account/password', { current_password: user.password, password: 'my-own-secret-phrase' }, session);
    expect(stopped.statusCode).toBe(429);
    expect(stopped.body).toContain('role="alert"');
    expect((await t.call({ method: 'GET', url: '/service/deals' }, user)).statusCode).toBe(429);
  });

  it('offers the same through the API: POST /host/account/password', async () => {
    const user = await createUser(t.db, []);
    const wrong = await t.call({ method: 'POST', url: '/host/account/password', payload: { current_password: 'nope', password: 'another-long-password' } }, user);
    expect(wrong.statusCode).toBe(422);
    expect(wrong.json().errors[0].details).toEqual({ current_password: ['That is not your current password'] });
    const ok = await t.call({ method: 'POST', url: '/host/account/password', payload: { current_password: user.password, password: 'another-long-password' } }, user);
    expect(ok.statusCode).toBe(200);
  });
});

describe('where a remote host owns its users', () => {
  let other: Awaited<ReturnType<typeof buildApp>>;
  let cookie = '';
  beforeAll(async () => {
    const { database, drop } = await createTestDatabase();
    await bootstrap(database.db, ADMIN);
    const config = testConfig();
    // The built-in host's logins, but users and roles said to be managed elsewhere (as with Mautic).
    const host = { ...createBuiltinHost({ db: database.db, config }), managesUsers: false, routes: undefined, pages: undefined };
    other = await buildApp({ config, db: database.db, logger: pino({ level: 'silent' }), host });
    await other.ready();
    afterAll(async () => {
      await other.close();
      await drop();
    });
    const response = await other.inject({ method: 'POST', url: '/service/login', payload: ADMIN });
    cookie = `${SESSION_COOKIE}=${response.cookies.find((c) => c.name === SESSION_COOKIE)!.value}`;
  });

  it('hides users, roles, API credentials and the account page, and answers 404 there', async () => {
    const index = await other.inject({ method: 'GET', url: '/service/settings', headers: { cookie, accept: 'text/html' } });
    expect(index.statusCode).toBe(200);
    expect(index.body).toContain('href="/service/settings/pipelines"');
    expect(index.body).not.toContain('/service/settings/users');
    expect(index.body).not.toContain('Choose your own password');
    for (const url of ['/service/settings/users', '/service/settings/roles', '/service/settings/api-credentials']) {
      expect((await other.inject({ method: 'GET', url, headers: { cookie, accept: 'text/html' } })).statusCode, url).toBe(404);
    }
    // No account page either (the path falls to the API's /service/{id} routes, which have no GET).
    expect([404, 405]).toContain((await other.inject({ method: 'GET', url: '/service/account', headers: { cookie, accept: 'text/html' } })).statusCode);
    expect((await other.inject({ method: 'GET', url: '/service/settings', headers: { authorization: basic(ADMIN) } })).statusCode).toBe(200);
  });
});
