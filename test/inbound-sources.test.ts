import { describe, expect, it, vi } from 'vitest';
import { setupApp, type TestContext } from './helpers/app.js';
import { createPipeline, createRole, createUser, defaultPipeline } from './helpers/factories.js';
import { SOURCE_TTL_MS } from '../src/domain/inbound/receive.service.js';
import { INBOUND as BASE, receive as signedReceive } from './helpers/inbound.js';

const receive = (t: TestContext, id: string, secret: string, body: string) => signedReceive(t, { id, secret }, body);

describe('inbound sources: management', () => {
  it('creates a source (form body) with endpoint URL and a once-shown 64-hex secret, default pipeline when none given', async () => {
    const t = await setupApp();
    const sales = await defaultPipeline(t.db);
    const res = await t.call({
      method: 'POST',
      url: `${BASE}/new`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'source[name]=Website%20form',
    });
    expect(res.statusCode).toBe(200);
    const source = res.json().source;
    expect(source.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(source.name).toBe('Website form');
    expect(source.pipeline).toEqual({ id: sales.id, name: 'Sales' });
    expect(source.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(source.endpointUrl).toBe(`http://service.test${BASE}/${source.id}/receive`);
    expect(source.enabled).toBe(true);
    expect(source.lastReceivedAt).toBeNull();
    expect(res.headers.location).toBe(`http://service.test${BASE}/${source.id}`);

    // Never again: get, list, edit.
    const got = await t.call({ method: 'GET', url: `${BASE}/${source.id}` });
    expect(got.statusCode).toBe(200);
    expect(got.body).not.toContain(source.secret);
    expect(got.json().source).not.toHaveProperty('secret');
    const list = await t.call({ method: 'GET', url: BASE });
    expect(list.json().sources.map((s: { id: string }) => s.id)).toEqual([source.id]);
    expect(list.body).not.toContain(source.secret);
    const edited = await t.call({ method: 'POST', url: `${BASE}/${source.id}/edit`, payload: { source: { name: 'Renamed' } } });
    expect(edited.json().source.name).toBe('Renamed');
    expect(edited.body).not.toContain(source.secret);
    const log = await t.call({ method: 'GET', url: `${BASE}/${source.id}/log` });
    expect(log.body).not.toContain(source.secret);
  });

  it('stores the secret encrypted: the column holds no plaintext, and the shown secret signs receives', async () => {
    const t = await setupApp();
    const res = await t.call({ method: 'POST', url: `${BASE}/new`, payload: { source: { name: 'CRM' } } });
    const { id, secret } = res.json().source;
    const row = await t.db.selectFrom('inbound_sources').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const dump = JSON.stringify(row);
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(Buffer.from(secret).toString('base64'));
    expect(dump).not.toContain(Buffer.from(secret, 'hex').toString('base64'));
    expect(row.secret_encrypted).toMatch(/^v1\./);
    const ok = await receive(t, id, secret, '{"title":"Signed"}');
    expect(ok.statusCode).toBe(200);
  });

  it('creates in a chosen pipeline; unknown or invisible pipelines and a missing name are 422', async () => {
    const t = await setupApp();
    const pipeline = await createPipeline(t.db);
    const ok = await t.call({ method: 'POST', url: `${BASE}/new`, payload: { source: { name: 'Partner', pipeline: pipeline.id } } });
    expect(ok.json().source.pipeline).toEqual({ id: pipeline.id, name: pipeline.name });

    const unknown = await t.call({ method: 'POST', url: `${BASE}/new`, payload: { source: { name: 'X', pipeline: 999999 } } });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().errors[0].details).toHaveProperty(['source[pipeline]']);

    const noName = await t.call({ method: 'POST', url: `${BASE}/new`, payload: { source: { name: '  ' } } });
    expect(noName.statusCode).toBe(422);
    expect(noName.json().errors[0].details).toHaveProperty(['source[name]']);

    // A manager who cannot see a pipeline cannot route deals into it.
    const otherRole = await createRole(t.db);
    const hidden = await createPipeline(t.db, { roleIds: [otherRole.id] });
    const manager = await createUser(t.db, ['service:webhooks:manage']);
    const refused = await t.call({ method: 'POST', url: `${BASE}/new`, payload: { source: { name: 'Y', pipeline: hidden.id } } }, manager);
    expect(refused.statusCode).toBe(422);
    const allowed = await t.call({ method: 'POST', url: `${BASE}/new`, payload: { source: { name: 'Z' } } }, manager);
    expect(allowed.statusCode).toBe(200);
  });

  it('needs service:webhooks:manage for every management route', async () => {
    const t = await setupApp();
    const { id } = (await t.call({ method: 'POST', url: `${BASE}/new`, payload: { source: { name: 'S' } } })).json().source;
    const user = await createUser(t.db, ['service:deals:create', 'service:deals:viewother', 'service:pipelines:manage']);
    const calls = [
      { method: 'GET', url: BASE },
      { method: 'POST', url: `${BASE}/new`, payload: { source: { name: 'no' } } },
      { method: 'GET', url: `${BASE}/${id}` },
      { method: 'POST', url: `${BASE}/${id}/edit`, payload: { source: { name: 'no' } } },
      { method: 'POST', url: `${BASE}/${id}/rotate` },
      { method: 'GET', url: `${BASE}/${id}/log` },
      { method: 'DELETE', url: `${BASE}/${id}` },
    ] as const;
    for (const call of calls) {
      const res = await t.call({ ...call }, user);
      expect(res.statusCode, `${call.method} ${call.url}`).toBe(403);
      const anonymous = await t.app.inject({ ...call });
      expect(anonymous.statusCode, `${call.method} ${call.url}`).toBe(401);
    }
    expect((await t.call({ method: 'GET', url: `${BASE}/${id}` })).statusCode).toBe(200);
  });

  it('404 for unknown and malformed source ids', async () => {
    const t = await setupApp();
    for (const sourceId of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', '1']) {
      expect((await t.call({ method: 'GET', url: `${BASE}/${sourceId}` })).statusCode).toBe(404);
      expect((await t.call({ method: 'POST', url: `${BASE}/${sourceId}/rotate` })).statusCode).toBe(404);
      expect((await t.call({ method: 'DELETE', url: `${BASE}/${sourceId}` })).statusCode).toBe(404);
      expect((await t.call({ method: 'GET', url: `${BASE}/${sourceId}/log` })).statusCode).toBe(404);
    }
  });

  it('disables (receive → 404), re-enables and deletes a source; its deals stay', async () => {
    const t = await setupApp();
    const { id, secret } = (await t.call({ method: 'POST', url: `${BASE}/new`, payload: { source: { name: 'S' } } })).json().source;
    const first = await receive(t, id, secret, '{"title":"Kept"}');
    const dealId = first.json().deal.id;

    const off = await t.call({ method: 'POST', url: `${BASE}/${id}/edit`, payload: 'source[enabled]=false', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(off.json().source.enabled).toBe(false);
    const refused = await receive(t, id, secret, '{"title":"While disabled"}');
    expect(refused.statusCode).toBe(404);
    expect(refused.json().errors[0].type).toBe('not_found');

    await t.call({ method: 'POST', url: `${BASE}/${id}/edit`, payload: { source: { enabled: true } } });
    expect((await receive(t, id, secret, '{"title":"Back on"}')).statusCode).toBe(200);

    const deleted = await t.call({ method: 'DELETE', url: `${BASE}/${id}` });
    expect(deleted.json()).toEqual({ success: true });
    expect((await t.call({ method: 'GET', url: `${BASE}/${id}` })).statusCode).toBe(404);
    expect((await receive(t, id, secret, '{"title":"After delete"}')).statusCode).toBe(404);
    const deal = await t.db.selectFrom('deals').select(['id', 'source_id']).where('id', '=', dealId).executeTakeFirstOrThrow();
    expect(deal.source_id).toBeNull();
  });

  it('a source in use is read again in the background before its cached copy runs out', async () => {
    const t = await setupApp();
    const { id, secret } = (await t.call({ method: 'POST', url: `${BASE}/new`, payload: { source: { name: 'S' } } })).json().source;
    expect((await receive(t, id, secret, '{"title":"first"}')).statusCode).toBe(200);
    await t.db.updateTable('inbound_sources').set({ enabled: false }).where('id', '=', id).execute();
    // The cache's clock is set, not waited for, so a slow machine cannot push the copy past its time.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      // Past half its time the cached copy still answers, and is read again behind the scenes ...
      vi.setSystemTime(Date.now() + SOURCE_TTL_MS / 2 + 50);
      expect((await receive(t, id, secret, '{"title":"second"}')).statusCode).toBe(200);
      // ... so the change shows while the copy, by the clock, has not run out.
      let status = 200;
      for (let tries = 0; tries < 100 && status === 200; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        status = (await receive(t, id, secret, `{"title":"third ${tries}"}`)).statusCode;
      }
      expect(status).toBe(404);
    } finally {
      vi.useRealTimers();
    }
  });

  it('rotation: new secret shown once, old one valid until its 24 h window ends', async () => {
    const t = await setupApp();
    const { id, secret: oldSecret } = (await t.call({ method: 'POST', url: `${BASE}/new`, payload: { source: { name: 'S' } } })).json().source;
    const before = Date.now();
    const rotated = await t.call({ method: 'POST', url: `${BASE}/${id}/rotate` });
    expect(rotated.statusCode).toBe(200);
    const { secret: newSecret, previousSecretExpiresAt } = rotated.json().source;
    expect(newSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(newSecret).not.toBe(oldSecret);
    const expires = Date.parse(previousSecretExpiresAt);
    expect(expires - before).toBeGreaterThan(23.9 * 3600_000);
    expect(expires - before).toBeLessThan(24.1 * 3600_000);
    expect((await t.call({ method: 'GET', url: `${BASE}/${id}` })).body).not.toContain(newSecret);

    expect((await receive(t, id, newSecret, '{"title":"new"}')).statusCode).toBe(200);
    expect((await receive(t, id, oldSecret, '{"title":"old, in window"}')).statusCode).toBe(200);

    await t.db.updateTable('inbound_sources').set({ previous_secret_expires_at: new Date(Date.now() - 1000) }).where('id', '=', id).execute();
    // A change made behind the service's back (as by another process) is seen once the source cache's second is over.
    await new Promise((resolve) => setTimeout(resolve, SOURCE_TTL_MS + 100));
    const expired = await receive(t, id, oldSecret, '{"title":"old, expired"}');
    expect(expired.statusCode).toBe(403);
    expect(expired.json().errors[0].type).toBe('invalid_signature');
    expect((await receive(t, id, newSecret, '{"title":"new still"}')).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: `${BASE}/${id}` })).json().source.previousSecretExpiresAt).toBeNull();

    // Rotating twice: the first secret stops at once, the second gets the window.
    const again = (await t.call({ method: 'POST', url: `${BASE}/${id}/rotate` })).json().source.secret;
    expect((await receive(t, id, again, '{"title":"third"}')).statusCode).toBe(200);
    expect((await receive(t, id, newSecret, '{"title":"second, in window"}')).statusCode).toBe(200);
    expect((await receive(t, id, oldSecret, '{"title":"first"}')).statusCode).toBe(403);
  });

  it('keeps a receive log per source: time, status, outcome, error, deal id; lastReceivedAt set', async () => {
    const t = await setupApp();
    const { id, secret } = (await t.call({ method: 'POST', url: `${BASE}/new`, payload: { source: { name: 'S' } } })).json().source;
    const other = (await t.call({ method: 'POST', url: `${BASE}/new`, payload: { source: { name: 'Other' } } })).json().source;
    const ok = await receive(t, id, secret, '{"title":"Logged"}');
    await receive(t, id, 'wrong-secret', '{"title":"Bad"}');
    await receive(t, id, secret, '{"amount":"ten"}');
    await receive(t, id, secret, '{"title":"Logged"}');

    const log = (await t.call({ method: 'GET', url: `${BASE}/${id}/log` })).json().log;
    expect(log.map((e: { status: number; outcome: string }) => [e.status, e.outcome])).toEqual([
      [200, 'replayed'],
      [422, 'rejected'],
      [403, 'rejected'],
      [200, 'created'],
    ]);
    expect(log[3].deal).toEqual({ id: ok.json().deal.id });
    expect(log[0].deal).toEqual({ id: ok.json().deal.id });
    expect(log[1].error).toContain('amount');
    expect(log[2].error).toMatch(/signature/i);
    expect(log[3].error).toBeNull();
    expect(Date.parse(log[0].receivedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(JSON.stringify(log)).not.toContain(secret);
    expect((await t.call({ method: 'GET', url: `${BASE}/${other.id}/log` })).json().log).toEqual([]);

    const source = (await t.call({ method: 'GET', url: `${BASE}/${id}` })).json().source;
    expect(Date.parse(source.lastReceivedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect((await t.call({ method: 'GET', url: `${BASE}/${other.id}` })).json().source.lastReceivedAt).toBeNull();
  });
});
