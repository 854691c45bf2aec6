import { beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../src/host/builtin/auth.js';
import { ADMIN, setupApp, type TestContext } from './helpers/app.js';
import { createContact, createPipeline, createRole, createUser, defaultPipeline } from './helpers/factories.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

let t: TestContext;
beforeAll(async () => {
  t = await setupApp();
});

const detailKeys = (res: { json(): { errors: { details: object }[] } }) => Object.keys(res.json().errors[0]!.details);

describe('host:admin', () => {
  it('is what the built-in host asks for; isAdmin is not required', async () => {
    const hostAdmin = await createUser(t.db, ['host:admin']);
    const dealsOnly = await createUser(t.db, ['service:deals:viewother', 'service:pipelines:manage']);
    for (const url of ['/host/roles', '/host/users', '/host/contacts', '/host/api-credentials']) {
      expect((await t.call({ method: 'GET', url }, hostAdmin)).statusCode, url).toBe(200);
      expect((await t.call({ method: 'GET', url }, dealsOnly)).statusCode, url).toBe(403);
      expect((await t.app.inject({ method: 'GET', url })).statusCode, url).toBe(401);
    }
  });
});

describe('roles', () => {
  it('creates a role from a form body with permissions[] and isAdmin', async () => {
    const res = await t.call({
      method: 'POST',
      url: '/host/roles/new',
      headers: FORM,
      payload: 'name=Sales%20rep&permissions[]=service:deals:viewown&permissions[]=service:deals:create&isAdmin=false',
    });
    expect(res.statusCode).toBe(200);
    const { role } = res.json();
    expect(role).toMatchObject({ name: 'Sales rep', permissions: ['service:deals:viewown', 'service:deals:create'], isAdmin: false });
    expect(res.headers.location).toBe(`http://service.test/host/roles/${role.id}`);
    expect((await t.call({ method: 'GET', url: `/host/roles/${role.id}` })).json().role).toEqual(role);
    expect((await t.call({ method: 'GET', url: '/host/roles' })).json().roles.map((r: { id: number }) => r.id)).toContain(role.id);
  });

  it('refuses unknown permission names, naming the item, and duplicate names in any letter case', async () => {
    const bad = await t.call({ method: 'POST', url: '/host/roles/new', payload: { name: 'X', permissions: ['service:deals:viewown', 'deals:fly'] } });
    expect(bad.statusCode).toBe(422);
    expect(detailKeys(bad)).toEqual(['permissions[1]']);
    await createRole(t.db, [], { name: 'Support' });
    const duplicate = await t.call({ method: 'POST', url: '/host/roles/new', payload: { name: 'SUPPORT' } });
    expect(duplicate.statusCode).toBe(409);
  });

  it('applies an edited role at once, even to credentials verified a moment ago', async () => {
    const user = await createUser(t.db, ['service:pipelines:view']);
    expect((await t.call({ method: 'GET', url: '/service/pipelines' }, user)).statusCode).toBe(200);
    const edit = await t.call({ method: 'POST', url: `/host/roles/${user.roleId}/edit`, headers: FORM, payload: 'permissions=' });
    expect(edit.statusCode).toBe(200);
    expect(edit.json().role.permissions).toEqual([]);
    expect((await t.call({ method: 'GET', url: '/service/pipelines' }, user)).statusCode).toBe(403);
  });

  it('keeps a role that users hold or that limits a pipeline, and deletes a free one', async () => {
    const held = await createUser(t.db, []);
    expect((await t.call({ method: 'DELETE', url: `/host/roles/${held.roleId}` })).statusCode).toBe(409);
    const limiting = await createRole(t.db, []);
    await createPipeline(t.db, { roleIds: [limiting.id] });
    expect((await t.call({ method: 'DELETE', url: `/host/roles/${limiting.id}` })).statusCode).toBe(409);
    const free = await createRole(t.db, []);
    const res = await t.call({ method: 'DELETE', url: `/host/roles/${free.id}` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true });
    expect((await t.call({ method: 'GET', url: `/host/roles/${free.id}` })).statusCode).toBe(404);
  });

  it('never leaves the service without an active administrator', async () => {
    const admin = await t.db.selectFrom('users').select(['id', 'role_id']).where('username', '=', ADMIN.username).executeTakeFirstOrThrow();
    const demote = await t.call({ method: 'POST', url: `/host/roles/${admin.role_id}/edit`, payload: { isAdmin: false } });
    expect(demote.statusCode).toBe(409);
    const deactivate = await t.call({ method: 'POST', url: `/host/users/${admin.id}/edit`, payload: { isActive: false } });
    expect(deactivate.statusCode).toBe(409);
    const remove = await t.call({ method: 'DELETE', url: `/host/users/${admin.id}` });
    expect(remove.statusCode).toBe(409);
    expect((await t.call({ method: 'GET', url: '/host/roles' })).statusCode).toBe(200);
  });
});

describe('users', () => {
  it('creates a user who can log in; the password is hashed and never returned', async () => {
    const role = await createRole(t.db, ['service:pipelines:view'], { name: 'Viewers' });
    const res = await t.call({
      method: 'POST',
      url: '/host/users/new',
      headers: FORM,
      payload: `username=ada&password=correct-horse-battery&name=Ada%20Lovelace&email=ada@example.test&role=${role.id}`,
    });
    expect(res.statusCode).toBe(200);
    const { user } = res.json();
    expect(user).toMatchObject({ username: 'ada', name: 'Ada Lovelace', email: 'ada@example.test', role: { id: role.id, name: 'Viewers' }, isActive: true });
    expect(res.body).not.toContain('correct-horse-battery');
    expect(Object.keys(user)).not.toContain('password');
    expect(res.headers.location).toBe(`http://service.test/host/users/${user.id}`);
    const row = await t.db.selectFrom('users').select('password_hash').where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^scrypt\$/);
    expect(row.password_hash).not.toContain('correct-horse-battery');

    const login = { username: 'ada', password: 'correct-horse-battery' };
    expect((await t.call({ method: 'GET', url: '/service/pipelines' }, login)).statusCode).toBe(200);
    const listed = await t.call({ method: 'GET', url: '/host/users?search=lovelace' });
    expect(listed.json()).toMatchObject({ total: 1, page: 1, pages: 1 });
    expect(listed.json().users[0].id).toBe(user.id);
  });

  it('validates inputs: unknown role, colon in username, short password, duplicate username', async () => {
    const role = await createRole(t.db, []);
    const noRole = await t.call({ method: 'POST', url: '/host/users/new', payload: { username: 'bob', password: 'long-enough-pw', name: 'Bob', role: 999999 } });
    expect(noRole.statusCode).toBe(422);
    expect(detailKeys(noRole)).toEqual(['role']);
    const bad = await t.call({ method: 'POST', url: '/host/users/new', payload: { username: 'b:ob', password: 'short', name: 'Bob', role: role.id } });
    expect(bad.statusCode).toBe(422);
    expect(detailKeys(bad).sort()).toEqual(['password', 'username']);
    const taken = await t.call({ method: 'POST', url: '/host/users/new', payload: { username: 'ADMIN', password: 'long-enough-pw', name: 'Bob', role: role.id } });
    expect(taken.statusCode).toBe(409);
  });

  it('changes a password, and the old one stops working at once', async () => {
    const user = await createUser(t.db, ['service:pipelines:view']);
    expect((await t.call({ method: 'GET', url: '/service/pipelines' }, user)).statusCode).toBe(200);
    const edit = await t.call({ method: 'POST', url: `/host/users/${user.id}/edit`, payload: { password: 'a-brand-new-password' } });
    expect(edit.statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: '/service/pipelines' }, user)).statusCode).toBe(401);
    expect((await t.call({ method: 'GET', url: '/service/pipelines' }, { ...user, password: 'a-brand-new-password' })).statusCode).toBe(200);
  });

  it('deletes a user without history, and deactivates one that owns deals', async () => {
    const loner = await createUser(t.db, ['service:pipelines:view']);
    const gone = await t.call({ method: 'DELETE', url: `/host/users/${loner.id}` });
    expect(gone.json()).toEqual({ success: true, deactivated: false });
    expect((await t.call({ method: 'GET', url: `/host/users/${loner.id}` })).statusCode).toBe(404);

    const owner = await createUser(t.db, ['service:pipelines:view']);
    const sales = await defaultPipeline(t.db);
    const deal = await t.db
      .insertInto('deals')
      .values({ title: 'Kept', currency: 'USD', pipeline_id: sales.id, stage_id: sales.stages[0]!.id, status: 'open', owner_id: owner.id })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect((await t.call({ method: 'GET', url: '/service/pipelines' }, owner)).statusCode).toBe(200);
    const kept = await t.call({ method: 'DELETE', url: `/host/users/${owner.id}` });
    expect(kept.json()).toEqual({ success: true, deactivated: true });
    expect((await t.call({ method: 'GET', url: `/host/users/${owner.id}` })).json().user.isActive).toBe(false);
    const row = await t.db.selectFrom('deals').select('owner_id').where('id', '=', deal.id).executeTakeFirstOrThrow();
    expect(row.owner_id).toBe(owner.id);
    expect((await t.call({ method: 'GET', url: '/service/pipelines' }, owner)).statusCode).toBe(401);
  });
});

