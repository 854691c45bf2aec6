import type { Executor, Trx } from '../../db/database.js';
import type { MemberJsonRow } from './deal-json.js';

/** The buying committee's rows. At most one primary per deal is the database's rule (deal_contacts_one_primary). */

export interface MemberRow {
  deal_id: number;
  contact_id: number;
  role: string | null;
  is_primary: boolean;
}

/** Every member of these deals. */
export function membersOf(db: Executor, dealIds: number[]): Promise<MemberRow[]> {
  return db.selectFrom('deal_contacts').select(['deal_id', 'contact_id', 'role', 'is_primary']).where('deal_id', 'in', dealIds).execute();
}

export async function demotePrimaries(trx: Trx, members: { dealId: number; contactId: number }[]): Promise<void> {
  if (members.length === 0) return;
  await trx
    .updateTable('deal_contacts')
    .set({ is_primary: false })
    .where((eb) => eb.or(members.map((m) => eb.and([eb('deal_id', '=', m.dealId), eb('contact_id', '=', m.contactId)]))))
    .execute();
}

/** Writes members with their final role and primary flag (one row per deal and contact). */
export async function upsertMembers(trx: Trx, members: MemberRow[]): Promise<void> {
  if (members.length === 0) return;
  await trx
    .insertInto('deal_contacts')
    .values(members.map((m) => ({ deal_id: m.deal_id, contact_id: m.contact_id, role: m.role, is_primary: m.is_primary })))
    .onConflict((oc) =>
      oc.columns(['deal_id', 'contact_id']).doUpdateSet((eb) => ({ role: eb.ref('excluded.role'), is_primary: eb.ref('excluded.is_primary') })),
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

/** What a member's JSON needs, from deal_contacts joined with contacts (also used by the deal view). */
export const MEMBER_COLUMNS = [
  'deal_contacts.contact_id',
  'deal_contacts.role',
  'deal_contacts.is_primary',
  'contacts.email',
  'contacts.first_name',
  'contacts.last_name',
  'contacts.company',
  'contacts.deleted_at',
] as const;

export function findMemberWithContact(db: Executor, dealId: number, contactId: number): Promise<MemberJsonRow | undefined> {
  return db
    .selectFrom('deal_contacts')
    .innerJoin('contacts', 'contacts.id', 'deal_contacts.contact_id')
    .select(MEMBER_COLUMNS)
    .where('deal_contacts.deal_id', '=', dealId)
    .where('deal_contacts.contact_id', '=', contactId)
    .executeTakeFirst();
}
