import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import { containsPattern } from './paging.js';

export interface ContactRow {
  id: number;
  email: string;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
}

export const contactColumns = ['id', 'email', 'first_name', 'last_name', 'company'] as const;

export function findContacts(db: Executor, ids: number[]): Promise<ContactRow[]> {
  return db.selectFrom('contacts').select(contactColumns).where('id', 'in', ids).execute();
}

export function findContactByEmail(db: Executor, email: string): Promise<ContactRow | undefined> {
  return db
    .selectFrom('contacts')
    .select(contactColumns)
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

/**
 * Finds a contact by email (any letter case) or creates it. Race-free: two
 * callers bringing the same new email at once both end up with the one row the
 * unique index on lower(email) lets through.
 */
export async function findOrCreateContactByEmail(
  db: Executor,
  values: { email: string; first_name?: string | null; last_name?: string | null; company?: string | null },
): Promise<{ contact: ContactRow; created: boolean }> {
  const inserted = await db
    .insertInto('contacts')
    .values({
      email: values.email,
      first_name: values.first_name ?? null,
      last_name: values.last_name ?? null,
      company: values.company ?? null,
    })
    .onConflict((oc) => oc.expression(sql`lower(email)`).doNothing())
    .returning(contactColumns)
    .executeTakeFirst();
  if (inserted) return { contact: inserted, created: true };
  const existing = await findContactByEmail(db, values.email);
  if (!existing) throw new Error('contact vanished between insert and select');
  return { contact: existing, created: false };
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
