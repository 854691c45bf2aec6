import { beforeAll, describe, expect, it } from 'vitest';
import { setupApp, type TestContext } from './helpers/app.js';

let t: TestContext;
let doc: { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: any }> }> }>> };
beforeAll(async () => {
  t = await setupApp();
  doc = (await t.app.inject({ method: 'GET', url: '/service/openapi.json' })).json();
});

const statuses = (path: string, method: string) => Object.keys(doc.paths[path]![method]!.responses).sort();

describe('the OpenAPI document names the errors each operation can answer', () => {
  it('lists credentials, permission, path, body and outage errors with the error body', () => {
    expect(statuses('/service/{id}/view', 'get')).toEqual(['200', '401', '403', '404', '429', '503']);
    expect(statuses('/service/deals/new', 'post')).toEqual(['200', '401', '403', '409', '413', '415', '422', '429', '503']);
    expect(statuses('/service/deals', 'get')).toEqual(expect.arrayContaining(['422']));
    const notFound = doc.paths['/service/{id}/view']!.get!.responses['404']! as { description?: string; content?: Record<string, { schema: any }> };
    expect(notFound.description).toBe('Not found');
    // Every error response refers to the one ErrorBody component instead of repeating it.
    expect(notFound.content!['application/json']!.schema).toEqual({ $ref: '#/components/schemas/ErrorBody' });
    const errorBody = (doc as any).components.schemas.ErrorBody;
    expect(Object.keys(errorBody.properties.errors.items.properties).sort()).toEqual(['code', 'details', 'message', 'type']);
    expect(JSON.stringify(doc).match(/"details":\{"type":"object"/g)).toHaveLength(1);
    expect(Object.keys((doc as any).components.schemas)).toEqual(['ErrorBody']);
  });

  it('answers errors that match the documented body', async () => {
    const res = await t.call({ method: 'GET', url: '/service/999999/view' });
    expect(res.statusCode).toBe(404);
    expect(Object.keys(res.json().errors[0]).sort()).toEqual(['code', 'details', 'message', 'type']);
  });
});

describe('methods and keys', () => {
  it('answers 405 with Allow for a method the path does not have', async () => {
    const res = await t.call({ method: 'PUT', url: '/service/stages' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.json().errors[0]).toMatchObject({ code: 405, type: 'method_not_allowed' });
    const view = await t.call({ method: 'DELETE', url: '/service/12/view' });
    expect(view.statusCode).toBe(405);
    expect(view.headers.allow).toBe('GET, HEAD');
    expect((await t.call({ method: 'GET', url: '/service/no/such/path' })).statusCode).toBe(404);
  });

  it('names a refused __proto__ or constructor key instead of calling valid JSON invalid', async () => {
    const cases = [
      ['{"deal":{"title":"X","__proto__":{"admin":true}}}', 'deal[__proto__]'],
      ['{"deal":{"title":"X"},"constructor":{"prototype":{"admin":true}}}', 'constructor'],
    ];
    for (const [payload, field] of cases) {
      const res = await t.call({ method: 'POST', url: '/service/deals/new', headers: { 'content-type': 'application/json' }, payload });
      expect(res.statusCode).toBe(422);
      expect(res.json().errors[0].details).toEqual({ [field!]: [expect.stringMatching(/is not accepted/)] });
    }
    // A custom field that merely is called constructor is data, not an attack.
    const plain = await t.call({ method: 'POST', url: '/service/deals/new', payload: { deal: { title: 'Y', customFields: { constructor: 'Bob' } } } });
    expect(plain.statusCode).toBe(200);
    const deals = await t.db.selectFrom('deals').select('id').where('title', '=', 'X').execute();
    expect(deals).toEqual([]);
  });
});

describe('422 messages in words', () => {
  it('says Required and the expected kind instead of the validator\'s raw text', async () => {
    const missing = await t.call({ method: 'POST', url: '/service/deals/batch', payload: { action: 'delete' } });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().errors[0].details).toEqual({ ids: ['Required'] });
    const wrongKind = await t.call({ method: 'POST', url: '/service/deals/new', payload: { deal: 'a string' } });
    expect(wrongKind.statusCode).toBe(422);
    expect(wrongKind.json().errors[0].details).toEqual({ deal: ['Must be an object'] });
    expect(JSON.stringify([missing.json(), wrongKind.json()])).not.toMatch(/Invalid input: expected/);
  });
});

describe('published inputs say what the server accepts', () => {
  it('types owner as an id (or empty/null to clear), and ids with their minimum', () => {
    const body = (doc.paths['/service/deals/new']!.post as any).requestBody.content['application/json'].schema;
    const owner = JSON.stringify(body.properties.deal.properties.owner);
    expect(owner).toContain('"type":"integer","minimum":1');
    expect(owner).toContain('"nullable":true');
    const stage = JSON.stringify(body.properties.deal.properties.stage);
    expect(stage).toContain('"minimum":1');
  });
});
