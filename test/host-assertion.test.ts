import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, basic, setupApp, type TestContext } from './helpers/app.js';
import { createRole } from './helpers/factories.js';

const KEY = 'a-host-assertion-key-of-32-chars-or-more';
let t: TestContext;
let plain: TestContext;
beforeAll(async () => {
  t = await setupApp({ config: { HOST_ASSERTION_KEY: KEY } });
  plain = await setupApp();
  await createRole(t.db, ['service:deals:viewown', 'service:deals:create', 'service:pipelines:view'], { name: 'Seller' });
});

const now = () => Math.floor(Date.now() / 1000);

function assertion(claims: Record<string, unknown> = {}, options: { key?: string; iat?: number; exp?: number } = {}) {
  const iat = options.iat ?? now();
  return new SignJWT({ name: 'Hank Host', email: 'hank@host.example', role: 'Seller', ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(String(claims.sub ?? 9001))
    .setIssuedAt(iat)
    .setExpirationTime(options.exp ?? iat + 60)
    .setJti(randomUUID())
    .sign(new TextEncoder().encode(options.key ?? KEY));
}

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

const asHost = (ctx: TestContext, token: string, request: { method?: 'GET' | 'POST'; url?: string; payload?: object } = {}) =>
  ctx.app.inject({ method: request.method ?? 'GET', url: request.url ?? '/service/pipelines', payload: request.payload, headers: { 'x-host-assertion': token } });

function expect401(res: { statusCode: number; json(): any }, message: RegExp) {
  expect(res.statusCode).toBe(401);
  const [error] = res.json().errors;
  expect(error).toMatchObject({ code: 401, type: 'unauthorized' });
  expect(error.message).toMatch(message);
}

describe('a valid host assertion', () => {
  it('acts as the named user with the named role, and creates the user in the local copy', async () => {
    const res = await asHost(t, await assertion({ sub: 9001 }), { method: 'POST', url: '/service/deals/new', payload: { deal: { title: 'Routed by the host' } } });
    expect(res.statusCode).toBe(200);
    expect(res.json().deal.createdBy).toEqual({ id: 9001, name: 'Hank Host' });
    const user = await t.db.selectFrom('users').selectAll().where('id', '=', 9001).executeTakeFirstOrThrow();
    expect(user).toMatchObject({ name: 'Hank Host', email: 'hank@host.example', password_hash: null });
    expect(user.synced_at).not.toBeNull();
  });

  it('refreshes the copy from a later assertion and grants explicit permissions only', async () => {
    const token = await assertion({ sub: 9002, name: 'Pia Perm', role: undefined, permissions: ['service:pipelines:view', 'not:a:permission'] });
    expect((await asHost(t, token)).statusCode).toBe(200);
    const forbidden = await asHost(t, await assertion({ sub: 9002, name: 'Pia Renamed', role: undefined, permissions: ['service:pipelines:view'] }), {
      method: 'POST',
      url: '/service/deals/new',
      payload: { deal: { title: 'Not allowed' } },
    });
    expect(forbidden.statusCode).toBe(403);
    const user = await t.db.selectFrom('users').select('name').where('id', '=', 9002).executeTakeFirstOrThrow();
    expect(user.name).toBe('Pia Renamed');
  });

  it('leaves a user the built-in host owns as it is', async () => {
    const res = await asHost(t, await assertion({ sub: 1, name: 'Impostor', role: 'Administrator' }));
    expect(res.statusCode).toBe(200);
    const admin = await t.db.selectFrom('users').select(['name', 'username']).where('id', '=', 1).executeTakeFirstOrThrow();
    expect(admin).toEqual({ name: 'Administrator', username: ADMIN.username });
    // Basic still works for the admin whose row the assertion named.
    expect((await t.app.inject({ method: 'GET', url: '/service/pipelines', headers: { authorization: basic(ADMIN) } })).statusCode).toBe(200);
  });
});

describe('attacks on the assertion answer 401 with the error body', () => {
  it('refuses a replayed assertion (same jti)', async () => {
    const token = await assertion();
    expect((await asHost(t, token)).statusCode).toBe(200);
    expect401(await asHost(t, token), /already used/);
  });

  it('refuses an expired one, a future-dated one and one that lives over 60 s', async () => {
    expect401(await asHost(t, await assertion({}, { iat: now() - 120, exp: now() - 60 })), /expired/);
    expect401(await asHost(t, await assertion({}, { iat: now() + 120, exp: now() + 150 })), /iat/);
    expect401(await asHost(t, await assertion({}, { iat: now(), exp: now() + 3600 })), /at most 60 s/);
  });

  it('refuses a wrong key, alg none, a tampered payload and garbage', async () => {
    expect401(await asHost(t, await assertion({}, { key: 'another-key-of-at-least-32-characters!' })), /signature/);
    const claims = { sub: '9001', name: 'Eve', role: 'Administrator', iat: now(), exp: now() + 30, jti: randomUUID() };
    expect401(await asHost(t, `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`), /signature or format/);
    const [header, , signature] = (await assertion()).split('.');
    expect401(await asHost(t, `${header}.${b64(claims)}.${signature}`), /signature/);
    expect401(await asHost(t, 'not-a-jwt'), /format/);
  });

  it('refuses an unknown role, a missing role and a non-numeric sub, and creates no user', async () => {
    expect401(await asHost(t, await assertion({ sub: 9100, role: 'Emperor' })), /unknown role/);
    expect401(await asHost(t, await assertion({ sub: 9101, role: undefined })), /role or permissions/);
    expect401(await asHost(t, await new SignJWT({ name: 'X', role: 'Seller' }).setProtectedHeader({ alg: 'HS256' }).setSubject('admin').setIssuedAt().setExpirationTime('30s').setJti(randomUUID()).sign(new TextEncoder().encode(KEY))), /sub/);
    const users = await t.db.selectFrom('users').select('id').where('id', 'in', [9100, 9101]).execute();
    expect(users).toEqual([]);
  });
});

describe('without HOST_ASSERTION_KEY', () => {
  it('ignores the header entirely', async () => {
    const token = await assertion();
    const res = await asHost(plain, token);
    expect(res.statusCode).toBe(401);
    expect(res.json().errors[0].message).not.toMatch(/assertion/i);
    const withBasic = await plain.app.inject({ method: 'GET', url: '/service/pipelines', headers: { 'x-host-assertion': token, authorization: basic(ADMIN) } });
    expect(withBasic.statusCode).toBe(200);
  });
});
