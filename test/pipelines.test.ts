import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/database.js';
import { setupApp, type TestContext } from './helpers/app.js';
import { createPipeline, createRole, createUser, defaultPipeline, type TestUser } from './helpers/factories.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** Deals are written straight to the table: these tests are about what pipelines do with them. */
async function insertDeal(db: Db, stage: { id: number; type: 'open' | 'won' | 'lost' }, pipelineId: number) {
  const row = await db
    .insertInto('deals')
    .values({ title: 'Deal', currency: 'USD', pipeline_id: pipelineId, stage_id: stage.id, status: stage.type, lost_reason: 'x' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

async function stageRows(db: Db, pipelineId: number) {
  return db.selectFrom('stages').select(['id', 'name', 'position']).where('pipeline_id', '=', pipelineId).orderBy('position').execute();
}

let t: TestContext;
beforeAll(async () => {
  t = await setupApp();
});

describe('create pipeline', () => {
  it('creates a pipeline with ordered stages from a form body, typed, with default probabilities', async () => {
    const res = await t.call({
      method: 'POST',
      url: '/service/pipelines/new',
      headers: FORM,
      payload:
        'pipeline[name]=Hiring&stages[0][name]=Applied&stages[0][probability]=10' +
        '&stages[1][name]=Hired&stages[1][type]=won&stages[2][name]=Rejected&stages[2][type]=lost',
    });
    expect(res.statusCode).toBe(200);
    const { pipeline } = res.json();
    expect(res.headers.location).toBe(`http://service.test/service/pipelines/${pipeline.id}`);
    expect(pipeline).toMatchObject({ name: 'Hiring', isDefault: false, roles: [] });
    expect(pipeline.stages.map((s: object) => ({ ...s, id: undefined }))).toEqual([
      { id: undefined, name: 'Applied', type: 'open', position: 1, probability: 10, color: null },
      { id: undefined, name: 'Hired', type: 'won', position: 2, probability: 100, color: null },
      { id: undefined, name: 'Rejected', type: 'lost', position: 3, probability: 0, color: null },
    ]);
    const list = await t.call({ method: 'GET', url: '/service/pipelines' });
    expect(list.json().pipelines.map((p: { name: string }) => p.name)).toContain('Hiring');
  });

  it('names each bad input as sent', async () => {
    const res = await t.call({
      method: 'POST',
      url: '/service/pipelines/new',
      headers: FORM,
      payload: 'pipeline[isDefault]=maybe&stages[0][name]=A&stages[1][name]=B&stages[1][type]=pending&stages[1][probability]=101',
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].type).toBe('validation_failed');
    expect(Object.keys(res.json().errors[0].details).sort()).toEqual([
      'pipeline[isDefault]',
      'pipeline[name]',
      'stages[1][probability]',
      'stages[1][type]',
    ]);
    const noStages = await t.call({ method: 'POST', url: '/service/pipelines/new', payload: { pipeline: { name: 'X' }, stages: [] } });
    expect(noStages.statusCode).toBe(422);
    expect(Object.keys(noStages.json().errors[0].details)).toEqual(['stages']);
  });

  it('switches the default: exactly one pipeline is the default', async () => {
    const sales = await defaultPipeline(t.db);
    const res = await t.call({
      method: 'POST',
      url: '/service/pipelines/new',
      payload: { pipeline: { name: 'Renewals', isDefault: true }, stages: [{ name: 'Due' }] },
    });
    expect(res.statusCode).toBe(200);
    const renewals = res.json().pipeline;
    expect(renewals.isDefault).toBe(true);
    const defaults = await t.db.selectFrom('pipelines').select('id').where('is_default', '=', true).execute();
    expect(defaults).toEqual([{ id: renewals.id }]);

    // Unsetting the default directly is refused; making another one the default moves it.
    const unset = await t.call({ method: 'POST', url: `/service/pipelines/${renewals.id}/edit`, payload: { pipeline: { isDefault: false } } });
    expect(unset.statusCode).toBe(409);
    const back = await t.call({ method: 'POST', url: `/service/pipelines/${sales.id}/edit`, headers: FORM, payload: 'pipeline[isDefault]=1' });
    expect(back.statusCode).toBe(200);
    expect(back.json().pipeline.isDefault).toBe(true);
    const after = await t.db.selectFrom('pipelines').select('id').where('is_default', '=', true).execute();
    expect(after).toEqual([{ id: sales.id }]);
  });

  it('refuses unknown role ids, naming the item', async () => {
    const role = await createRole(t.db, []);
    const res = await t.call({
      method: 'POST',
      url: '/service/pipelines/new',
      payload: { pipeline: { name: 'X', roles: [role.id, 999999] }, stages: [{ name: 'A' }] },
    });
    expect(res.statusCode).toBe(422);
    expect(Object.keys(res.json().errors[0].details)).toEqual(['pipeline[roles][1]']);
    expect(await t.db.selectFrom('pipelines').select('id').where('name', '=', 'X').execute()).toEqual([]);
  });
});

describe('visibility by role', () => {
  let insider: TestUser;
  let outsider: TestUser;
  let outsideManager: TestUser;
  let hiddenId: number;

  beforeAll(async () => {
    const insiders = await createRole(t.db, ['service:pipelines:view']);
    insider = await createUser(t.db, [], { roleId: insiders.id });
    outsider = await createUser(t.db, ['service:pipelines:view']);
    outsideManager = await createUser(t.db, ['service:pipelines:view', 'service:pipelines:manage']);
    const res = await t.call({
      method: 'POST',
      url: '/service/pipelines/new',
      headers: FORM,
      payload: `pipeline[name]=Secret&pipeline[roles][]=${insiders.id}&stages[0][name]=Only`,
    });
    expect(res.json().pipeline.roles).toEqual([insiders.id]);
    hiddenId = res.json().pipeline.id;
  });

  it('shows a limited pipeline and its stages only to its roles and admins', async () => {
    const names = async (user?: TestUser) =>
      (await t.call({ method: 'GET', url: '/service/pipelines' }, user)).json().pipelines.map((p: { id: number }) => p.id);
    expect(await names(insider)).toContain(hiddenId);
    expect(await names()).toContain(hiddenId);
    expect(await names(outsider)).not.toContain(hiddenId);
    expect(await names(outsider)).toContain((await defaultPipeline(t.db)).id);

    const stages = await t.call({ method: 'GET', url: '/service/stages' }, outsider);
    expect(stages.json().stages.some((s: { pipeline: { id: number } }) => s.pipeline.id === hiddenId)).toBe(false);
    const filtered = await t.call({ method: 'GET', url: `/service/stages?pipeline=${hiddenId}` }, outsider);
    expect(filtered.json().stages).toEqual([]);
    const insiderStages = await t.call({ method: 'GET', url: `/service/stages?pipeline=${hiddenId}` }, insider);
    expect(insiderStages.json().stages.map((s: { name: string }) => s.name)).toEqual(['Only']);

    expect((await t.call({ method: 'GET', url: `/service/pipelines/${hiddenId}` }, outsider)).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `/service/pipelines/${hiddenId}` }, insider)).statusCode).toBe(200);
    const stageId = (await stageRows(t.db, hiddenId))[0]!.id;
    expect((await t.call({ method: 'GET', url: `/service/stages/${stageId}` }, outsider)).statusCode).toBe(403);
  });

  it('lets only those who see a pipeline manage it', async () => {
    const stageId = (await stageRows(t.db, hiddenId))[0]!.id;
    const attempts = [
      { method: 'POST' as const, url: `/service/pipelines/${hiddenId}/edit`, payload: { pipeline: { name: 'Mine' } } },
      { method: 'POST' as const, url: `/service/pipelines/${hiddenId}/stages/new`, payload: { stage: { name: 'More' } } },
      { method: 'POST' as const, url: `/service/stages/${stageId}/edit`, payload: { stage: { name: 'Renamed' } } },
      { method: 'POST' as const, url: `/service/pipelines/${hiddenId}/stages/reorder`, payload: { order: [stageId] } },
      { method: 'DELETE' as const, url: `/service/pipelines/${hiddenId}` },
    ];
    for (const attempt of attempts) {
      const res = await t.call(attempt, outsideManager);
      expect(res.statusCode, attempt.url).toBe(403);
    }
    const pipeline = await t.db.selectFrom('pipelines').select('name').where('id', '=', hiddenId).executeTakeFirstOrThrow();
    expect(pipeline.name).toBe('Secret');
  });

  it('opens a pipeline to every role again when its roles are emptied from a form', async () => {
    const res = await t.call({ method: 'POST', url: `/service/pipelines/${hiddenId}/edit`, headers: FORM, payload: 'pipeline[roles]=' });
    expect(res.statusCode).toBe(200);
    expect(res.json().pipeline.roles).toEqual([]);
    expect((await t.call({ method: 'GET', url: `/service/pipelines/${hiddenId}` }, outsider)).statusCode).toBe(200);
  });

  it('refuses writes to a caller with view but not manage', async () => {
    const res = await t.call({ method: 'POST', url: '/service/pipelines/new', payload: { pipeline: { name: 'No' }, stages: [{ name: 'A' }] } }, outsider);
    expect(res.statusCode).toBe(403);
  });
});

