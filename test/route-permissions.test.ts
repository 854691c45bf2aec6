import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createBuiltinHost } from '../src/host/builtin/index.js';
import { PERMISSIONS } from '../src/host/permissions.js';
import type { RouteEntry } from '../src/http/guard.js';
import { setupApp, testConfig, type TestContext } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';

/**
 * Walks every route the app registers, including those added after this test
 * was written: the guard records each route with what it declared.
 */

let t: TestContext;
let nobody: TestUser;
beforeAll(async () => {
  t = await setupApp();
  nobody = await createUser(t.db, []);
});

/** A concrete URL for a route pattern; the guard answers before parameters are validated. */
const concrete = (url: string) => url.replace(/:[A-Za-z0-9_]+/g, '1').replace(/\*$/, 'x');
const label = (route: RouteEntry) => `${route.method} ${route.url}`;

describe('permission walk', () => {
  it('knows the routes of every area', () => {
    const urls = new Set(t.app.routeTable.map((route) => route.url));
    for (const url of ['/health', '/oauth/v2/token', '/service/pipelines', '/service/stages/:id', '/host/roles', '/host/users/:id', '/host/contacts/new', '/host/api-credentials/:id/edit']) {
      expect(urls, url).toContain(url);
    }
    expect(t.app.routeTable.length).toBeGreaterThan(30);
  });

  it('declares only known permission names', () => {
    for (const route of t.app.routeTable) {
      for (const permission of [route.permission ?? []].flat()) expect(PERMISSIONS, label(route)).toContain(permission);
    }
  });

  it('answers 401 without credentials on every non-public route', async () => {
    const guarded = t.app.routeTable.filter((route) => !route.public);
    expect(guarded.length).toBeGreaterThan(20);
    for (const route of guarded) {
      const res = await t.app.inject({ method: route.method as 'GET', url: concrete(route.url) });
      if (route.page === 'page') {
        // Sales pages send a browser without a session to the login page instead.
        expect(res.statusCode, label(route)).toBe(303);
        expect(res.headers.location, label(route)).toMatch(/^\/service\/login/);
        continue;
      }
      expect(res.statusCode, label(route)).toBe(401);
      expect(res.headers['www-authenticate'], label(route)).toBe('Basic realm="service"');
      expect(res.headers['x-request-id'], label(route)).toBeTruthy();
    }
  });

  it('answers 403 to a user without permissions, unless the route only needs authentication', async () => {
    for (const route of t.app.routeTable.filter((r) => !r.public)) {
      const res = await t.call({ method: route.method as 'GET', url: concrete(route.url) }, nobody);
      if (route.permission) expect(res.statusCode, label(route)).toBe(403);
      else expect([401, 403], label(route)).not.toContain(res.statusCode);
    }
  });

  it('never asks public routes for credentials', async () => {
    const open = t.app.routeTable.filter((route) => route.public);
    expect(open.map((route) => route.url)).toContain('/health');
    for (const route of open) {
      const res = await t.app.inject({ method: route.method as 'GET', url: concrete(route.url) });
      expect(res.statusCode, label(route)).not.toBe(401);
    }
  });
});

describe('start-up', () => {
  const app = () => buildApp({ config: testConfig(), db: t.db, logger: pino({ level: 'silent' }), host: createBuiltinHost({ db: t.db, config: testConfig() }) });

  it('fails for a route that declares neither a permission nor public', async () => {
    const server = await app();
    expect(() => server.get('/undeclared', async () => ({}))).toThrow(/must declare exactly one of/);
    await server.close();
  });

  it('fails for an undeclared route added by a plugin', async () => {
    const server = await app();
    void server.register(async (plugin) => {
      plugin.post('/service/plugin-route', { config: {} }, async () => ({}));
    });
    await expect(server.ready()).rejects.toThrow(/POST \/service\/plugin-route must declare/);
  });

  it('fails for a route that declares both a permission and public', async () => {
    const server = await app();
    expect(() => server.get('/both', { config: { public: true, permission: 'host:admin' } }, async () => ({}))).toThrow(/exactly one/);
    await server.close();
  });
});
