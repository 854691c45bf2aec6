import { createHmac } from 'node:crypto';
import { createServer } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createBuiltinHost } from '../src/host/builtin/index.js';
import { createDatabase } from '../src/db/database.js';
import { ADMIN, basic, setupApp, testConfig, type TestContext } from './helpers/app.js';
import { createContact } from './helpers/factories.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let t: TestContext;
beforeAll(async () => {
  t = await setupApp();
});

function expectError(res: { statusCode: number; json(): any }, status: number, type: string) {
  expect(res.statusCode).toBe(status);
  const body = res.json();
  expect(Object.keys(body)).toEqual(['errors']);
  expect(body.errors).toHaveLength(1);
  expect(body.errors[0]).toMatchObject({ code: status, type });
  expect(typeof body.errors[0].message).toBe('string');
  expect(typeof body.errors[0].details).toBe('object');
  return body.errors[0];
}

describe('error mapping (contract section 2)', () => {
  it('404 for a route that does not exist, with or without credentials', async () => {
    expectError(await t.app.inject({ method: 'GET', url: '/service/nothing/here' }), 404, 'not_found');
    expectError(await t.call({ method: 'POST', url: '/nowhere' }), 404, 'not_found');
  });

  it('404 for a path id that is not a positive integer', async () => {
    for (const id of ['abc', '0', '-1', '1.5', '1e3', '99999999999']) {
      expectError(await t.call({ method: 'GET', url: `/host/roles/${id}` }), 404, 'not_found');
    }
    expectError(await t.call({ method: 'GET', url: '/host/roles/999999' }), 404, 'not_found');
  });

  it('413 for a body over 1 MiB', async () => {
    const payload = JSON.stringify({ email: 'big@example.test', company: 'x'.repeat(1024 * 1024) });
    const res = await t.call({ method: 'POST', url: '/host/contacts/new', headers: { 'content-type': 'application/json' }, payload });
    expect(expectError(res, 413, 'payload_too_large').message).toBe('Request body is larger than 1048576 bytes');
  });

  it('415 for a content type other than JSON or a form', async () => {
    const res = await t.call({ method: 'POST', url: '/host/contacts/new', headers: { 'content-type': 'application/xml' }, payload: '<email>a@b.test</email>' });
    expect(expectError(res, 415, 'unsupported_media_type').message).toContain('Unsupported content type application/xml');
    const plain = await t.call({ method: 'POST', url: '/host/contacts/new', headers: { 'content-type': 'text/plain' }, payload: 'email=a@b.test' });
    expectError(plain, 415, 'unsupported_media_type');
  });

  it('422 naming the input for text PostgreSQL cannot store (NUL), in forms, JSON, queries and inbound bodies', async () => {
    const form = await t.call({ method: 'POST', url: '/service/deals/new', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'deal[title]=a%00b' });
    expect(expectError(form, 422, 'validation_failed').details).toHaveProperty(['deal[title]']);
    const json = await t.call({ method: 'POST', url: '/service/deals/new', payload: { deal: { title: 'ok', customFields: { note: 'x\u0000y' } } } });
    expect(expectError(json, 422, 'validation_failed').details).toHaveProperty(['deal[customFields][note]']);
    const query = await t.call({ method: 'GET', url: '/service/deals?search=%00' });
    expect(expectError(query, 422, 'validation_failed').details).toHaveProperty(['search']);

    const source = (await t.call({ method: 'POST', url: '/service/settings/inbound-webhooks/new', payload: { source: { name: 'NUL' } } })).json().source;
    const body = JSON.stringify({ title: 'Fine', custom_fields: { note: 'x\u0000y' } });
    const signature = `sha256=${createHmac('sha256', source.secret).update(body).digest('hex')}`;
    const inbound = await t.app.inject({
      method: 'POST',
      url: `/service/settings/inbound-webhooks/${source.id}/receive`,
      headers: { 'content-type': 'application/json', 'x-service-signature': signature },
      payload: body,
    });
    expectError(inbound, 422, 'validation_failed');
    const deals = await t.db.selectFrom('deals').select('id').where('source_id', '=', source.id).execute();
    expect(deals).toEqual([]);
  });

  it('422, not a server error, for JSON nested deeper than 32 levels, also on the public token route; 32 levels are fine', async () => {
    const nested = (levels: number) => `${'{"a":'.repeat(levels - 1)}{"b":1}${'}'.repeat(levels - 1)}`;
    const token = await t.app.inject({ method: 'POST', url: '/oauth/v2/token', headers: { 'content-type': 'application/json' }, payload: `{"x":${'['.repeat(5000)}${']'.repeat(5000)}}` });
    expect(expectError(token, 422, 'validation_failed').details).toHaveProperty(['x' + '[0]'.repeat(31)]);
    const deal = await t.call({ method: 'POST', url: '/service/deals/new', headers: { 'content-type': 'application/json' }, payload: `{"deal":{"title":"Deep","customFields":${nested(31)}}}` });
    expectError(deal, 422, 'validation_failed');
    const fine = await t.call({ method: 'POST', url: '/service/deals/new', headers: { 'content-type': 'application/json' }, payload: `{"deal":{"title":"Deep","customFields":${nested(30)}}}` });
    expect(fine.statusCode).toBe(200);
  });

  it('422 for a body that is not valid JSON', async () => {
    const res = await t.call({ method: 'POST', url: '/host/contacts/new', headers: { 'content-type': 'application/json' }, payload: '{"email":' });
    expectError(res, 422, 'validation_failed');
  });

  it('422 names each bad input as sent, in form and JSON bodies alike', async () => {
    const form = await t.call({
      method: 'POST',
      url: '/service/pipelines/new',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'pipeline[isDefault]=true&stages[0][name]=',
    });
    const error = expectError(form, 422, 'validation_failed');
    expect(error.details).toMatchObject({ 'pipeline[name]': [expect.any(String)], 'stages[0][name]': ['Required'] });
    expect(error.message).toMatch(/^(pipeline\[name\]|stages\[0\]\[name\]): /);
    const json = await t.call({ method: 'POST', url: '/service/pipelines/new', payload: { pipeline: { name: 'X' }, stages: [{ name: 'A', type: 'maybe' }] } });
    expect(Object.keys(expectError(json, 422, 'validation_failed').details)).toEqual(['stages[0][type]']);
    const query = await t.call({ method: 'GET', url: '/host/contacts?limit=500' });
    expect(Object.keys(expectError(query, 422, 'validation_failed').details)).toEqual(['limit']);
  });

  it('409 for a conflict', async () => {
    await createContact(t.db, { email: 'taken@example.test' });
    expectError(await t.call({ method: 'POST', url: '/host/contacts/new', payload: { email: 'taken@example.test' } }), 409, 'conflict');
  });

  it('500 for a fault: a generic message, no stack, the request id in details', async () => {
    const app = await buildApp({ config: t.config, db: t.db, logger: pino({ level: 'silent' }), host: createBuiltinHost({ db: t.db, config: t.config }) });
    app.get('/boom', { config: { public: true } }, async () => {
      throw new Error('internal detail that must not leak');
    });
    await app.ready();
    const res = await app.inject({ method: 'GET', url: '/boom', headers: { 'x-request-id': 'trace-500' } });
    const error = expectError(res, 500, 'server_error');
    expect(res.body).not.toContain('internal detail');
    expect(res.body).not.toContain('at ');
    expect(error.details).toEqual({ requestId: 'trace-500' });
    await app.close();
  });
});

