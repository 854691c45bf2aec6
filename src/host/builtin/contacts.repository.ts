import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import { containsPattern } from '../../domain/paging.js';
import { contactColumns } from '../local-copy.js';
import type { ContactByEmail, ContactRow } from '../port.js';


export function findContactByEmail(db: Executor, email: string): Promise<ContactRow | undefined> {
  return db
    .selectFrom('contacts')
    .select(contactColumns)
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/**
 * Finds contacts by email (any letter case) or creates them: one statement
 * when all exist, else a second that inserts the missing ones and, only if a
 * concurrent caller inserted one of them first, a third that reads those.
 * Race-free: callers bringing the same new email at once all end up with the
 * one row the unique index on lower(email) lets through. Emails are inserted in
 * sorted order so two concurrent callers cannot deadlock on them. Answers by
 * lower-cased email; an email given twice counts once (the first spelling and
 * names win).
 */
export async function findOrCreateContactsByEmail(
  db: Executor,
  wanted: ContactByEmail[],
): Promise<Map<string, { contact: ContactRow; created: boolean }>> {
  const byEmail = new Map<string, ContactByEmail>();
  for (const values of wanted) if (!byEmail.has(values.email.toLowerCase())) byEmail.set(values.email.toLowerCase(), values);
  const found = new Map<string, { contact: ContactRow; created: boolean }>();
  const findExisting = async (keys: string[]) => {
    if (keys.length === 0) return;
    // Live contacts only: the unique index on lower(email) is partial (deleted_at is null), and a lookup without that
    // condition cannot use it and scans every contact.
    const existing = await db
      .selectFrom('contacts')
      .select(contactColumns)
      .where(sql`lower(email)`, 'in', keys)
      .where('deleted_at', 'is', null)
      .execute();
    for (const contact of existing) found.set(contact.email.toLowerCase(), { contact, created: false });
  };
  const missing = () => [...byEmail.keys()].filter((key) => !found.has(key));

  await findExisting([...byEmail.keys()]);
  const toCreate = missing().sort();
  if (toCreate.length > 0) {
    const inserted = await db
      .insertInto('contacts')
      .values(
        toCreate.map((key) => {
          const values = byEmail.get(key)!;
          return { email: values.email, first_name: values.first_name ?? null, last_name: values.last_name ?? null, company: values.company ?? null };
        }),
      )
      .onConflict((oc) => oc.expression(sql`lower(email)`).where('deleted_at', 'is', null).doNothing())
      .returning(contactColumns)
      .execute();
    for (const contact of inserted) found.set(contact.email.toLowerCase(), { contact, created: true });
    await findExisting(missing());
  }
  if (found.size !== byEmail.size) throw new Error('a contact vanished between insert and select');
  return found;
}

export interface ContactDetailRow extends ContactRow {
  created_at: Date;
  updated_at: Date;
}

export type ContactValues = Partial<Omit<ContactRow, 'id'>>;

const contactDetailColumns = [...contactColumns, 'created_at', 'updated_at'] as const;

/** Contacts whose email, first, last or full name contains `search` (any letter case). */
export async function listContacts(
  db: Executor,
  options: { search?: string; page: number; limit: number },
): Promise<{ rows: ContactDetailRow[]; total: number }> {
  let query = db.selectFrom('contacts');
  if (options.search) {
    const pattern = containsPattern(options.search);
    query = query.where((eb) =>
      eb.or([
        eb('email', 'ilike', pattern),
        eb('first_name', 'ilike', pattern),
        eb('last_name', 'ilike', pattern),
        eb(sql`concat_ws(' ', first_name, last_name)`, 'ilike', pattern),
      ]),
    );
  }
  const [rows, count] = await Promise.all([
    query.select(contactDetailColumns).orderBy('id').limit(options.limit).offset((options.page - 1) * options.limit).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: count.total };
}

export function findContactDetail(db: Executor, id: number): Promise<ContactDetailRow | undefined> {
  return db.selectFrom('contacts').select(contactDetailColumns).where('id', '=', id).executeTakeFirst();
}

export function insertContact(db: Executor, values: ContactValues & { email: string }): Promise<ContactDetailRow> {
  return db.insertInto('contacts').values(values).returning(contactDetailColumns).executeTakeFirstOrThrow();
}

export function updateContact(db: Executor, id: number, values: ContactValues): Promise<ContactDetailRow | undefined> {
  return db
    .updateTable('contacts')
    .set({ ...values, updated_at: new Date() })
    .where('id', '=', id)
    .returning(contactDetailColumns)
    .executeTakeFirst();
}

/** Committee memberships go with the contact (deal_contacts cascades). */
export async function deleteContact(db: Executor, id: number): Promise<boolean> {
  const result = await db.deleteFrom('contacts').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
