import type { Db, Trx } from '../../db/database.js';
import { recordDealEvent } from '../../events/events.js';
import { NotFoundError, ValidationError } from '../../http/errors.js';
import { findContact } from '../../host/builtin/contacts.repository.js';
import type { Actor } from '../../host/permissions.js';
import { clearPrimary, deleteMember, findMember, findMemberWithContact, hasPrimary, upsertMember } from './committee.repository.js';
import { actorContext, lockDealFor } from './deal-access.js';
import { toMemberJson, type MemberJson } from './deal-json.js';
import { lockDealOrFail } from './deal-write.js';
import type { DealWriteContext } from './deals.service.js';

export interface AddContactInput {
  contactId: number;
  role?: string | null;
  isPrimary?: boolean;
  /** Make the contact primary when the deal has no primary yet (inbound webhooks). */
  primaryIfNone?: boolean;
}

/**
 * Adds a host contact to a deal's buying committee, or updates role/primary of
 * a member. `service.deal.contact_added` only on the first add. The deal row is
 * locked so two adds of one deal serialize; the unique partial index still
 * guards "one primary".
 */
export async function addContactInTransaction(
  trx: Trx,
  ctx: DealWriteContext,
  dealId: number,
  input: AddContactInput,
): Promise<{ added: boolean }> {
  await lockDealOrFail(trx, dealId);
  const contact = await findContact(trx, input.contactId);
  if (!contact) throw ValidationError.field('contact_id', 'Unknown contact');
  const existing = await findMember(trx, dealId, input.contactId);

  let isPrimary = input.isPrimary ?? existing?.is_primary ?? false;
  if (input.isPrimary === undefined && input.primaryIfNone && !isPrimary) isPrimary = !(await hasPrimary(trx, dealId));
  if (isPrimary) await clearPrimary(trx, dealId, input.contactId);
  await upsertMember(trx, { dealId, contactId: input.contactId, role: input.role, isPrimary });

  if (!existing) {
    const role = input.role ?? null;
    await recordDealEvent(trx, {
      event: 'service.deal.contact_added',
      dealId,
      changedBy: ctx.changedBy,
      extras: { contact: { ...contact, role, is_primary: isPrimary }, ...(ctx.source ? { source: ctx.source } : {}) },
    });
  }
  return { added: !existing };
}

/* ---- API operations ---- */

export async function addContact(db: Db, actor: Actor, dealId: number, input: Omit<AddContactInput, 'primaryIfNone'>): Promise<MemberJson> {
  return db.transaction().execute(async (trx) => {
    await lockDealFor(trx, actor, dealId, 'edit');
    await addContactInTransaction(trx, actorContext(actor), dealId, input);
    return toMemberJson((await findMemberWithContact(trx, dealId, input.contactId))!);
  });
}

export async function removeContact(db: Db, actor: Actor, dealId: number, contactId: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockDealFor(trx, actor, dealId, 'edit');
    if (!(await deleteMember(trx, dealId, contactId))) throw new NotFoundError('Contact on this deal');
  });
}
