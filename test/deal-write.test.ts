import { describe, expect, it } from 'vitest';
import { addContactInTransaction } from '../src/domain/deals/committee.service.js';
import { createDealsInTransaction, updateDealInTransaction } from '../src/domain/deals/deals.service.js';
import { setupApp } from './helpers/app.js';
import { createContact, createPipeline, defaultPipeline } from './helpers/factories.js';

/** The in-transaction write functions that inbound webhooks build on. */
describe('deal writes inside a transaction', () => {
  const inbound = { changedBy: { id: null, name: 'Form X' }, source: { id: '00000000-0000-4000-8000-000000000001', name: 'Form X' } };

  it('creates in the default pipeline first stage with a created event carrying source', async () => {
    const t = await setupApp();
    const sales = await defaultPipeline(t.db);
    const { id } = await t.db.transaction().execute((trx) => createDealsInTransaction(trx, [{ ctx: inbound, input: { title: 'From form', amount: '10.5', currency: 'USD' } }]).then(([created]) => created!));
    const deal = await t.db.selectFrom('deals').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(deal).toMatchObject({ pipeline_id: sales.id, stage_id: sales.stages[0]!.id, status: 'open', amount: '10.50', owner_id: null, created_by_id: null });
    const events = await t.db.selectFrom('event_outbox').select(['event', 'sequence', 'payload']).where('deal_id', '=', id).execute();
    expect(events.map((e) => e.event)).toEqual(['service.deal.created']);
    expect(events[0]!.payload).toMatchObject({ sequence: 1, changed_by: { id: null, name: 'Form X' }, source: inbound.source, deal: { id, amount: 10.5 } });
  });

  it('updates with changes only when something changed; a stage inside is a stage move', async () => {
    const t = await setupApp();
    const p = await createPipeline(t.db);
    const { id } = await t.db.transaction().execute((trx) => createDealsInTransaction(trx, [{ ctx: inbound, input: { title: 'A', currency: 'USD', pipelineId: p.id } }]).then(([created]) => created!));
    const same = await t.db.transaction().execute((trx) => updateDealInTransaction(trx, inbound, id, { title: 'A' }));
    expect(same.changed).toBe(false);
    const moved = await t.db.transaction().execute((trx) => updateDealInTransaction(trx, inbound, id, { title: 'B', stageId: p.stages[2]!.id }));
    expect(moved.changed).toBe(true);
    const events = await t.db.selectFrom('event_outbox').select(['event', 'payload']).where('deal_id', '=', id).orderBy('sequence').execute();
    expect(events.map((e) => e.event)).toEqual(['service.deal.created', 'service.deal.updated', 'deal.stage_changed', 'service.deal.won']);
    expect(events[1]!.payload).toMatchObject({ changes: { title: { from: 'A', to: 'B' } }, source: inbound.source });
    expect(events[2]!.payload).toMatchObject({ previous_stage: { id: p.stages[0]!.id, type: 'open' }, deal: { status: 'won' } });
  });

  it('adds a contact once (contact_added once), primary if none', async () => {
    const t = await setupApp();
    const contact = await createContact(t.db);
    const { id } = await t.db.transaction().execute((trx) => createDealsInTransaction(trx, [{ ctx: inbound, input: { title: 'C', currency: 'USD' } }]).then(([created]) => created!));
    const first = await t.db.transaction().execute((trx) => addContactInTransaction(trx, inbound, id, { contactId: contact.id, primaryIfNone: true }));
    const again = await t.db.transaction().execute((trx) => addContactInTransaction(trx, inbound, id, { contactId: contact.id, role: 'Buyer' }));
    expect([first.added, again.added]).toEqual([true, false]);
    const member = await t.db.selectFrom('deal_contacts').selectAll().where('deal_id', '=', id).executeTakeFirstOrThrow();
    expect(member).toMatchObject({ contact_id: contact.id, is_primary: true, role: 'Buyer' });
    const events = await t.db.selectFrom('event_outbox').select('event').where('deal_id', '=', id).execute();
    expect(events.map((e) => e.event)).toEqual(['service.deal.created', 'service.deal.contact_added']);
  });
});
