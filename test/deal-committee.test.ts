import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { setupApp } from './helpers/app.js';
import { createContact, createDeal } from './helpers/factories.js';

describe('buying committee', () => {
  it('adds a host contact with role and primary flag (form body), and shows it on the deal', async () => {
    const t = await setupApp();
    const { id } = await createDeal(t.db);
    const contact = await createContact(t.db, { email: 'ann@acme.test', first_name: 'Ann', last_name: 'Lee', company: 'Acme' });
    const res = await t.call({
      method: 'POST',
      url: `/service/${id}/contacts`,
      payload: `contact_id=${contact.id}&role=Champion&is_primary=1`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(200);
    const member = {
      contact_id: contact.id,
      role: 'Champion',
      is_primary: true,
      deleted: false,
      contact: { id: contact.id, email: 'ann@acme.test', first_name: 'Ann', last_name: 'Lee', company: 'Acme' },
    };
    expect(res.json()).toEqual({ contact: member });
    expect((await t.call({ method: 'GET', url: `/service/${id}/view` })).json().deal.contacts).toEqual([member]);
  });

  it('refuses a contact that does not exist with 422', async () => {
    const t = await setupApp();
    const { id } = await createDeal(t.db);
    const res = await t.call({ method: 'POST', url: `/service/${id}/contacts`, payload: { contact_id: 424242 } });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].details).toEqual({ contact_id: ['Unknown contact'] });
    expect((await t.call({ method: 'POST', url: '/service/999999/contacts', payload: { contact_id: 1 } })).statusCode).toBe(404);
  });

  it('re-adding updates role and primary; a new primary replaces the old one', async () => {
    const t = await setupApp();
    const { id } = await createDeal(t.db);
    const a = await createContact(t.db);
    const b = await createContact(t.db);
    await t.call({ method: 'POST', url: `/service/${id}/contacts`, payload: { contact_id: a.id, role: 'User', is_primary: true } });
    await t.call({ method: 'POST', url: `/service/${id}/contacts`, payload: { contact_id: b.id, role: 'Buyer' } });
    const again = await t.call({ method: 'POST', url: `/service/${id}/contacts`, payload: { contact_id: b.id, is_primary: true } });
    expect(again.json().contact).toMatchObject({ contact_id: b.id, role: 'Buyer', is_primary: true });
    const rows = await t.db.selectFrom('deal_contacts').select(['contact_id', 'role', 'is_primary']).where('deal_id', '=', id).orderBy('contact_id').execute();
    expect(rows).toEqual([
      { contact_id: a.id, role: 'User', is_primary: false },
      { contact_id: b.id, role: 'Buyer', is_primary: true },
    ]);
    const cleared = await t.call({ method: 'POST', url: `/service/${id}/contacts`, payload: { contact_id: a.id, role: '' } });
    expect(cleared.json().contact).toMatchObject({ role: null, is_primary: false });
  });

  it('the database itself allows at most one primary per deal', async () => {
    const t = await setupApp();
    const { id } = await createDeal(t.db);
    const a = await createContact(t.db);
    const b = await createContact(t.db);
    await t.db.insertInto('deal_contacts').values({ deal_id: id, contact_id: a.id, is_primary: true }).execute();
    await expect(t.db.insertInto('deal_contacts').values({ deal_id: id, contact_id: b.id, is_primary: true }).execute()).rejects.toMatchObject({
      code: '23505',
    });
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from deal_contacts where deal_id = ${id} and is_primary`.execute(t.db);
    expect(rows[0]!.n).toBe(1);
  });

  it('concurrent primary adds leave exactly one primary', async () => {
    const t = await setupApp();
    const { id } = await createDeal(t.db);
    const contacts = await Promise.all(Array.from({ length: 6 }, () => createContact(t.db)));
    const answers = await Promise.all(
      contacts.map((c) => t.call({ method: 'POST', url: `/service/${id}/contacts`, payload: { contact_id: c.id, is_primary: true } })),
    );
    expect(answers.every((a) => a.statusCode === 200)).toBe(true);
    const primaries = await t.db.selectFrom('deal_contacts').select('contact_id').where('deal_id', '=', id).where('is_primary', '=', true).execute();
    expect(primaries).toHaveLength(1);
  });

  it('removes a member by DELETE and by POST …/remove; a non-member is 404', async () => {
    const t = await setupApp();
    const { id } = await createDeal(t.db);
    const a = await createContact(t.db);
    const b = await createContact(t.db);
    for (const c of [a, b]) await t.call({ method: 'POST', url: `/service/${id}/contacts`, payload: { contact_id: c.id } });
    expect((await t.call({ method: 'DELETE', url: `/service/${id}/contacts/${a.id}` })).json()).toEqual({ success: true });
    expect((await t.call({ method: 'POST', url: `/service/${id}/contacts/${b.id}/remove` })).json()).toEqual({ success: true });
    expect((await t.call({ method: 'DELETE', url: `/service/${id}/contacts/${a.id}` })).statusCode).toBe(404);
    expect(await t.db.selectFrom('deal_contacts').select('contact_id').where('deal_id', '=', id).execute()).toEqual([]);
  });
});
