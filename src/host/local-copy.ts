import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import type { ContactRow, HostUser } from './port.js';

/**
 * The local `users` and `contacts` tables that deals reference and deal reads
 * join. For the built-in host they are the host; for a remote host they hold a
 * copy keyed by the host's ids, written only through the functions here (by the
 * adapter and by verified host assertions) and read by the domain.
 */

export const contactColumns = ['id', 'email', 'first_name', 'last_name', 'company'] as const;

/** Contacts that exist (tombstones of contacts deleted in the host are left out). */
export function findContacts(db: Executor, ids: number[]): Promise<ContactRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('contacts').select(contactColumns).where('id', 'in', ids).where('deleted_at', 'is', null).execute();
}

/** Of `ids`, those with no copy or a copy older than `maxAgeMs` (a tombstone is final and never stale). */
export async function contactsToFetch(db: Executor, ids: number[], maxAgeMs: number): Promise<number[]> {
  if (ids.length === 0) return [];
  const fresh = await db
    .selectFrom('contacts')
    .select('id')
    .where('id', 'in', ids)
    .where((eb) => eb.or([eb('deleted_at', 'is not', null), eb('synced_at', '>', new Date(Date.now() - maxAgeMs))]))
    .execute();
  const have = new Set(fresh.map((row) => row.id));
  return [...new Set(ids)].filter((id) => !have.has(id));
}

export async function usersToFetch(db: Executor, ids: number[], maxAgeMs: number): Promise<number[]> {
  if (ids.length === 0) return [];
  const fresh = await db.selectFrom('users').select('id').where('id', 'in', ids).where('synced_at', '>', new Date(Date.now() - maxAgeMs)).execute();
  const have = new Set(fresh.map((row) => row.id));
  return [...new Set(ids)].filter((id) => !have.has(id));
}

/**
 * Writes rows of the copy under the host's ids: inserts those whose id is new
 * and updates the others by id. Two writers of one row at the same moment are
 * normal here (two batches of receives that both had the host create one new
 * email; two first requests of one user). The insert says `on conflict do
 * nothing` for every unique index, so the second writer waits for the first
 * and then updates. An upsert naming the id alone as its conflict target fails
 * instead, with a unique violation, when it meets the other writer's row first
 * in another unique index (the live email, the lower-cased username). A row
 * neither inserted nor updated has its unique value held under another id: it
 * is inserted plainly, so that conflict surfaces as it always did.
 */
async function writeById<R extends { id: number }>(
  rows: R[],
  steps: { insertNew(rows: R[]): Promise<{ id: number }[]>; update(rows: R[]): Promise<{ id: number }[]>; insert(rows: R[]): Promise<unknown> },
): Promise<void> {
  const inserted = new Set((await steps.insertNew(rows)).map((row) => row.id));
  const rest = rows.filter((row) => !inserted.has(row.id));
  if (rest.length === 0) return;
  const updated = new Set((await steps.update(rest)).map((row) => row.id));
  const missing = rest.filter((row) => !updated.has(row.id));
  if (missing.length > 0) await steps.insert(missing);
}

/**
 * Writes host contacts into the copy under the host's ids (writeById). A live
 * contact holding the same email under another id (the host re-used an address
 * after a delete we missed) is tombstoned first, so the one-live-email index holds.
 */
export async function upsertContacts(db: Executor, contacts: ContactRow[]): Promise<void> {
  if (contacts.length === 0) return;
  const now = new Date();
  await db
    .updateTable('contacts')
    .set({ deleted_at: now })
    .where('deleted_at', 'is', null)
    .where('id', 'not in', contacts.map((c) => c.id))
    .where(sql`lower(email)`, 'in', contacts.map((c) => c.email.toLowerCase()))
    .execute();
  const rows = (list: ContactRow[]) => list.map((c) => ({ ...c, synced_at: now, deleted_at: null, merged_into_id: null }));
  await writeById(contacts, {
    insertNew: (list) => db.insertInto('contacts').values(rows(list)).onConflict((oc) => oc.doNothing()).returning('id').execute(),
    update: async (list) =>
      (
        await sql<{ id: number }>`
          update contacts set email = v.email, first_name = v.first_name, last_name = v.last_name, company = v.company,
            synced_at = ${now}, deleted_at = null, merged_into_id = null, updated_at = ${now}
          from jsonb_to_recordset(${JSON.stringify(list)}::jsonb) as v (id integer, email text, first_name text, last_name text, company text)
          where contacts.id = v.id
          returning contacts.id`.execute(db)
      ).rows,
    insert: (list) => db.insertInto('contacts').values(rows(list)).execute(),
  });
}

/** Contacts deleted in the host (or merged into `mergedIntoId`): deals keep naming them, marked deleted. */
export async function tombstoneContacts(db: Executor, ids: number[], mergedIntoId: number | null = null): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('contacts')
    .set({ deleted_at: new Date(), merged_into_id: mergedIntoId, synced_at: new Date() })
    .where('id', 'in', ids)
    .execute();
}

/** A user copied from the host (writeById): no password (they log in there) and no role (permissions come from the host). */
export async function upsertUsers(db: Executor, users: (HostUser & { username: string })[]): Promise<void> {
  if (users.length === 0) return;
  const now = new Date();
  const rows = (list: typeof users) =>
    list.map((u) => ({ id: u.id, username: u.username, name: u.name, email: u.email, password_hash: null, role_id: null, synced_at: now }));
  await writeById(users, {
    insertNew: (list) => db.insertInto('users').values(rows(list)).onConflict((oc) => oc.doNothing()).returning('id').execute(),
    update: async (list) =>
      (
        await sql<{ id: number }>`
          update users set username = v.username, name = v.name, email = v.email, synced_at = ${now}, updated_at = ${now}
          from jsonb_to_recordset(${JSON.stringify(list)}::jsonb) as v (id integer, username text, name text, email text)
          where users.id = v.id
          returning users.id`.execute(db)
      ).rows,
    insert: (list) => db.insertInto('users').values(rows(list)).execute(),
  });
  // Ids chosen by the host skip the identity sequence; keep it ahead so a local insert never collides.
  await sql`select setval(pg_get_serial_sequence('users', 'id'), greatest((select max(id) from users), 1))`.execute(db);
}
