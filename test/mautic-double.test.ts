import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ROLE, contactsMerged, doubleUser, signedWebhook, startMauticDouble, type MauticDouble } from './mautic-double/index.js';

/** The Mautic double answers the recorded shapes, traps and faults the adapter is tested against. */
let mautic: MauticDouble;
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const ADMIN = basic('mia', 'mia-password');

beforeAll(async () => {
  mautic = await startMauticDouble({
    users: [doubleUser(5, 'mia', 'mia-password', ADMIN_ROLE, 'Mia Admin'), doubleUser(6, 'sam', 'sam-password', { id: 2, name: 'Sales team', isAdmin: false })],
    contacts: [{ id: 10, email: 'ann@acme.example', firstname: 'Ann', lastname: 'Lee', company: 'Acme' }, { id: 11, email: 'ann@acme.example.org', firstname: 'Ann', lastname: 'Other', company: null }],
  });
});
afterAll(() => mautic.close());

const get = async (path: string, auth = ADMIN) => {
  const res = await fetch(`${mautic.url}${path}`, { headers: { authorization: auth } });
  return { status: res.status, version: res.headers.get('mautic-version'), body: (await res.json()) as any };
};

describe('the Mautic double', () => {
  it('answers the current user without a wrapper, a user by id with one, and 401s in the error body', async () => {
    const self = await get('/api/users/self');
    expect(self).toMatchObject({ status: 200, version: '5.1.1', body: { id: 5, username: 'mia', role: { name: 'Administrator', isAdmin: true } } });
    expect((await get('/api/users/6')).body.user).toMatchObject({ id: 6, role: { name: 'Sales team', isAdmin: false } });
    const wrong = await get('/api/users/self', basic('mia', 'nope'));
    expect(wrong.status).toBe(401);
    expect(wrong.body.errors[0]).toMatchObject({ code: 401, type: 'access_denied' });
  });

  it('keeps the search traps: email: is a prefix match, the where form is equality, {} and a string total when empty', async () => {
    const prefix = await get('/api/contacts?search=email:ann@acme.example');
    expect(Object.keys(prefix.body.contacts)).toEqual(['10', '11']);
    expect(prefix.body.total).toBe('2');
    const strict = await get(`/api/contacts?where[0][col]=email&where[0][expr]=eq&where[0][val]=${encodeURIComponent('ANN@acme.example')}`);
    expect(Object.keys(strict.body.contacts)).toEqual(['10']);
    expect(strict.body.contacts['10'].fields.all).toMatchObject({ email: 'ann@acme.example', firstname: 'Ann', company: 'Acme' });
    const none = await get('/api/contacts?search=email:nobody@');
    expect(none.body).toEqual({ total: '0', contacts: {} });
    expect(Object.keys((await get('/api/contacts?search=ids:11')).body.contacts)).toEqual(['11']);
  });

  it('creates a new contact with 201 and answers an existing email with 200, the same id', async () => {
    const post = (email: string) =>
      fetch(`${mautic.url}/api/contacts/new`, { method: 'POST', headers: { authorization: ADMIN, 'content-type': 'application/json' }, body: JSON.stringify({ email, firstname: 'Bo' }) });
    const created = await post('bo@new.example');
    expect(created.status).toBe(201);
    const id = ((await created.json()) as any).contact.id;
    const again = await post('BO@new.example');
    expect(again.status).toBe(200);
    expect(((await again.json()) as any).contact.id).toBe(id);
  });

  it('is down (connection refused), slow and failing on demand, and counts requests', async () => {
    const before = mautic.requests.get('GET /api/users/self') ?? 0;
    await mautic.setMode('down');
    await expect(fetch(`${mautic.url}/api/users/self`)).rejects.toThrow();
    await mautic.setMode('slow', 300);
    const started = Date.now();
    expect((await get('/api/users/self')).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    await mautic.setMode('error500');
    expect((await get('/api/contacts/10')).body.errors[0].code).toBe(500);
    await mautic.setMode('up');
    expect(mautic.requests.get('GET /api/users/self')).toBe(before + 1);
  });

  it('signs webhooks as Mautic does, and sends a merge as an update of the winner then a delete of the loser', () => {
    const [update, deletion] = contactsMerged(mautic.state.contacts.get(10)!, mautic.state.contacts.get(11)!).map((payload) => signedWebhook('s3cret', payload));
    expect(Object.keys(JSON.parse(update!.body))).toEqual(['mautic.lead_post_save_update']);
    expect(JSON.parse(deletion!.body)['mautic.lead_post_delete'][0].id).toBe(11);
    expect(deletion!.headers['webhook-signature']).toBe(createHmac('sha256', 's3cret').update(deletion!.body).digest('base64'));
  });
});
