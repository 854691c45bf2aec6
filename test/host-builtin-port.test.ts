import { beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinHost } from '../src/host/builtin/index.js';
import type { HostPort } from '../src/host/port.js';
import { setupApp, type TestContext } from './helpers/app.js';
import { createContact, createUser } from './helpers/factories.js';

/** The built-in host through the port the domain uses: pickers and find-or-create. */
let t: TestContext;
let host: HostPort;
beforeAll(async () => {
  t = await setupApp();
  host = createBuiltinHost({ db: t.db, config: t.config });
});

describe('the built-in host adapter', () => {
  it('searches active users by name or email for owner pickers', async () => {
    const zed = await createUser(t.db, [], { name: 'Zed Zimmer' });
    const gone = await createUser(t.db, [], { name: 'Zed Gone' });
    await t.db.updateTable('users').set({ is_active: false }).where('id', '=', gone.id).execute();
    expect(await host.users.search({ search: 'zed', limit: 10 })).toEqual([{ id: zed.id, name: 'Zed Zimmer', email: `${zed.username}@example.test` }]);
    expect(await host.users.search({ search: `${zed.username}@`, limit: 10 })).toHaveLength(1);
  });

  it('searches contacts by email or full name, literally', async () => {
    const ann = await createContact(t.db, { email: 'ann.port@acme.example', first_name: 'Ann', last_name: 'Portman' });
    await createContact(t.db, { email: 'other@acme.example', first_name: 'Otto', last_name: 'Other' });
    expect((await host.contacts.search({ search: 'Ann Portman', limit: 10 })).map((c) => c.id)).toEqual([ann.id]);
    expect((await host.contacts.search({ search: 'ANN.PORT@', limit: 10 })).map((c) => c.id)).toEqual([ann.id]);
    expect(await host.contacts.search({ search: '%', limit: 10 })).toEqual([]);
  });

  it('finds contacts by email in any letter case or creates them, saying which', async () => {
    const known = await createContact(t.db, { email: 'Known@Acme.example' });
    const found = await host.contacts.findOrCreateByEmail([{ email: 'known@acme.EXAMPLE' }, { email: 'new.one@acme.example', first_name: 'New' }]);
    expect(found.get('known@acme.example')).toEqual({ contact: expect.objectContaining({ id: known.id }), created: false });
    expect(found.get('new.one@acme.example')).toMatchObject({ created: true, contact: { email: 'new.one@acme.example', first_name: 'New' } });
    const again = await host.contacts.findOrCreateByEmail([{ email: 'NEW.ONE@acme.example' }]);
    expect(again.get('new.one@acme.example')).toMatchObject({ created: false, contact: { id: found.get('new.one@acme.example')!.contact.id } });
  });

  it('finds only live contacts by email (the condition that lets the lookup use the partial live-email index)', async () => {
    // A tombstone (a contact deleted in a host whose copy this database once was) is never handed out again.
    const gone = await createContact(t.db, { email: 'gone@acme.example' });
    await t.db.updateTable('contacts').set({ deleted_at: new Date() }).where('id', '=', gone.id).execute();
    const found = await host.contacts.findOrCreateByEmail([{ email: 'Gone@acme.example' }]);
    expect(found.get('gone@acme.example')).toMatchObject({ created: true, contact: { email: 'Gone@acme.example' } });
    expect(found.get('gone@acme.example')!.contact.id).not.toBe(gone.id);
  });
});
