import type { PoolClient } from 'pg';
import { describe, expect, it } from 'vitest';
import { setupApp } from './helpers/app.js';
import { createContact, createDeal, createPipeline, createUser, defaultPipeline } from './helpers/factories.js';

const form = { 'content-type': 'application/x-www-form-urlencoded' };

describe('create and update deals', () => {
  it('creates from a form body with bracket names, with the contract defaults and Location', async () => {
    const t = await setupApp();
    const sales = await defaultPipeline(t.db);
    const res = await t.call({
      method: 'POST',
      url: '/service/deals/new',
      payload: 'deal[title]=Acme+renewal&deal[amount]=1500.5&deal[closeDate]=2026-12-31',
      headers: form,
    });
    expect(res.statusCode).toBe(200);
    const { deal } = res.json();
    expect(res.headers.location).toBe(`http://service.test/service/${deal.id}/view`);
    expect(deal).toMatchObject({
      title: 'Acme renewal',
      amount: 1500.5,
      currency: 'USD',
      status: 'open',
      closeDate: '2026-12-31',
      owner: { id: 1, name: 'Administrator' },
      createdBy: { id: 1, name: 'Administrator' },
      pipeline: { id: sales.id, name: 'Sales' },
      stage: { id: sales.stages[0]!.id, name: 'Qualification', type: 'open', position: 1, probability: 10 },
      customFields: {},
      source: null,
      lostReason: null,
      wonAt: null,
      lostAt: null,
      contacts: [],
      notes: [],
      tasks: [],
    });
    expect(deal.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('creates from JSON; a stage alone implies its pipeline and sets the status from its type', async () => {
    const t = await setupApp();
    const p = await createPipeline(t.db);
    const won = p.stages.find((s) => s.type === 'won')!;
    const res = await t.call({ method: 'POST', url: '/service/deals/new', payload: { deal: { title: 'Big', stage: won.id, currency: 'eur' } } });
    expect(res.statusCode).toBe(200);
    expect(res.json().deal).toMatchObject({ pipeline: { id: p.id }, stage: { id: won.id }, status: 'won', currency: 'EUR' });
    expect(res.json().deal.wonAt).not.toBeNull();
  });

  it('uses the first stage of a given pipeline and refuses a stage of another pipeline', async () => {
    const t = await setupApp();
    const p = await createPipeline(t.db);
    const sales = await defaultPipeline(t.db);
    const first = await t.call({ method: 'POST', url: '/service/deals/new', payload: { deal: { title: 'A', pipeline: p.id } } });
    expect(first.json().deal.stage.id).toBe(p.stages[0]!.id);
    const mismatch = await t.call({
      method: 'POST',
      url: '/service/deals/new',
      payload: { deal: { title: 'B', pipeline: p.id, stage: sales.stages[1]!.id } },
    });
    expect(mismatch.statusCode).toBe(422);
    expect(Object.keys(mismatch.json().errors[0].details)).toEqual(['deal[stage]']);
  });

  it('names each invalid input as sent', async () => {
    const t = await setupApp();
    const res = await t.call({
      method: 'POST',
      url: '/service/deals/new',
      payload: 'deal[amount]=abc&deal[closeDate]=2026-02-30&deal[currency]=XYZ&deal[owner]=999',
      headers: form,
    });
    expect(res.statusCode).toBe(422);
    const details = res.json().errors[0].details;
    expect(Object.keys(details).sort()).toEqual(['deal[amount]', 'deal[closeDate]', 'deal[currency]', 'deal[title]']);
    const owner = await t.call({ method: 'POST', url: '/service/deals/new', payload: { deal: { title: 'X', owner: 999 } } });
    expect(owner.statusCode).toBe(422);
    expect(owner.json().errors[0].details).toEqual({ 'deal[owner]': ['Unknown user'] });
  });

  it('refuses the impossible date 2026-02-30 with 422', async () => {
    const t = await setupApp();
    const res = await t.call({ method: 'POST', url: '/service/deals/new', payload: { deal: { title: 'X', closeDate: '2026-02-30' } } });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].details['deal[closeDate]']).toBeDefined();
  });

  it('keeps amounts NUMERIC: 0.1 + 0.2 is stored and summed as 0.30', async () => {
    const t = await setupApp();
    const a = await t.call({ method: 'POST', url: '/service/deals/new', payload: { deal: { title: 'A', amount: 0.1 } } });
    const b = await t.call({ method: 'POST', url: '/service/deals/new', payload: 'deal[title]=B&deal[amount]=0.2', headers: form });
    expect([a.json().deal.amount, b.json().deal.amount]).toEqual([0.1, 0.2]);
    const sum = await t.db
      .selectFrom('deals')
      .select((eb) => eb.fn.sum<string>('amount').as('total'))
      .where('id', 'in', [a.json().deal.id, b.json().deal.id])
      .executeTakeFirstOrThrow();
    expect(sum.total).toBe('0.30');
    const big = await t.call({ method: 'POST', url: '/service/deals/new', payload: { deal: { title: 'C', amount: '9999999999999.99' } } });
    expect(big.json().deal.amount).toBe(9999999999999.99);
    const type = await t.db
      .selectFrom('information_schema.columns' as never)
      .select(['data_type' as never])
      .where('table_name' as never, '=', 'deals' as never)
      .where('column_name' as never, '=', 'amount' as never)
      .executeTakeFirstOrThrow();
    expect(type).toEqual({ data_type: 'numeric' });
  });

  it('updates only the fields sent, by POST …/edit (form) and PATCH (JSON)', async () => {
    const t = await setupApp();
    const other = await createUser(t.db, []);
    const { id } = await createDeal(t.db, { title: 'Old', amount: '10', closeDate: '2026-01-01' });
    const edit = await t.call({ method: 'POST', url: `/service/${id}/edit`, payload: `deal[title]=New&deal[owner]=${other.id}`, headers: form });
    expect(edit.statusCode).toBe(200);
    expect(edit.json().deal).toMatchObject({ title: 'New', amount: 10, closeDate: '2026-01-01', owner: { id: other.id } });
    const patch = await t.call({ method: 'PATCH', url: `/service/${id}`, payload: { deal: { closeDate: null, amount: '12.34' } } });
    expect(patch.json().deal).toMatchObject({ title: 'New', amount: 12.34, closeDate: null });
    const clear = await t.call({ method: 'POST', url: `/service/${id}/edit`, payload: 'deal[owner]=', headers: form });
    expect(clear.json().deal.owner).toBeNull();
  });

  it('updates in place with the stored, typed value', async () => {
    const t = await setupApp();
    const { id } = await createDeal(t.db, { title: 'Inline' });
    const amount = await t.call({ method: 'POST', url: `/service/${id}/inline`, payload: 'field=amount&value=1234.5', headers: form });
    expect(amount.json()).toEqual({ success: true, field: 'amount', value: 1234.5 });
    const title = await t.call({ method: 'POST', url: `/service/${id}/inline`, payload: { field: 'title', value: '  Trimmed ' } });
    expect(title.json()).toEqual({ success: true, field: 'title', value: 'Trimmed' });
    const owner = await t.call({ method: 'POST', url: `/service/${id}/inline`, payload: { field: 'owner', value: '' } });
    expect(owner.json()).toEqual({ success: true, field: 'owner', value: null });
    const unknownOwner = await t.call({ method: 'POST', url: `/service/${id}/inline`, payload: { field: 'owner', value: 999 } });
    expect(unknownOwner.statusCode).toBe(422);
    expect(unknownOwner.json().errors[0].details).toHaveProperty('value');
    const badField = await t.call({ method: 'POST', url: `/service/${id}/inline`, payload: { field: 'status', value: 'won' } });
    expect(badField.statusCode).toBe(422);
    expect(badField.json().errors[0].details).toHaveProperty('field');
    const badDate = await t.call({ method: 'POST', url: `/service/${id}/inline`, payload: { field: 'closeDate', value: '2026-02-30' } });
    expect(badDate.statusCode).toBe(422);
  });

  it('deletes by DELETE and by POST …/delete; a missing deal is 404; a non-numeric id is 404', async () => {
    const t = await setupApp();
    const a = await createDeal(t.db);
    const b = await createDeal(t.db);
    expect((await t.call({ method: 'DELETE', url: `/service/${a.id}` })).json()).toEqual({ success: true });
    expect((await t.call({ method: 'POST', url: `/service/${b.id}/delete` })).json()).toEqual({ success: true });
    expect((await t.call({ method: 'GET', url: `/service/${a.id}/view` })).statusCode).toBe(404);
    expect((await t.call({ method: 'DELETE', url: `/service/${a.id}` })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: '/service/abc/view' })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: '/service/0/view' })).statusCode).toBe(404);
  });
});