describe('contacts', () => {
  it('creates, reads, edits and deletes a contact', async () => {
    const created = await t.call({
      method: 'POST',
      url: '/host/contacts/new',
      headers: FORM,
      payload: 'email=grace@navy.test&first_name=Grace&last_name=Hopper&company=Navy',
    });
    expect(created.statusCode).toBe(200);
    const { contact } = created.json();
    expect(contact).toMatchObject({ email: 'grace@navy.test', first_name: 'Grace', last_name: 'Hopper', company: 'Navy' });
    expect(created.headers.location).toBe(`http://service.test/host/contacts/${contact.id}`);
    const edited = await t.call({ method: 'POST', url: `/host/contacts/${contact.id}/edit`, payload: { company: '' } });
    expect(edited.json().contact).toMatchObject({ id: contact.id, company: null, first_name: 'Grace' });
    expect((await t.call({ method: 'DELETE', url: `/host/contacts/${contact.id}` })).json()).toEqual({ success: true });
    expect((await t.call({ method: 'GET', url: `/host/contacts/${contact.id}` })).statusCode).toBe(404);
  });

  it('keeps emails unique in any letter case (409)', async () => {
    const first = await createContact(t.db, { email: 'Dup@Example.test' });
    const again = await t.call({ method: 'POST', url: '/host/contacts/new', payload: { email: 'dup@EXAMPLE.test' } });
    expect(again.statusCode).toBe(409);
    expect(again.json().errors[0].type).toBe('conflict');
    const other = await createContact(t.db);
    const clash = await t.call({ method: 'POST', url: `/host/contacts/${other.id}/edit`, payload: { email: 'DUP@example.test' } });
    expect(clash.statusCode).toBe(409);
    const same = await t.call({ method: 'POST', url: `/host/contacts/${first.id}/edit`, payload: { email: 'dup@example.test' } });
    expect(same.statusCode).toBe(200);
    const invalid = await t.call({ method: 'POST', url: '/host/contacts/new', payload: { email: 'not-an-email' } });
    expect(invalid.statusCode).toBe(422);
    expect(detailKeys(invalid)).toEqual(['email']);
  });

  it('searches email and names, and pages', async () => {
    await createContact(t.db, { email: 'linus@kernel.test', first_name: 'Linus', last_name: 'Torvalds' });
    await createContact(t.db, { email: 'ltorvalds@other.test', first_name: 'L', last_name: 'T' });
    const byName = await t.call({ method: 'GET', url: '/host/contacts?search=torvalds' });
    expect(byName.json().contacts.map((c: { email: string }) => c.email).sort()).toEqual(['linus@kernel.test', 'ltorvalds@other.test']);
    const fullName = await t.call({ method: 'GET', url: `/host/contacts?search=${encodeURIComponent('linus torv')}` });
    expect(fullName.json().contacts.map((c: { email: string }) => c.email)).toEqual(['linus@kernel.test']);
    const literal = await t.call({ method: 'GET', url: '/host/contacts?search=%25' });
    expect(literal.json().total).toBe(0);

    for (let i = 0; i < 5; i += 1) await createContact(t.db, { email: `pager-${i}@paging.test` });
    const page2 = await t.call({ method: 'GET', url: '/host/contacts?search=paging.test&limit=2&page=2' });
    expect(page2.json()).toMatchObject({ total: 5, page: 2, limit: 2, pages: 3 });
    expect(page2.json().contacts.map((c: { email: string }) => c.email)).toEqual(['pager-2@paging.test', 'pager-3@paging.test']);
  });
});