describe('database down', () => {
  let app: Awaited<ReturnType<typeof buildApp>>;
  let database: ReturnType<typeof createDatabase>;

  beforeAll(async () => {
    // A port nothing listens on: take a free one and let it go.
    const port = await new Promise<number>((done) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => done(port));
      });
    });
    database = createDatabase(`postgres://nobody:nothing@127.0.0.1:${port}/none`, { max: 2 });
    const config = testConfig();
    app = await buildApp({ config, db: database.db, logger: pino({ level: 'silent' }), host: createBuiltinHost({ db: database.db, config }) });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await database.destroy();
  });

  it('answers 503 with the request id, for public and authenticated routes alike', async () => {
    const requests = [
      { url: '/health' },
      { url: '/service/pipelines', headers: { authorization: basic(ADMIN) } },
      { url: '/service/pipelines', headers: { authorization: 'Bearer some-token' } },
    ];
    for (const request of requests) {
      const res = await app.inject({ method: 'GET', ...request });
      const error = expectError(res, 503, 'unavailable');
      expect(error.details.requestId).toBe(res.headers['x-request-id']);
    }
  });

  it('does not count an outage as failed logins', async () => {
    for (let i = 0; i < 12; i += 1) {
      await app.inject({ method: 'GET', url: '/service/pipelines', headers: { authorization: basic(ADMIN) }, remoteAddress: '10.9.9.9' });
    }
    const res = await app.inject({ method: 'GET', url: '/service/pipelines', headers: { authorization: basic(ADMIN) }, remoteAddress: '10.9.9.9' });
    expect(res.statusCode).toBe(503);
  });
});

describe('X-Request-Id', () => {
  it('is on every response: success, 401, 404, 422', async () => {
    const responses = [
      await t.call({ method: 'GET', url: '/service/pipelines' }),
      await t.app.inject({ method: 'GET', url: '/service/pipelines' }),
      await t.app.inject({ method: 'GET', url: '/missing' }),
      await t.call({ method: 'POST', url: '/host/contacts/new', payload: {} }),
      await t.app.inject({ method: 'GET', url: '/health' }),
    ];
    const ids = responses.map((res) => res.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('echoes a sane incoming id and replaces one that is not', async () => {
    const sane = await t.call({ method: 'GET', url: '/service/pipelines', headers: { 'x-request-id': 'client-req.42:a_b' } });
    expect(sane.headers['x-request-id']).toBe('client-req.42:a_b');
    for (const bad of ['<script>', 'x'.repeat(129), 'has space']) {
      const res = await t.call({ method: 'GET', url: '/service/pipelines', headers: { 'x-request-id': bad } });
      expect(res.headers['x-request-id']).toMatch(UUID);
    }
  });
});