describe('view', () => {
  it('returns contacts, notes and tasks in ONE database round trip', async () => {
    const t = await setupApp();
    const { id } = await createDeal(t.db, { title: 'Full' });
    for (let i = 0; i < 3; i++) {
      const contact = await createContact(t.db);
      await t.call({ method: 'POST', url: `/service/${id}/contacts`, payload: { contact_id: contact.id, role: `R${i}`, is_primary: i === 1 } });
      await t.call({ method: 'POST', url: `/service/${id}/notes`, payload: { note: { body: `<p>n${i}</p>` } } });
      await t.call({ method: 'POST', url: `/service/${id}/tasks`, payload: { task: { title: `t${i}`, dueDate: `2026-0${i + 1}-01` } } });
    }

    // Count the statements pooled clients send while the view is served (auth is cached by now).
    const queries: string[] = [];
    const onAcquire = (client: PoolClient) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      client.query = ((...args: unknown[]) => {
        const first = args[0] as string | { text: string };
        queries.push(typeof first === 'string' ? first : first.text);
        return query(...args);
      }) as PoolClient['query'];
    };
    t.database.pool.on('acquire', onAcquire);
    const res = await t.call({ method: 'GET', url: `/service/${id}/view` });
    t.database.pool.off('acquire', onAcquire);

    expect(res.statusCode).toBe(200);
    const deal = res.json().deal;
    expect(deal.contacts).toHaveLength(3);
    expect(deal.contacts[0]).toMatchObject({ role: 'R1', is_primary: true, contact: { first_name: 'Ann' } });
    expect(deal.notes.map((n: { body: string }) => n.body)).toEqual(['<p>n2</p>', '<p>n1</p>', '<p>n0</p>']);
    expect(deal.tasks.map((task: { title: string }) => task.title)).toEqual(['t0', 't1', 't2']);
    expect(queries).toHaveLength(1);
  });
});
