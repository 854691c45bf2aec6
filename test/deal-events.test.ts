import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createDealsInTransaction } from '../src/domain/deals/deals.service.js';
import { setupApp, type TestContext } from './helpers/app.js';
import { createContact, createPipeline, createUser } from './helpers/factories.js';

interface Outbox {
  event: string;
  sequence: number;
  payload: Record<string, unknown>;
}

const events = (t: TestContext, dealId: number): Promise<Outbox[]> =>
  t.db.selectFrom('event_outbox').select(['event', 'sequence', 'payload']).where('deal_id', '=', dealId).orderBy('sequence').execute() as Promise<Outbox[]>;

/** Events recorded since `seen` of them were read. */
async function newEvents(t: TestContext, dealId: number, seen: { n: number }) {
  const all = await events(t, dealId);
  const fresh = all.slice(seen.n);
  seen.n = all.length;
  return fresh;
}

const BASE_KEYS = ['changed_by', 'deal', 'event', 'id', 'sequence', 'timestamp'];

async function jobCount(t: TestContext): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from graphile_worker.jobs`.execute(t.db);
  return rows[0]!.n;
}

describe('recorded events', () => {
  it('records exactly the contract events, with their payload fields, for each operation', async () => {
    const t = await setupApp();
    const p = await createPipeline(t.db);
    const [, openB, won, lost] = p.stages;
    const bob = await createUser(t.db, [], { name: 'Bob' });
    const contact = await createContact(t.db, { email: 'ann@acme.test' });
    const seen = { n: 0 };

    const created = await t.call({
      method: 'POST',
      url: '/service/deals/new',
      payload: { deal: { title: 'Acme', amount: '1500.50', pipeline: p.id, closeDate: '2026-12-31' } },
    });
    const id: number = created.json().deal.id;
    const [createdEvent, ...restCreate] = await newEvents(t, id, seen);
    expect(restCreate).toEqual([]);
    expect(createdEvent!.event).toBe('service.deal.created');
    expect(Object.keys(createdEvent!.payload).sort()).toEqual(BASE_KEYS);
    expect(createdEvent!.payload).toMatchObject({
      event: 'service.deal.created',
      sequence: 1,
      deal: {
        id,
        title: 'Acme',
        amount: 1500.5,
        currency: 'USD',
        status: 'open',
        stage: { id: p.stages[0]!.id, name: 'Open A', type: 'open' },
        pipeline: { id: p.id, name: p.name },
        owner: { id: 1, name: 'Administrator' },
        closeDate: '2026-12-31',
      },
      changed_by: { id: 1, name: 'Administrator' },
    });
    expect(createdEvent!.payload.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(createdEvent!.payload.timestamp).toMatch(/Z$/);

    await t.call({ method: 'POST', url: `/service/${id}/edit`, payload: { deal: { title: 'Acme' } } });
    expect(await newEvents(t, id, seen)).toEqual([]);

    await t.call({ method: 'POST', url: `/service/${id}/edit`, payload: { deal: { title: 'Acme 2', amount: '0.3' } } });
    const [updated] = await newEvents(t, id, seen);
    expect(updated!.event).toBe('service.deal.updated');
    expect(Object.keys(updated!.payload).sort()).toEqual([...BASE_KEYS, 'changes'].sort());
    expect(updated!.payload.changes).toEqual({ title: { from: 'Acme', to: 'Acme 2' }, amount: { from: 1500.5, to: 0.3 } });

    await t.call({ method: 'POST', url: `/service/${id}/inline`, payload: { field: 'owner', value: bob.id } });
    expect((await newEvents(t, id, seen)).map((e) => [e.event, e.payload.changes])).toEqual([
      ['service.deal.updated', { owner: { from: 1, to: bob.id } }],
    ]);

    await t.call({ method: 'POST', url: '/service/deals/batch', payload: { ids: [id], action: 'reassign', owner: 1 } });
    expect((await newEvents(t, id, seen)).map((e) => [e.event, e.payload.changes])).toEqual([
      ['service.deal.updated', { owner: { from: bob.id, to: 1 } }],
    ]);

    await t.call({ method: 'POST', url: `/service/${id}/stage`, payload: { stage_id: openB!.id } });
    const toOpen = await newEvents(t, id, seen);
    expect(toOpen.map((e) => e.event)).toEqual(['deal.stage_changed']);
    expect(Object.keys(toOpen[0]!.payload).sort()).toEqual([...BASE_KEYS, 'previous_stage'].sort());
    expect(toOpen[0]!.payload.previous_stage).toEqual({ id: p.stages[0]!.id, name: 'Open A', type: 'open' });

    await t.call({ method: 'POST', url: `/service/${id}/stage`, payload: { stage_id: won!.id } });
    const toWon = await newEvents(t, id, seen);
    expect(toWon.map((e) => e.event)).toEqual(['deal.stage_changed', 'service.deal.won']);
    for (const e of toWon) {
      expect(e.payload.previous_stage).toEqual({ id: openB!.id, name: 'Open B', type: 'open' });
      expect(e.payload.deal).toMatchObject({ status: 'won', stage: { id: won!.id, type: 'won' } });
    }

    await t.call({ method: 'POST', url: `/service/${id}/stage`, payload: { stage_id: lost!.id } });
    expect((await newEvents(t, id, seen)).map((e) => e.event)).toEqual(['deal.stage_changed', 'service.deal.lost']);

    await t.call({ method: 'PATCH', url: `/service/${id}`, payload: { deal: { stage: p.stages[0]!.id, title: 'Revived' } } });
    expect((await newEvents(t, id, seen)).map((e) => e.event)).toEqual(['service.deal.updated', 'deal.stage_changed']);

    await t.call({ method: 'POST', url: `/service/${id}/contacts`, payload: { contact_id: contact.id, role: 'Champion', is_primary: true } });
    const [added] = await newEvents(t, id, seen);
    expect(added!.event).toBe('service.deal.contact_added');
    expect(added!.payload.contact).toEqual({
      id: contact.id,
      email: 'ann@acme.test',
      first_name: 'Ann',
      last_name: 'Lee',
      company: 'Acme',
      role: 'Champion',
      is_primary: true,
    });
    await t.call({ method: 'POST', url: `/service/${id}/contacts`, payload: { contact_id: contact.id, role: 'Buyer' } });
    expect(await newEvents(t, id, seen)).toEqual([]);
    await t.call({ method: 'DELETE', url: `/service/${id}/contacts/${contact.id}` });
    expect(await newEvents(t, id, seen)).toEqual([]);

    const note = (await t.call({ method: 'POST', url: `/service/${id}/notes`, payload: { note: { body: '<p>Called</p>' } } })).json().note;
    const [noteAdded] = await newEvents(t, id, seen);
    expect(noteAdded!.event).toBe('service.deal.note_added');
    expect(noteAdded!.payload.note).toMatchObject({ id: note.id, body: '<p>Called</p>', author: { id: 1, name: 'Administrator' } });

    const task = (await t.call({ method: 'POST', url: `/service/${id}/tasks`, payload: { task: { title: 'Send quote' } } })).json().task;
    expect(await newEvents(t, id, seen)).toEqual([]);
    await t.call({ method: 'POST', url: `/service/tasks/${task.id}/complete` });
    const [completed] = await newEvents(t, id, seen);
    expect(completed!.event).toBe('service.deal.task_completed');
    expect(completed!.payload.task).toMatchObject({ id: task.id, title: 'Send quote', isCompleted: true });
    await t.call({ method: 'POST', url: `/service/tasks/${task.id}/complete` });
    expect(await newEvents(t, id, seen)).toEqual([]);

    await t.call({ method: 'DELETE', url: `/service/${id}` });
    const [deleted] = await newEvents(t, id, seen);
    expect(deleted!.event).toBe('service.deal.deleted');
    expect(deleted!.payload.deal).toMatchObject({ id, title: 'Revived' });

    const sequences = (await events(t, id)).map((e) => e.sequence);
    expect(sequences).toEqual(sequences.map((_, i) => i + 1));
    // Every event is queued for delivery: each id is in exactly one deliver_event job.
    const { rows: queued } = await sql<{ id: string }>`
      select queued.id from graphile_worker._private_jobs j
      cross join json_array_elements_text(j.payload->'eventIds') as queued (id)`.execute(t.db);
    const outbox = await t.db.selectFrom('event_outbox').select('id').execute();
    expect(queued.map((row) => row.id).sort()).toEqual(outbox.map((row) => row.id).sort());
  });

  it('a rolled-back operation leaves no event and no delivery job', async () => {
    const t = await setupApp();
    // Fail at COMMIT, after the operation has written its deal rows and outbox events.
    await sql`
      create function refuse_doomed() returns trigger language plpgsql as $$
      begin raise exception 'doomed'; end $$;
      create constraint trigger doomed after insert on event_outbox deferrable initially deferred
        for each row when (new.payload -> 'deal' ->> 'title' = 'Doomed') execute function refuse_doomed();
    `.execute(t.db);
    const outboxBefore = (await t.db.selectFrom('event_outbox').select('id').execute()).length;
    const jobsBefore = await jobCount(t);

    const res = await t.call({ method: 'POST', url: '/service/deals/new', payload: { deal: { title: 'Doomed' } } });
    expect(res.statusCode).toBe(500);
    expect(await t.db.selectFrom('deals').select('id').where('title', '=', 'Doomed').execute()).toEqual([]);

    const kept = (await t.call({ method: 'POST', url: '/service/deals/new', payload: { deal: { title: 'Kept' } } })).json().deal;
    const rename = await t.call({ method: 'POST', url: `/service/${kept.id}/edit`, payload: { deal: { title: 'Doomed' } } });
    expect(rename.statusCode).toBe(500);

    await expect(
      t.db.transaction().execute(async (trx) => {
        await createDealsInTransaction(trx, [{ ctx: { changedBy: { id: null, name: 'Inbound' } }, input: { title: 'Inside', currency: 'USD' } }]);
        throw new Error('caller failed after the create');
      }),
    ).rejects.toThrow('caller failed');

    const outbox = await t.db.selectFrom('event_outbox').select(['event', 'deal_id']).execute();
    expect(outbox).toHaveLength(outboxBefore + 1);
    expect(outbox.map((e) => [e.event, e.deal_id])).toEqual([['service.deal.created', kept.id]]);
    expect(await jobCount(t)).toBe(jobsBefore + 1);
    expect((await t.db.selectFrom('deals').select('title').where('id', '=', kept.id).executeTakeFirstOrThrow()).title).toBe('Kept');
  });
});