describe('edit and delete pipeline', () => {
  it('renames a pipeline', async () => {
    const pipeline = await createPipeline(t.db);
    const res = await t.call({ method: 'POST', url: `/service/pipelines/${pipeline.id}/edit`, headers: FORM, payload: 'pipeline[name]=Partners' });
    expect(res.statusCode).toBe(200);
    expect(res.json().pipeline).toMatchObject({ id: pipeline.id, name: 'Partners', isDefault: false });
    expect(res.json().pipeline.stages).toHaveLength(4);
  });

  it('refuses to delete the default pipeline, or one that holds deals or feeds an inbound source', async () => {
    const sales = await defaultPipeline(t.db);
    const refusedDefault = await t.call({ method: 'DELETE', url: `/service/pipelines/${sales.id}` });
    expect(refusedDefault.statusCode).toBe(409);
    expect(refusedDefault.json().errors[0].type).toBe('conflict');

    const withDeal = await createPipeline(t.db);
    const dealId = await insertDeal(t.db, withDeal.stages[0]!, withDeal.id);
    expect((await t.call({ method: 'DELETE', url: `/service/pipelines/${withDeal.id}` })).statusCode).toBe(409);
    await t.db.deleteFrom('deals').where('id', '=', dealId).execute();
    expect((await t.call({ method: 'DELETE', url: `/service/pipelines/${withDeal.id}` })).statusCode).toBe(200);

    const fed = await createPipeline(t.db);
    await t.db.insertInto('inbound_sources').values({ id: randomUUID(), name: 'Feed', pipeline_id: fed.id, secret_encrypted: 'x' }).execute();
    expect((await t.call({ method: 'DELETE', url: `/service/pipelines/${fed.id}` })).statusCode).toBe(409);
  });

  it('deletes an empty pipeline with its stages; then it is not found', async () => {
    const pipeline = await createPipeline(t.db);
    const res = await t.call({ method: 'DELETE', url: `/service/pipelines/${pipeline.id}` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true });
    expect(await stageRows(t.db, pipeline.id)).toEqual([]);
    expect((await t.call({ method: 'GET', url: `/service/pipelines/${pipeline.id}` })).statusCode).toBe(404);
    expect((await t.call({ method: 'DELETE', url: `/service/pipelines/${pipeline.id}` })).statusCode).toBe(404);
  });
});

