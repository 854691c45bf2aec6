import { describe, expect, it } from 'vitest';
import { setupApp, type TestContext } from './helpers/app.js';
import { createContact, createDeal, createPipeline, createRole, createUser, defaultPipeline } from './helpers/factories.js';

/** Contract rules that cut across the deal routes: events of batch moves, no-op moves, committee permissions, hidden parts, Location. */

const eventsOf = (t: TestContext, dealId: number) =>
  t.db.selectFrom('event_outbox').select(['event', 'sequence']).where('deal_id', '=', dealId).orderBy('sequence').execute();

describe('deal rules across routes', () => {
  it('a batch move_stage to a won stage records deal.stage_changed and service.deal.won for each deal', async () => {
    const t = await setupApp();
    const sales = await defaultPipeline(t.db);
    const won = sales.stages.find((stage) => stage.type === 'won')!;
    const deals = [await createDeal(t.db), await createDeal(t.db)];
    const res = await t.call({ method: 'POST', url: '/service/deals/batch', payload: { ids: deals.map((d) => d.id), action: 'move_stage', stage_id: won.id } });
    expect(res.json()).toMatchObject({ succeeded: 2, failed: 0 });
    for (const deal of deals) {
      expect((await eventsOf(t, deal.id)).map((e) => e.event)).toEqual(['service.deal.created', 'deal.stage_changed', 'service.deal.won']);
    }
  });

  it('moving a deal to the stage it is in, by update or batch, changes nothing and records nothing', async () => {
    const t = await setupApp();
    const sales = await defaultPipeline(t.db);
    const { id } = await createDeal(t.db);
    const before = await eventsOf(t, id);
    const patched = await t.call({ method: 'PATCH', url: `/service/${id}`, payload: { deal: { stage: sales.stages[0]!.id } } });
    expect(patched.statusCode).toBe(200);
    const batch = await t.call({ method: 'POST', url: '/service/deals/batch', payload: { ids: [id], action: 'move_stage', stage_id: sales.stages[0]!.id } });
    expect(batch.json()).toMatchObject({ succeeded: 1 });
    expect(await eventsOf(t, id)).toEqual(before);
    const history = await t.call({ method: 'GET', url: `/service/${id}/history` });
    expect(history.json().history).toHaveLength(1); // only the creation entry
  });

  it('the buying committee needs edit permission on the deal: edit-own cannot change others\' committees', async () => {
    const t = await setupApp();
    const seller = await createUser(t.db, ['service:deals:viewown', 'service:deals:viewother', 'service:deals:editown']);
    const contact = await createContact(t.db);
    const theirs = await createDeal(t.db, { ownerId: 1 });
    const mine = await createDeal(t.db, { ownerId: seller.id });
    expect((await t.call({ method: 'POST', url: `/service/${theirs.id}/contacts`, payload: { contact_id: contact.id } }, seller)).statusCode).toBe(403);
    expect((await t.call({ method: 'POST', url: `/service/${mine.id}/contacts`, payload: { contact_id: contact.id } }, seller)).statusCode).toBe(200);
    await t.call({ method: 'POST', url: `/service/${theirs.id}/contacts`, payload: { contact_id: contact.id } });
    expect((await t.call({ method: 'DELETE', url: `/service/${theirs.id}/contacts/${contact.id}` }, seller)).statusCode).toBe(403);
    expect((await t.call({ method: 'DELETE', url: `/service/${mine.id}/contacts/${contact.id}` }, seller)).statusCode).toBe(200);
  });

  it('the parts of a deal in a hidden pipeline are hidden too: history, a note, a task are 403', async () => {
    const t = await setupApp();
    const insiders = await createRole(t.db, ['service:deals:viewother']);
    const hidden = await createPipeline(t.db, { roleIds: [insiders.id] });
    const { id } = await createDeal(t.db, { pipelineId: hidden.id });
    const note = (await t.call({ method: 'POST', url: `/service/${id}/notes`, payload: { note: { body: 'secret plan' } } })).json().note;
    const task = (await t.call({ method: 'POST', url: `/service/${id}/tasks`, payload: { task: { title: 'secret task' } } })).json().task;
    const outsider = await createUser(t.db, ['service:deals:viewother', 'service:deals:editother']);
    for (const url of [`/service/${id}/history`, `/service/notes/${note.id}`, `/service/tasks/${task.id}`, `/service/${id}/view`]) {
      const res = await t.call({ method: 'GET', url }, outsider);
      expect(res.statusCode, url).toBe(403);
      expect(res.body).not.toContain('secret');
    }
  });

  it('creates of pipelines and stages send Location', async () => {
    const t = await setupApp();
    const pipeline = await t.call({ method: 'POST', url: '/service/pipelines/new', payload: { pipeline: { name: 'Partners' }, stages: [{ name: 'Lead' }] } });
    expect(pipeline.headers.location).toBe(`http://service.test/service/pipelines/${pipeline.json().pipeline.id}`);
    const stage = await t.call({ method: 'POST', url: `/service/pipelines/${pipeline.json().pipeline.id}/stages/new`, payload: { stage: { name: 'Signed', type: 'won' } } });
    expect(stage.headers.location).toBe(`http://service.test/service/stages/${stage.json().stage.id}`);
  });
});
