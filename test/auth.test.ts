import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../src/host/builtin/auth.js';
import { ADMIN, basic, setupApp, type TestContext } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';

let t: TestContext;
let viewer: TestUser;
let nobody: TestUser;
beforeAll(async () => {
  t = await setupApp();
  viewer = await createUser(t.db, ['service:pipelines:view']);
  nobody = await createUser(t.db, []);
});

/** Each test that may trip the failed-login limiter comes from an address of its own. */
const address = () => `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

async function credentialFor(user: TestUser) {
  const res = await t.call({ method: 'POST', url: '/host/api-credentials/new', payload: { name: 'test', user: user.id } });
  return res.json().credential as { id: number; client_id: string; client_secret: string };
}

async function tokenFor(user: TestUser): Promise<string> {
  const credential = await credentialFor(user);
  const res = await t.app.inject({
    method: 'POST',
    url: '/oauth/v2/token',
    payload: { grant_type: 'client_credentials', client_id: credential.client_id, client_secret: credential.client_secret },
  });
  return res.json().access_token;
}

const get = (headers: Record<string, string>, remoteAddress?: string) =>
  t.app.inject({ method: 'GET', url: '/service/pipelines', headers, remoteAddress });

describe('401 and 403', () => {
  it('answers 401 with a Basic challenge without credentials, or with wrong ones', async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: basic({ ...ADMIN, password: 'wrong-password' }) },
      { authorization: basic({ username: 'ghost', password: 'whatever-it-is' }) },
      { authorization: 'Basic !!!' },
      { authorization: 'Digest abc' },
    ];
    for (const headers of attempts) {
      const res = await get(headers, address());
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Basic realm="service"');
      expect(res.json().errors[0]).toMatchObject({ code: 401, type: 'unauthorized' });
    }
  });

  it('answers 403 to an authenticated caller without the permission, 200 with it', async () => {
    const forbidden = await t.call({ method: 'GET', url: '/service/pipelines' }, nobody);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().errors[0]).toMatchObject({ code: 403, type: 'forbidden' });
    expect((await t.call({ method: 'GET', url: '/service/pipelines' }, viewer)).statusCode).toBe(200);
  });

  it('refuses a deactivated user', async () => {
    const user = await createUser(t.db, ['service:pipelines:view']);
    await t.db.updateTable('users').set({ is_active: false }).where('id', '=', user.id).execute();
    expect((await t.call({ method: 'GET', url: '/service/pipelines' }, user)).statusCode).toBe(401);
  });
});

describe('Bearer tokens', () => {
  it('issues a token for client credentials in a form, JSON or HTTP Basic client auth', async () => {
    const credential = await credentialFor(viewer);
    const asForm = await t.app.inject({
      method: 'POST',
      url: '/oauth/v2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=client_credentials&client_id=${credential.client_id}&client_secret=${encodeURIComponent(credential.client_secret)}`,
    });
    expect(asForm.statusCode).toBe(200);
    expect(asForm.json()).toMatchObject({ token_type: 'bearer', expires_in: 3600 });
    const asBasic = await t.app.inject({
      method: 'POST',
      url: '/oauth/v2/token',
      headers: { authorization: basic({ username: credential.client_id, password: credential.client_secret }) },
      payload: { grant_type: 'client_credentials' },
    });
    expect(asBasic.statusCode).toBe(200);
    for (const token of [asForm.json().access_token, asBasic.json().access_token]) {
      expect((await get({ authorization: `Bearer ${token}` })).statusCode).toBe(200);
      const stored = await t.db.selectFrom('oauth_tokens').select('user_id').where('token_hash', '=', sha256(token)).executeTakeFirst();
      expect(stored?.user_id).toBe(viewer.id);
    }
  });

  it('refuses a wrong secret (401) and a wrong grant type (422)', async () => {
    const credential = await credentialFor(viewer);
    const wrong = await t.app.inject({
      method: 'POST',
      url: '/oauth/v2/token',
      remoteAddress: address(),
      payload: { grant_type: 'client_credentials', client_id: credential.client_id, client_secret: 'not-the-secret' },
    });
    expect(wrong.statusCode).toBe(401);
    const grant = await t.app.inject({ method: 'POST', url: '/oauth/v2/token', payload: { grant_type: 'password', client_id: 'x', client_secret: 'y' } });
    expect(grant.statusCode).toBe(422);
    expect(Object.keys(grant.json().errors[0].details)).toEqual(['grant_type']);
  });

  it('gives a token its user permissions: 403 without, 401 for an unknown token', async () => {
    const token = await tokenFor(nobody);
    expect((await get({ authorization: `Bearer ${token}` })).statusCode).toBe(403);
    expect((await get({ authorization: 'Bearer not-a-token' }, address())).statusCode).toBe(401);
  });

  it('refuses an expired token', async () => {
    const token = await tokenFor(viewer);
    await t.db.updateTable('oauth_tokens').set({ expires_at: new Date(Date.now() - 1000) }).where('token_hash', '=', sha256(token)).execute();
    const res = await get({ authorization: `Bearer ${token}` }, address());
    expect(res.statusCode).toBe(401);
  });

  it('does not let the credential cache outlive a token', async () => {
    const token = await tokenFor(viewer);
    // A token with less than the cache's lifetime left is used once, then expires.
    await t.db.updateTable('oauth_tokens').set({ expires_at: new Date(Date.now() + 20_000) }).where('token_hash', '=', sha256(token)).execute();
    expect((await get({ authorization: `Bearer ${token}` })).statusCode).toBe(200);
    await t.db.updateTable('oauth_tokens').set({ expires_at: new Date(Date.now() - 1000) }).where('token_hash', '=', sha256(token)).execute();
    expect((await get({ authorization: `Bearer ${token}` }, address())).statusCode).toBe(401);
  });
});

