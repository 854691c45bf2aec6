import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';

export interface ContactRow {
  id: number;
  email: string;
  first_name: string | null;
  last_name: string | null;
  company: string | null;
}

export const contactColumns = ['id', 'email', 'first_name', 'last_name', 'company'] as const;

export function findContact(db: Executor, id: number): Promise<ContactRow | undefined> {
  return db.selectFrom('contacts').select(contactColumns).where('id', '=', id).executeTakeFirst();
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
