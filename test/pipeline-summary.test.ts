import { beforeAll, describe, expect, it } from 'vitest';
import { setupApp, type TestContext } from './helpers/app.js';
import { createDeal, createPipeline, createUser, type TestPipeline, type TestUser } from './helpers/factories.js';

/** GET /service/pipelines/{id}/summary against figures worked out by hand. */

let t: TestContext;
let pipeline: TestPipeline;
let rep: TestUser;
let viewerOnly: TestUser;

beforeAll(async () => {
  t = await setupApp();
  pipeline = await createPipeline(t.db);
  const [openA, openB, won] = pipeline.stages;
  await t.db.updateTable('stages').set({ probability: 10 }).where('id', '=', openA!.id).execute();
  await t.db.updateTable('stages').set({ probability: 40 }).where('id', '=', openB!.id).execute();
  await t.db.updateTable('stages').set({ probability: 100 }).where('id', '=', won!.id).execute();
  rep = await createUser(t.db, ['service:pipelines:view', 'service:deals:viewown']);
  viewerOnly = await createUser(t.db, ['service:pipelines:view']);
  const deal = (stageId: number, amount: string, currency = 'USD', owner = 1) =>
    createDeal(t.db, { stageId, amount, currency, ownerId: owner, createdById: owner });
  await deal(openA!.id, '1000'); // weighted 100
  await deal(openA!.id, '250.50'); // 25.05
  await deal(openA!.id, '300', 'EUR'); // 30
  await deal(openA!.id, '100', 'USD', rep.id); // 10, the rep's own
  await deal(openB!.id, '999.99'); // 399.996
  await deal(openB!.id, '700'); // 280 → with the one above 679.996, shown as 680.00
  await deal(won!.id, '500'); // won: only with status=won or all
});

const summary = (query = '', as?: TestUser) => t.call({ method: 'GET', url: `/service/pipelines/${pipeline.id}/summary${query}` }, as);

describe('pipeline summary', () => {
  it('counts open deals per stage and currency, weighted by the stage probability', async () => {
    const response = await summary();
    expect(response.statusCode).toBe(200);
    const body = response.json().summary;
    expect(body.status).toBe('open');
    expect(body.stages.map((s: { stage: { name: string } }) => s.stage.name)).toEqual(['Open A', 'Open B', 'Won', 'Lost']);
    expect(body.stages[0].currencies).toEqual([
      { currency: 'EUR', count: 1, amount: 300, weighted: 30 },
      { currency: 'USD', count: 3, amount: 1350.5, weighted: 135.05 },
    ]);
    expect(body.stages[1].currencies).toEqual([{ currency: 'USD', count: 2, amount: 1699.99, weighted: 680 }]);
    expect(body.stages[2].currencies).toEqual([]);
    expect(body.totals).toEqual([
      { currency: 'EUR', count: 1, amount: 300, weighted: 30 },
      { currency: 'USD', count: 5, amount: 3050.49, weighted: 815.05 },
    ]);
  });

  it('takes won and all deals when status asks', async () => {
    const won = (await summary('?status=won')).json().summary;
    expect(won.stages[2].currencies).toEqual([{ currency: 'USD', count: 1, amount: 500, weighted: 500 }]);
    expect(won.totals).toEqual([{ currency: 'USD', count: 1, amount: 500, weighted: 500 }]);
    const all = (await summary('?status=all')).json().summary;
    expect(all.totals).toContainEqual({ currency: 'USD', count: 6, amount: 3550.49, weighted: 1315.05 });
  });

  it('counts only the deals the caller may see', async () => {
    const own = (await summary('', rep)).json().summary;
    expect(own.stages[0].currencies).toEqual([{ currency: 'USD', count: 1, amount: 100, weighted: 10 }]);
    expect(own.totals).toEqual([{ currency: 'USD', count: 1, amount: 100, weighted: 10 }]);
    const none = await summary('', viewerOnly);
    expect(none.statusCode).toBe(200);
    expect(none.json().summary.totals).toEqual([]);
  });

  it('needs service:pipelines:view, and is documented in the OpenAPI', async () => {
    const nobody = await createUser(t.db, ['service:deals:viewother']);
    expect((await summary('', nobody)).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: `/service/pipelines/${pipeline.id}/summary` })).statusCode).toBe(401);
    const spec = (await t.call({ method: 'GET', url: '/service/openapi.json' })).json();
    const op = spec.paths['/service/pipelines/{id}/summary'].get;
    expect(op.responses['200'].content['application/json'].schema.properties.summary.properties.totals).toBeDefined();
  });

  it('refuses a bad status with the contract error', async () => {
    const response = await summary('?status=maybe');
    expect(response.statusCode).toBe(422);
    expect(response.json().errors[0].details.status).toBeDefined();
  });
});
