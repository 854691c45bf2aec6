import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csrfTokenFor, SESSION_COOKIE } from '../src/http/session.js';
import { ADMIN } from './helpers/app.js';
import { startBrowserApp, type BrowserTest } from './helpers/browser.js';
import { createUser, defaultPipeline, type TestPipeline } from './helpers/factories.js';

/** Sessions, CSRF, redirects and the API's unchanged answers, through the real app. */

let t: BrowserTest;
let pipeline: TestPipeline;
let attacker: Server;
let attackerOrigin: string;

beforeAll(async () => {
  t = await startBrowserApp();
  pipeline = await defaultPipeline(t.db);
  // Another site (localhost is not 127.0.0.1) with a form that posts to the service.
  attacker = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<form method="post" action="${t.origin}/service/ui/board/deals">
      <input name="deal[title]" value="Planted by another site"><input name="deal[stage]" value="${pipeline.stages[0]!.id}">
      <input name="deal[pipeline]" value="${pipeline.id}"><button id="go">go</button></form>`);
  });
  await new Promise<void>((done) => attacker.listen(0, '127.0.0.1', done));
  attackerOrigin = `http://localhost:${(attacker.address() as AddressInfo).port}`;
});
afterAll(() => {
  attacker.closeAllConnections();
  return new Promise<void>((done) => attacker.close(() => done()));
});

async function login(user = ADMIN) {
  const response = await t.app.inject({ method: 'POST', url: '/service/login', payload: { username: user.username, password: user.password, next: '/service/deals' } });
  const cookie = response.cookies.find((c) => c.name === SESSION_COOKIE)!;
  return { response, cookie, header: `${SESSION_COOKIE}=${cookie.value}`, csrf: csrfTokenFor(cookie.value) };
}

const planted = () => t.db.selectFrom('deals').select('id').where('title', '=', 'Planted by another site').execute();

describe('sessions', () => {
  it('sets an HttpOnly SameSite=Lax cookie and stores only a hash of it', async () => {
    const { response, cookie } = await login();
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/service/deals');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    const rows = await t.db.selectFrom('page_sessions').select('token_hash').execute();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.map((r) => r.token_hash)).not.toContain(cookie.value);
  });

  it('ends at logout and when the user is deactivated', async () => {
    const board = (cookie: string) => t.app.inject({ method: 'GET', url: '/service/board', headers: { cookie } });
    const session = await login();
    expect((await board(session.header)).statusCode).toBe(200);
    const out = await t.app.inject({ method: 'POST', url: '/service/logout', headers: { cookie: session.header }, payload: { _csrf: session.csrf } });
    expect(out.statusCode).toBe(303);
    expect((await board(session.header)).headers.location).toBe('/service/login?next=%2Fservice%2Fboard');

    const user = await createUser(t.db, ['service:deals:viewown', 'service:pipelines:view']);
    const theirs = await login(user);
    expect((await board(theirs.header)).statusCode).toBe(200);
    await t.db.updateTable('users').set({ is_active: false }).where('id', '=', user.id).execute();
    expect((await board(theirs.header)).statusCode).toBe(303);
  });

  it('sends the user back only to a local path after login', async () => {
    for (const next of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)']) {
      const response = await t.app.inject({ method: 'POST', url: '/service/login', payload: { ...ADMIN, next } });
      expect(response.headers.location, next).toBe('/service/board');
    }
  });

  it('leaves the API to Basic and bearer: a cookie alone is a 401 there', async () => {
    const { header } = await login();
    const json = await t.app.inject({ method: 'GET', url: '/service/deals', headers: { cookie: header, accept: 'application/json' } });
    expect(json.statusCode).toBe(401);
    expect(json.json().errors[0].type).toBe('unauthorized');
    const anonymous = await t.app.inject({ method: 'GET', url: '/service/pipelines' });
    expect(anonymous.statusCode).toBe(401);
    const page = await t.app.inject({ method: 'GET', url: '/service/deals', headers: { cookie: header, accept: 'text/html' } });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain("style-src 'self'");
  });
});

describe('CSRF', () => {
  const add = (headers: Record<string, string>, csrf?: string) =>
    t.app.inject({
      method: 'POST',
      url: '/service/ui/board/deals',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        'deal[title]': 'Planted by another site',
        'deal[stage]': String(pipeline.stages[0]!.id),
        'deal[pipeline]': String(pipeline.id),
        ...(csrf ? { _csrf: csrf } : {}),
      }).toString(),
    });

  it('refuses a page post without the session’s token, or from another site', async () => {
    const { header, csrf } = await login();
    expect((await add({ cookie: header })).statusCode).toBe(403);
    expect((await add({ cookie: header }, 'wrong-token')).statusCode).toBe(403);
    expect((await add({ cookie: header, 'sec-fetch-site': 'cross-site' }, csrf)).statusCode).toBe(403);
    expect((await add({ cookie: header, origin: 'http://evil.example' }, csrf)).statusCode).toBe(403);
    expect(await planted()).toEqual([]);
    const ok = await add({ cookie: header, 'x-csrf-token': csrf });
    expect(ok.statusCode).toBe(200);
    expect(await planted()).toHaveLength(1);
    await t.db.deleteFrom('deals').where('title', '=', 'Planted by another site').execute();
  });

  it('a logged-in browser submitting another site’s form creates nothing', async () => {
    await t.login();
    const planting = await t.context.newPage();
    await planting.goto(attackerOrigin);
    const [response] = await Promise.all([planting.waitForEvent('response', (r) => r.url().startsWith(t.origin)), planting.click('#go')]);
    // SameSite=Lax keeps the cookie off the cross-site post, and the guard refuses it anyway: to the login page, nothing made.
    expect([303, 403]).toContain(response.status());
    await planting.close();
    expect(await planted()).toEqual([]);
  });

  it('counts failed page logins with the API’s limit', async () => {
    const user = await createUser(t.db, []);
    for (let i = 0; i < 10; i++) {
      const failed = await t.app.inject({ method: 'POST', url: '/service/login', payload: { username: user.username, password: `wrong-${i}` } });
      expect(failed.body).toContain('do not match');
    }
    const locked = await t.app.inject({ method: 'POST', url: '/service/login', payload: { username: user.username, password: user.password } });
    expect(locked.statusCode).toBe(429);
    const basic = await t.app.inject({ method: 'GET', url: '/service/pipelines', headers: { authorization: `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}` } });
    expect(basic.statusCode).toBe(429);
  });
});