describe('stages', () => {
  it('adds a stage last by default, or at a position, moving later stages down', async () => {
    const pipeline = await createPipeline(t.db);
    const last = await t.call({ method: 'POST', url: `/service/pipelines/${pipeline.id}/stages/new`, headers: FORM, payload: 'stage[name]=Parked' });
    expect(last.statusCode).toBe(200);
    expect(last.json().stage).toMatchObject({ name: 'Parked', type: 'open', position: 5, probability: 0, pipeline: { id: pipeline.id } });
    expect(last.headers.location).toBe(`http://service.test/service/stages/${last.json().stage.id}`);

    const second = await t.call({
      method: 'POST',
      url: `/service/pipelines/${pipeline.id}/stages/new`,
      payload: { stage: { name: 'Demo', probability: '35', position: 2 } },
    });
    expect(second.statusCode).toBe(200);
    expect((await stageRows(t.db, pipeline.id)).map((s) => `${s.position}:${s.name}`)).toEqual([
      '1:Open A', '2:Demo', '3:Open B', '4:Won', '5:Lost', '6:Parked',
    ]);

    const tooFar = await t.call({ method: 'POST', url: `/service/pipelines/${pipeline.id}/stages/new`, payload: { stage: { name: 'X', position: 8 } } });
    expect(tooFar.statusCode).toBe(422);
    expect(Object.keys(tooFar.json().errors[0].details)).toEqual(['stage[position]']);
    expect((await t.call({ method: 'POST', url: '/service/pipelines/999999/stages/new', payload: { stage: { name: 'X' } } })).statusCode).toBe(404);
  });

  it('edits a stage, but not its type while it holds deals', async () => {
    const pipeline = await createPipeline(t.db);
    const [openA, openB] = pipeline.stages;
    const renamed = await t.call({ method: 'POST', url: `/service/stages/${openA!.id}/edit`, headers: FORM, payload: 'stage[name]=Intro&stage[probability]=15' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json().stage).toMatchObject({ id: openA!.id, name: 'Intro', type: 'open', probability: 15, position: 1 });

    await insertDeal(t.db, openB!, pipeline.id);
    const retype = await t.call({ method: 'POST', url: `/service/stages/${openB!.id}/edit`, payload: { stage: { type: 'won' } } });
    expect(retype.statusCode).toBe(409);
    const retypeEmpty = await t.call({ method: 'POST', url: `/service/stages/${openA!.id}/edit`, payload: { stage: { type: 'lost' } } });
    expect(retypeEmpty.statusCode).toBe(200);
    expect(retypeEmpty.json().stage.type).toBe('lost');
    expect((await t.call({ method: 'POST', url: '/service/stages/999999/edit', payload: { stage: { name: 'X' } } })).statusCode).toBe(404);
  });

  it('keeps a stage colour as #rrggbb in lower case, clears it with an empty value, and refuses anything else', async () => {
    const created = await t.call({
      method: 'POST',
      url: '/service/pipelines/new',
      headers: FORM,
      payload: 'pipeline[name]=Colours&stages[0][name]=Blue&stages[0][color]=%231D4ED8&stages[1][name]=Plain',
    });
    expect(created.statusCode).toBe(200);
    const [blue, plain] = created.json().pipeline.stages;
    expect([blue.color, plain.color]).toEqual(['#1d4ed8', null]);
    const added = await t.call({ method: 'POST', url: `/service/pipelines/${created.json().pipeline.id}/stages/new`, payload: { stage: { name: 'Red', color: '#d92d20' } } });
    expect(added.json().stage.color).toBe('#d92d20');
    const cleared = await t.call({ method: 'POST', url: `/service/stages/${blue.id}/edit`, headers: FORM, payload: 'stage[color]=' });
    expect(cleared.json().stage).toMatchObject({ name: 'Blue', color: null });
    for (const color of ['red', '#12345', 'url(x)', '#1d4ed8;x']) {
      const bad = await t.call({ method: 'POST', url: `/service/stages/${blue.id}/edit`, payload: { stage: { color } } });
      expect(bad.statusCode, color).toBe(422);
      expect(bad.json().errors[0].details, color).toEqual({ 'stage[color]': ['Must be a colour like #1d4ed8'] });
    }
  });

  it('refuses to delete a stage holding deals without moveTo, and refuses a moveTo outside the pipeline', async () => {
    const pipeline = await createPipeline(t.db);
    const other = await createPipeline(t.db);
    const [openA] = pipeline.stages;
    await insertDeal(t.db, openA!, pipeline.id);
    const refused = await t.call({ method: 'DELETE', url: `/service/stages/${openA!.id}` });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().errors[0].type).toBe('conflict');
    for (const moveTo of [other.stages[0]!.id, openA!.id, 999999]) {
      const bad = await t.call({ method: 'DELETE', url: `/service/stages/${openA!.id}?moveTo=${moveTo}` });
      expect(bad.statusCode).toBe(422);
      expect(Object.keys(bad.json().errors[0].details)).toEqual(['moveTo']);
    }
    expect((await stageRows(t.db, pipeline.id)).map((s) => s.id)).toContain(openA!.id);
  });

  it('moves the deals of a deleted stage to moveTo: a stage change of each, with status, history and events', async () => {
    const pipeline = await createPipeline(t.db);
    const [openA, openB, won] = pipeline.stages;
    const dealIds = [await insertDeal(t.db, openA!, pipeline.id), await insertDeal(t.db, openA!, pipeline.id)];
    const untouched = await insertDeal(t.db, openB!, pipeline.id);

    const res = await t.call({ method: 'DELETE', url: `/service/stages/${openA!.id}?moveTo=${won!.id}` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, movedDeals: 2 });

    const deals = await t.db.selectFrom('deals').select(['id', 'stage_id', 'status', 'won_at', 'lost_reason']).where('pipeline_id', '=', pipeline.id).orderBy('id').execute();
    for (const deal of deals.filter((d) => dealIds.includes(d.id))) {
      expect(deal).toMatchObject({ stage_id: won!.id, status: 'won', lost_reason: null });
      expect(deal.won_at).not.toBeNull();
    }
    expect(deals.find((d) => d.id === untouched)).toMatchObject({ stage_id: openB!.id, status: 'open' });
    const history = await t.db.selectFrom('deal_stage_history').select(['deal_id', 'to_stage_id']).where('deal_id', 'in', dealIds).execute();
    expect(history.map((h) => h.to_stage_id)).toEqual([won!.id, won!.id]);
    // Contract section 5: any stage change → deal.stage_changed, plus won for a won stage, with previous_stage.
    const events = await t.db.selectFrom('event_outbox').select(['deal_id', 'event', 'payload']).where('deal_id', 'in', dealIds).orderBy('deal_id').orderBy('sequence').execute();
    expect(events.map((e) => [e.deal_id, e.event])).toEqual(dealIds.flatMap((id) => [[id, 'deal.stage_changed'], [id, 'service.deal.won']]));
    for (const event of events) expect(event.payload).toMatchObject({ previous_stage: { id: openA!.id }, deal: { stage: { id: won!.id }, status: 'won' } });
    expect(await t.db.selectFrom('event_outbox').select('id').where('deal_id', '=', untouched).execute()).toEqual([]);
    // Positions close the gap.
    expect((await stageRows(t.db, pipeline.id)).map((s) => `${s.position}:${s.name}`)).toEqual(['1:Open B', '2:Won', '3:Lost']);
  });

  it('keeps at least one stage in a pipeline', async () => {
    const pipeline = await createPipeline(t.db, { stages: [{ name: 'Only', type: 'open' }] });
    const res = await t.call({ method: 'DELETE', url: `/service/stages/${pipeline.stages[0]!.id}` });
    expect(res.statusCode).toBe(409);
    expect(await stageRows(t.db, pipeline.id)).toHaveLength(1);
  });

  it('reorders stages when order[] names each stage of the pipeline exactly once', async () => {
    const pipeline = await createPipeline(t.db);
    const [a, b, won, lost] = pipeline.stages.map((s) => s.id);
    const res = await t.call({
      method: 'POST',
      url: `/service/pipelines/${pipeline.id}/stages/reorder`,
      headers: FORM,
      payload: `order[]=${b}&order[]=${a}&order[]=${lost}&order[]=${won}`,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().pipeline.stages.map((s: { id: number; position: number }) => [s.id, s.position])).toEqual([
      [b, 1], [a, 2], [lost, 3], [won, 4],
    ]);
    const listed = await t.call({ method: 'GET', url: `/service/stages?pipeline=${pipeline.id}` });
    expect(listed.json().stages.map((s: { id: number }) => s.id)).toEqual([b, a, lost, won]);

    const other = await createPipeline(t.db);
    const bad = [[a, b, won], [a, a, b, won, lost].slice(0, 4), [a, b, won, other.stages[0]!.id], [a, b, won, lost, 999999]];
    for (const order of bad) {
      const refused = await t.call({ method: 'POST', url: `/service/pipelines/${pipeline.id}/stages/reorder`, payload: { order } });
      expect(refused.statusCode, JSON.stringify(order)).toBe(422);
      expect(Object.keys(refused.json().errors[0].details)).toEqual(['order']);
    }
    expect((await stageRows(t.db, pipeline.id)).map((s) => s.id)).toEqual([b, a, lost, won]);
  });
});
