import { describe, expect, it } from 'vitest';
import { setupApp } from './helpers/app.js';
import { createDeal, createPipeline, createRole, createUser, defaultPipeline } from './helpers/factories.js';

describe('deal permissions and visibility', () => {
  it('a view-own user lists and reads only the deals they own or created', async () => {
    const t = await setupApp();
    const viewer = await createUser(t.db, ['service:deals:viewown']);
    const owned = await createDeal(t.db, { ownerId: viewer.id });
    const created = await createDeal(t.db, { createdById: viewer.id, ownerId: 1 });
    const others = await createDeal(t.db, { ownerId: 1 });

    const res = await t.call({ method: 'GET', url: '/service/deals' }, viewer);
    expect(res.statusCode).toBe(200);
    expect(res.json().deals.map((d: { id: number }) => d.id)).toEqual([owned.id, created.id]);
    expect(res.json().total).toBe(2);
    expect((await t.call({ method: 'GET', url: '/service/deals?search=Deal' }, viewer)).json().total).toBe(2);

    expect((await t.call({ method: 'GET', url: `/service/${owned.id}/view` }, viewer)).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: `/service/${created.id}/history` }, viewer)).statusCode).toBe(200);
    const forbidden = await t.call({ method: 'GET', url: `/service/${others.id}/view` }, viewer);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().errors[0].type).toBe('forbidden');
    expect((await t.call({ method: 'GET', url: `/service/${others.id}/history` }, viewer)).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: '/service/999999/view' }, viewer)).statusCode).toBe(404);
  });

  it('writing a deal also needs viewing it: edit-other without view-other cannot change (or read back) others\' deals', async () => {
    const t = await setupApp();
    const editor = await createUser(t.db, ['service:deals:viewown', 'service:deals:editother', 'service:deals:deleteother']);
    const others = await createDeal(t.db, { ownerId: 1 });
    const mine = await createDeal(t.db, { ownerId: editor.id });
    const patch = await t.call({ method: 'PATCH', url: `/service/${others.id}`, payload: { deal: {} } }, editor);
    expect(patch.statusCode).toBe(403);
    expect(patch.body).not.toContain('"contacts"');
    expect((await t.call({ method: 'POST', url: `/service/${others.id}/notes`, payload: { note: { body: 'hi' } } }, editor)).statusCode).toBe(403);
    expect((await t.call({ method: 'DELETE', url: `/service/${others.id}` }, editor)).statusCode).toBe(403);
    expect((await t.call({ method: 'PATCH', url: `/service/${mine.id}`, payload: { deal: { title: 'Mine, renamed' } } }, editor)).json().deal.title).toBe('Mine, renamed');
  });

  it('a caller without any deal permission gets 403', async () => {
    const t = await setupApp();
    const nobody = await createUser(t.db, ['service:pipelines:view']);
    const { id } = await createDeal(t.db);
    expect((await t.call({ method: 'GET', url: '/service/deals' }, nobody)).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `/service/${id}/view` }, nobody)).statusCode).toBe(403);
    expect((await t.call({ method: 'POST', url: '/service/deals/new', payload: { deal: { title: 'x' } } }, nobody)).statusCode).toBe(403);
  });

  it('a hidden pipeline hides its deals (403 on read, absent from lists) and cannot be written into', async () => {
    const t = await setupApp();
    const insiders = await createRole(t.db, ['service:deals:viewother']);
    const hidden = await createPipeline(t.db, { roleIds: [insiders.id] });
    const outsider = await createUser(t.db, [
      'service:deals:viewother',
      'service:deals:editother',
      'service:deals:create',
      'service:deals:deleteother',
    ]);
    const insider = await createUser(t.db, [], { roleId: insiders.id });
    const secret = await createDeal(t.db, { pipelineId: hidden.id, title: 'Secret' });
    const visible = await createDeal(t.db, { title: 'Visible' });

    const list = (await t.call({ method: 'GET', url: '/service/deals' }, outsider)).json();
    expect(list.deals.map((d: { id: number }) => d.id)).toEqual([visible.id]);
    expect(list.total).toBe(1);
    expect((await t.call({ method: 'GET', url: `/service/deals?pipeline=${hidden.id}` }, outsider)).json().total).toBe(0);
    expect((await t.call({ method: 'GET', url: `/service/${secret.id}/view` }, outsider)).statusCode).toBe(403);
    expect((await t.call({ method: 'PATCH', url: `/service/${secret.id}`, payload: { deal: { title: 'x' } } }, outsider)).statusCode).toBe(403);
    expect((await t.call({ method: 'DELETE', url: `/service/${secret.id}` }, outsider)).statusCode).toBe(403);

    const createIn = await t.call({ method: 'POST', url: '/service/deals/new', payload: { deal: { title: 'x', pipeline: hidden.id } } }, outsider);
    expect(createIn.statusCode).toBe(422);
    expect(createIn.json().errors[0].details).toHaveProperty('deal[pipeline]');
    const moveIn = await t.call({ method: 'POST', url: `/service/${visible.id}/stage`, payload: { stage_id: hidden.stages[0]!.id } }, outsider);
    expect(moveIn.statusCode).toBe(422);

    expect((await t.call({ method: 'GET', url: `/service/${secret.id}/view` }, insider)).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: '/service/deals' }, insider)).json().total).toBe(2);
  });

  it('edit and delete follow own/other', async () => {
    const t = await setupApp();
    const user = await createUser(t.db, ['service:deals:viewown', 'service:deals:editown', 'service:deals:deleteown']);
    const mine = await createDeal(t.db, { ownerId: user.id });
    const theirs = await createDeal(t.db);
    const sales = await defaultPipeline(t.db);

    expect((await t.call({ method: 'POST', url: `/service/${mine.id}/edit`, payload: { deal: { title: 'Mine' } } }, user)).statusCode).toBe(200);
    expect((await t.call({ method: 'POST', url: `/service/${theirs.id}/edit`, payload: { deal: { title: 'No' } } }, user)).statusCode).toBe(403);
    expect((await t.call({ method: 'POST', url: `/service/${theirs.id}/inline`, payload: { field: 'title', value: 'No' } }, user)).statusCode).toBe(403);
    expect((await t.call({ method: 'POST', url: `/service/${theirs.id}/stage`, payload: { stage_id: sales.stages[1]!.id } }, user)).statusCode).toBe(403);
    expect((await t.call({ method: 'POST', url: `/service/${theirs.id}/notes`, payload: { note: { body: 'hi' } } }, user)).statusCode).toBe(403);
    expect((await t.call({ method: 'POST', url: `/service/${theirs.id}/tasks`, payload: { task: { title: 'hi' } } }, user)).statusCode).toBe(403);
    expect((await t.call({ method: 'DELETE', url: `/service/${theirs.id}` }, user)).statusCode).toBe(403);
    expect((await t.call({ method: 'DELETE', url: `/service/${mine.id}` }, user)).statusCode).toBe(200);

    const title = await t.db.selectFrom('deals').select('title').where('id', '=', theirs.id).executeTakeFirstOrThrow();
    expect(title.title).not.toBe('No');

    const viewer = await createUser(t.db, ['service:deals:viewother']);
    expect((await t.call({ method: 'POST', url: `/service/${theirs.id}/edit`, payload: { deal: { title: 'x' } } }, viewer)).statusCode).toBe(403);
  });

  it('checks every batch item on its own and reports a partial failure', async () => {
    const t = await setupApp();
    const user = await createUser(t.db, ['service:deals:viewown', 'service:deals:editown']);
    const other = await createUser(t.db, []);
    const mine = await createDeal(t.db, { ownerId: user.id, createdById: user.id });
    const theirs = await createDeal(t.db);

    const res = await t.call(
      { method: 'POST', url: '/service/deals/batch', payload: `ids[]=${mine.id}&ids[]=${theirs.id}&ids[]=999999&action=reassign&owner=${other.id}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      user,
    );
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      action: 'reassign',
      succeeded: 1,
      failed: 2,
      results: [
        { id: mine.id, ok: true },
        { id: theirs.id, ok: false, error: { code: 403, type: 'forbidden' } },
        { id: 999999, ok: false, error: { code: 404, type: 'not_found' } },
      ],
    });
    const owners = await t.db.selectFrom('deals').select(['id', 'owner_id']).where('id', 'in', [mine.id, theirs.id]).orderBy('id').execute();
    expect(owners).toEqual([
      { id: mine.id, owner_id: other.id },
      { id: theirs.id, owner_id: 1 },
    ]);

    const deleteDenied = await t.call({ method: 'POST', url: '/service/deals/batch', payload: { ids: [mine.id], action: 'delete' } }, user);
    expect(deleteDenied.json()).toMatchObject({ succeeded: 0, failed: 1, results: [{ id: mine.id, ok: false, error: { code: 403 } }] });
  });

  it('moves and deletes in batch; a request invalid as a whole is 422 and changes nothing', async () => {
    const t = await setupApp();
    const p = await createPipeline(t.db);
    const a = await createDeal(t.db, { pipelineId: p.id });
    const b = await createDeal(t.db, { pipelineId: p.id });

    for (const payload of [
      { ids: [a.id], action: 'reassign' },
      { ids: [a.id], action: 'reassign', owner: 999999 },
      { ids: [a.id], action: 'move_stage' },
      { ids: [a.id], action: 'archive' },
      { ids: [], action: 'delete' },
      { ids: Array.from({ length: 201 }, (_, i) => i + 1), action: 'delete' },
    ]) {
      const res = await t.call({ method: 'POST', url: '/service/deals/batch', payload });
      expect(res.statusCode, JSON.stringify(payload).slice(0, 60)).toBe(422);
    }
    const missingOwner = await t.call({ method: 'POST', url: '/service/deals/batch', payload: { ids: [a.id], action: 'reassign' } });
    expect(missingOwner.json().errors[0].details).toHaveProperty('owner');

    const moved = await t.call({ method: 'POST', url: '/service/deals/batch', payload: { ids: [a.id, b.id], action: 'move_stage', stage_id: p.stages[2]!.id } });
    expect(moved.json()).toMatchObject({ succeeded: 2, failed: 0 });
    const statuses = await t.db.selectFrom('deals').select('status').where('id', 'in', [a.id, b.id]).execute();
    expect(statuses.map((s) => s.status)).toEqual(['won', 'won']);

    const deleted = await t.call({ method: 'POST', url: '/service/deals/batch', payload: { ids: [a.id, a.id, b.id], action: 'delete' } });
    expect(deleted.json()).toMatchObject({ action: 'delete', succeeded: 2, failed: 0 });
    expect(await t.db.selectFrom('deals').select('id').where('id', 'in', [a.id, b.id]).execute()).toEqual([]);
  });
});
