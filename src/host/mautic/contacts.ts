import type { Db } from '../../db/database.js';
import { contactsToFetch, tombstoneContacts, upsertContacts } from '../local-copy.js';
import type { ContactRow, HostContacts } from '../port.js';
import { listOf, type MauticClient } from './client.js';

/** A Mautic contact as the local copy keeps it; one without an email (an anonymous visitor) has no place in a committee. */
export function toContactRow(contact: any): ContactRow | undefined {
  const all = contact?.fields?.all ?? {};
  const id = Number(contact?.id ?? all.id);
  const email = typeof all.email === 'string' ? all.email.trim() : '';
  if (!Number.isInteger(id) || id < 1 || !email) return undefined;
  const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value : null);
  return { id, email, first_name: text(all.firstname), last_name: text(all.lastname), company: text(all.company) };
}

const rows = (contacts: unknown) => listOf(contacts).map(toContactRow).filter((row): row is ContactRow => row !== undefined);

/** Mautic's contacts API, with the local copy deals join kept in step. */
export function createMauticContacts(options: { db: Db; client: MauticClient; maxAgeMs: () => number }): HostContacts {
  const { db, client } = options;

  async function exactByEmail(email: string): Promise<ContactRow | undefined> {
    // `search=email:` is a prefix match in Mautic; the `where … eq` form is strict, and the address is compared here too.
    const query = new URLSearchParams({ 'where[0][col]': 'email', 'where[0][expr]': 'eq', 'where[0][val]': email, limit: '10' });
    const answer = await client.service('GET', `/api/contacts?${query}`);
    if (answer.status !== 200) throw new Error(`Mautic contact lookup answered ${answer.status}`);
    return rows(answer.body?.contacts).find((row) => row.email.toLowerCase() === email.toLowerCase());
  }

  return {
    async ensure(ids) {
      const wanted = await contactsToFetch(db, ids, options.maxAgeMs());
      const found: ContactRow[] = [];
      const gone: number[] = [];
      for (const id of wanted) {
        const answer = await client.service('GET', `/api/contacts/${id}`);
        const row = answer.status === 200 ? toContactRow(answer.body?.contact) : undefined;
        if (row) found.push(row);
        else if (answer.status === 404) gone.push(id);
      }
      await upsertContacts(db, found);
      // Only rows already copied become tombstones; an id never seen stays unknown and the domain refuses it.
      await tombstoneContacts(db, gone);
    },

    async search({ search, limit }) {
      const query = new URLSearchParams({ search, limit: String(limit) });
      const answer = await client.service('GET', `/api/contacts?${query}`);
      if (answer.status !== 200) return [];
      const found = rows(answer.body?.contacts).slice(0, limit);
      await upsertContacts(db, found);
      return found;
    },

    async findOrCreateByEmail(wanted) {
      const result = new Map<string, { contact: ContactRow; created: boolean }>();
      for (const want of wanted) {
        const key = want.email.toLowerCase();
        if (result.has(key)) continue;
        let contact = await exactByEmail(want.email);
        let created = false;
        if (!contact) {
          const body = { email: want.email, firstname: want.first_name ?? undefined, lastname: want.last_name ?? undefined, company: want.company ?? undefined };
          const answer = await client.service('POST', '/api/contacts/new', body);
          if (answer.status !== 200 && answer.status !== 201) {
            throw new Error(`Mautic refused to create a contact: ${answer.body?.errors?.[0]?.message ?? answer.status}`);
          }
          contact = toContactRow(answer.body?.contact);
          if (!contact) throw new Error('Mautic answered a contact create without the contact');
          // Mautic creates or updates by email: 200 means someone else created it since our lookup.
          created = answer.status === 201;
        }
        await upsertContacts(db, [contact]);
        result.set(key, { contact, created });
      }
      return result;
    },
  };
}