describe('API credentials', () => {
  it('shows the secret once, stores its SHA-256, and issues tokens that act as the user', async () => {
    const user = await createUser(t.db, ['service:pipelines:view']);
    const res = await t.call({ method: 'POST', url: '/host/api-credentials/new', headers: FORM, payload: `name=CRM%20sync&user=${user.id}` });
    expect(res.statusCode).toBe(200);
    const { credential } = res.json();
    expect(credential).toMatchObject({ name: 'CRM sync', user: { id: user.id } });
    expect(credential.client_id).toMatch(/^[0-9a-f]{32}$/);
    expect(credential.client_secret.length).toBeGreaterThanOrEqual(43);
    const row = await t.db.selectFrom('api_credentials').select('client_secret_hash').where('id', '=', credential.id).executeTakeFirstOrThrow();
    expect(row.client_secret_hash).toBe(sha256(credential.client_secret));

    const shown = await t.call({ method: 'GET', url: `/host/api-credentials/${credential.id}` });
    expect(shown.json().credential.client_secret).toBeUndefined();
    expect(shown.body).not.toContain(credential.client_secret);

    const token = await t.app.inject({
      method: 'POST',
      url: '/oauth/v2/token',
      payload: { grant_type: 'client_credentials', client_id: credential.client_id, client_secret: credential.client_secret },
    });
    expect(token.statusCode).toBe(200);
    const bearer = { authorization: `Bearer ${token.json().access_token}` };
    expect((await t.app.inject({ method: 'GET', url: '/service/pipelines', headers: bearer })).statusCode).toBe(200);
    // The token carries the user's permissions, not more.
    expect((await t.app.inject({ method: 'GET', url: '/host/roles', headers: bearer })).statusCode).toBe(403);
  });

  it('revokes tokens when the credential is deleted or moved to another user', async () => {
    const user = await createUser(t.db, ['service:pipelines:view']);
    const other = await createUser(t.db, ['service:pipelines:view']);
    const tokenFor = async (credential: { client_id: string; client_secret: string }) => {
      const res = await t.app.inject({ method: 'POST', url: '/oauth/v2/token', payload: { grant_type: 'client_credentials', ...credential } });
      return { authorization: `Bearer ${res.json().access_token}` };
    };
    const make = async () => (await t.call({ method: 'POST', url: '/host/api-credentials/new', payload: { name: 'c', user: user.id } })).json().credential;

    const moved = await make();
    const movedToken = await tokenFor(moved);
    expect((await t.app.inject({ method: 'GET', url: '/service/pipelines', headers: movedToken })).statusCode).toBe(200);
    const edit = await t.call({ method: 'POST', url: `/host/api-credentials/${moved.id}/edit`, payload: { user: other.id, name: 'renamed' } });
    expect(edit.json().credential).toMatchObject({ name: 'renamed', user: { id: other.id } });
    expect((await t.app.inject({ method: 'GET', url: '/service/pipelines', headers: movedToken })).statusCode).toBe(401);

    const deleted = await make();
    const deletedToken = await tokenFor(deleted);
    expect((await t.app.inject({ method: 'GET', url: '/service/pipelines', headers: deletedToken })).statusCode).toBe(200);
    expect((await t.call({ method: 'DELETE', url: `/host/api-credentials/${deleted.id}` })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/service/pipelines', headers: deletedToken })).statusCode).toBe(401);
    const retry = await t.app.inject({ method: 'POST', url: '/oauth/v2/token', payload: { grant_type: 'client_credentials', client_id: deleted.client_id, client_secret: deleted.client_secret } });
    expect(retry.statusCode).toBe(401);
  });

  it('refuses a credential for an unknown or inactive user', async () => {
    const res = await t.call({ method: 'POST', url: '/host/api-credentials/new', payload: { name: 'x', user: 999999 } });
    expect(res.statusCode).toBe(422);
    expect(detailKeys(res)).toEqual(['user']);
    const inactive = await createUser(t.db, []);
    await t.db.updateTable('users').set({ is_active: false }).where('id', '=', inactive.id).execute();
    const refused = await t.call({ method: 'POST', url: '/host/api-credentials/new', payload: { name: 'x', user: inactive.id } });
    expect(refused.statusCode).toBe(422);
  });
});
