import type { Executor, Trx } from '../../db/database.js';
import type { MemberJsonRow } from './deal-json.js';

/** The buying committee's rows. At most one primary per deal is the database's rule (deal_contacts_one_primary). */

export interface MemberRow {
  deal_id: number;
  contact_id: number;
  role: string | null;
  is_primary: boolean;
}

export function findMember(db: Executor, dealId: number, contactId: number): Promise<MemberRow | undefined> {
  return db
    .selectFrom('deal_contacts')
    .select(['deal_id', 'contact_id', 'role', 'is_primary'])
    .where('deal_id', '=', dealId)
    .where('contact_id', '=', contactId)
    .executeTakeFirst();
}

export async function hasPrimary(db: Executor, dealId: number): Promise<boolean> {
  const row = await db
    .selectFrom('deal_contacts')
    .select('contact_id')
    .where('deal_id', '=', dealId)
    .where('is_primary', '=', true)
    .executeTakeFirst();
  return row !== undefined;
}

/** Demotes the current primary (if another contact) so a new one can take its place. */
export async function clearPrimary(trx: Trx, dealId: number, exceptContactId: number): Promise<void> {
  await trx
    .updateTable('deal_contacts')
    .set({ is_primary: false })
    .where('deal_id', '=', dealId)
    .where('is_primary', '=', true)
    .where('contact_id', '!=', exceptContactId)
    .execute();
}

export async function upsertMember(
  trx: Trx,
  member: { dealId: number; contactId: number; role: string | null | undefined; isPrimary: boolean },
): Promise<void> {
  await trx
    .insertInto('deal_contacts')
    .values({ deal_id: member.dealId, contact_id: member.contactId, role: member.role ?? null, is_primary: member.isPrimary })
    .onConflict((oc) =>
      oc.columns(['deal_id', 'contact_id']).doUpdateSet((eb) => ({
        // An absent role keeps the one on file; null or '' clears it.
        role: member.role === undefined ? eb.ref('deal_contacts.role') : eb.ref('excluded.role'),
        is_primary: eb.ref('excluded.is_primary'),
      })),
    )
    .execute();
}

export async function deleteMember(trx: Trx, dealId: number, contactId: number): Promise<boolean> {
  const result = await trx
    .deleteFrom('deal_contacts')
    .where('deal_id', '=', dealId)
    .where('contact_id', '=', contactId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export function findMemberWithContact(db: Executor, dealId: number, contactId: number): Promise<MemberJsonRow | undefined> {
  return db
    .selectFrom('deal_contacts')
    .innerJoin('contacts', 'contacts.id', 'deal_contacts.contact_id')
    .select([
      'deal_contacts.contact_id',
      'deal_contacts.role',
      'deal_contacts.is_primary',
      'contacts.email',
      'contacts.first_name',
      'contacts.last_name',
      'contacts.company',
    ])
    .where('deal_contacts.deal_id', '=', dealId)
    .where('deal_contacts.contact_id', '=', contactId)
    .executeTakeFirst();
}