describe('failed-login limiter', () => {
  it('answers 429 with Retry-After after 10 failed logins of one user from one address, even to right credentials', async () => {
    const from = address();
    for (let i = 0; i < 10; i += 1) {
      expect((await get({ authorization: basic({ ...ADMIN, password: `wrong-${i}` }) }, from)).statusCode).toBe(401);
    }
    const limited = await get({ authorization: basic(ADMIN) }, from);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().errors[0].type).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another address is not affected, nor another user at the same address (an office behind one NAT).
    expect((await get({ authorization: basic(ADMIN) }, address())).statusCode).toBe(200);
    expect((await get({ authorization: basic(viewer) }, from)).statusCode).toBe(200);
  });

  it('starts the count again after a success', async () => {
    const user = await createUser(t.db, ['service:pipelines:view']);
    const from = address();
    for (let round = 0; round < 2; round += 1) {
      for (let i = 0; i < 9; i += 1) expect((await get({ authorization: basic({ ...user, password: `wrong-${i}` }) }, from)).statusCode).toBe(401);
      expect((await get({ authorization: basic(user) }, from)).statusCode).toBe(200);
    }
  });

  it('answers ever more slowly to a user guessed at from many addresses', async () => {
    const user = await createUser(t.db, ['service:pipelines:view']);
    for (let i = 0; i < 10; i += 1) expect((await get({ authorization: basic({ ...user, password: `wrong-${i}` }) }, address())).statusCode).toBe(401);
    const started = Date.now();
    expect((await get({ authorization: basic({ ...user, password: 'wrong-11' }) }, address())).statusCode).toBe(401);
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
    // The right password is not slowed down, and not locked out.
    expect((await get({ authorization: basic(user) }, address())).statusCode).toBe(200);
  });

  it('locks an address that fails for many users, and counts bad tokens and client credentials per client', async () => {
    const from = address();
    for (let i = 0; i < 10; i += 1) expect((await get({ authorization: `Bearer bogus-${i}` }, from)).statusCode).toBe(401);
    expect((await get({ authorization: 'Bearer bogus-again' }, from)).statusCode).toBe(429);
    expect((await get({ authorization: basic(ADMIN) }, from)).statusCode).toBe(200); // Basic users at that address still get in

    const token = (clientId: string, secret: string) =>
      t.app.inject({ method: 'POST', url: '/oauth/v2/token', remoteAddress: from, payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret } });
    for (let i = 0; i < 10; i += 1) expect((await token('nope', `guess-${i}`)).statusCode).toBe(401);
    expect((await token('nope', 'again')).statusCode).toBe(429);

    const spray = address();
    for (let i = 0; i < 50; i += 1) {
      expect((await get({ authorization: basic({ username: `someone-${i}`, password: 'guess' }) }, spray)).statusCode).toBe(401);
    }
    expect((await get({ authorization: basic(ADMIN) }, spray)).statusCode).toBe(429);
  });

  it('does not count requests that carry no credentials', async () => {
    const from = address();
    for (let i = 0; i < 12; i += 1) expect((await get({}, from)).statusCode).toBe(401);
    expect((await get({ authorization: basic(ADMIN) }, from)).statusCode).toBe(200);
  });
});

describe('origin guard on writes', () => {
  const write = (headers: Record<string, string>) =>
    t.call({ method: 'POST', url: '/host/contacts/new', payload: { email: `o-${randomBytes(4).toString('hex')}@example.test` }, headers });

  it('refuses a write from a foreign Origin or marked cross-site', async () => {
    const foreign: Record<string, string>[] = [{ origin: 'https://evil.test' }, { 'sec-fetch-site': 'cross-site' }, { origin: 'http://service.test.evil.test' }];
    for (const headers of foreign) {
      const res = await write(headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(403);
      expect(res.json().errors[0].type).toBe('forbidden');
    }
  });

  it('lets through same-origin writes, clients that send neither header, and cross-site reads', async () => {
    expect((await write({})).statusCode).toBe(200);
    expect((await write({ origin: 'http://service.test' })).statusCode).toBe(200);
    expect((await write({ origin: 'http://localhost:80', host: 'localhost:80' })).statusCode).toBe(200);
    expect((await write({ 'sec-fetch-site': 'same-origin' })).statusCode).toBe(200);
    const read = await t.call({ method: 'GET', url: '/service/pipelines', headers: { origin: 'https://evil.test', 'sec-fetch-site': 'cross-site' } });
    expect(read.statusCode).toBe(200);
  });
});

describe('token endpoint input', () => {
  it('treats a malformed escape in Basic client credentials as a failed authentication, not a fault', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth/v2/token',
      remoteAddress: address(),
      headers: { authorization: basic({ username: '%zz', password: '%E0%A4%A' }) },
      payload: { grant_type: 'client_credentials' },
    });
    expect(res.statusCode).toBe(401);
  });
});
