import type { Db, Trx } from '../../db/database.js';
import { recordDealEvents, type RecordOptions } from '../../events/events.js';
import { NotFoundError, ValidationError } from '../../http/errors.js';
import { findContacts } from '../../host/local-copy.js';
import type { ContactRow, People } from '../../host/port.js';
import type { Actor } from '../../host/permissions.js';
import { deleteMember, demotePrimaries, findMemberWithContact, membersOf, upsertMembers, type MemberRow } from './committee.repository.js';
import { actorContext, lockDealFor, sourceExtra } from './deal-access.js';
import { toMemberJson, type MemberJson } from './deal-json.js';
import { lockDeals } from './deals.repository.js';
import type { DealWriteContext } from './deal-context.js';

export interface AddContactInput {
  contactId: number;
  role?: string | null;
  isPrimary?: boolean;
  /** Make the contact primary when the deal has no primary yet (inbound webhooks). */
  primaryIfNone?: boolean;
}

export interface AddContactItem {
  ctx: DealWriteContext;
  dealId: number;
  input: AddContactInput;
}

/** `service.deal.contact_added` for a contact that joined a deal's committee. */
export function contactAddedEvent(ctx: DealWriteContext, dealId: number, contact: ContactRow, role: string | null, isPrimary: boolean): RecordOptions {
  return {
    event: 'service.deal.contact_added',
    dealId,
    changedBy: ctx.changedBy,
    extras: { contact: { ...contact, role, is_primary: isPrimary }, ...sourceExtra(ctx) },
  };
}

/**
 * Adds host contacts to deals' buying committees, or updates role/primary of
 * members; `service.deal.contact_added` only on a first add. Reads, writes and
 * events take one statement each however many items there are; a single add is
 * a batch of one. The deals are locked (in id order) so adds to one deal
 * serialize; the unique partial index still guards "one primary".
 */
export async function addContactsInTransaction(trx: Trx, items: AddContactItem[]): Promise<{ added: boolean }[]> {
  if (items.length === 0) return [];
  const dealIds = [...new Set(items.map((item) => item.dealId))];
  const locked = await lockDeals(trx, dealIds);
  if (locked.length !== dealIds.length) throw new NotFoundError('Deal');
  const contacts = new Map((await findContacts(trx, [...new Set(items.map((i) => i.input.contactId))])).map((c) => [c.id, c]));

  // Committee state per deal, as it stands and then as each item leaves it.
  const committees = new Map<number, Map<number, MemberRow>>(dealIds.map((id) => [id, new Map()]));
  for (const member of await membersOf(trx, dealIds)) committees.get(member.deal_id)!.set(member.contact_id, member);
  const primaryBefore = new Map(dealIds.map((id) => [id, [...committees.get(id)!.values()].find((m) => m.is_primary)?.contact_id]));

  const touched = new Map<string, MemberRow>();
  const events: RecordOptions[] = [];
  const results = items.map(({ ctx, dealId, input }) => {
    const contact = contacts.get(input.contactId);
    if (!contact) throw ValidationError.field('contact_id', 'Unknown contact');
    const committee = committees.get(dealId)!;
    const existing = committee.get(input.contactId);
    const hasPrimary = [...committee.values()].some((m) => m.is_primary);
    let isPrimary = input.isPrimary ?? existing?.is_primary ?? false;
    if (input.isPrimary === undefined && input.primaryIfNone && !hasPrimary) isPrimary = true;
    if (isPrimary) for (const other of committee.values()) if (other.is_primary) other.is_primary = false;
    // An absent role keeps the one on file; null or '' clears it.
    const role = input.role === undefined ? (existing?.role ?? null) : input.role;
    const member: MemberRow = { deal_id: dealId, contact_id: input.contactId, role, is_primary: isPrimary };
    committee.set(input.contactId, member);
    touched.set(`${dealId}:${input.contactId}`, member);
    if (!existing) events.push(contactAddedEvent(ctx, dealId, contact, input.role ?? null, isPrimary));
    return { added: !existing };
  });

  // A primary that lost its place is demoted first, so the one-primary index never sees two during the upsert.
  const demoted = dealIds.flatMap((id) => {
    const before = primaryBefore.get(id);
    return before !== undefined && !committees.get(id)!.get(before)!.is_primary ? [{ dealId: id, contactId: before }] : [];
  });
  await demotePrimaries(trx, demoted);
  await upsertMembers(trx, [...touched.values()]);
  await recordDealEvents(trx, events);
  return results;
}

export async function addContactInTransaction(trx: Trx, ctx: DealWriteContext, dealId: number, input: AddContactInput): Promise<{ added: boolean }> {
  const [result] = await addContactsInTransaction(trx, [{ ctx, dealId, input }]);
  return result!;
}

/* ---- API operations ---- */

export async function addContact(db: Db, people: People, actor: Actor, dealId: number, input: Omit<AddContactInput, 'primaryIfNone'>): Promise<MemberJson> {
  await people.contacts.ensure([input.contactId]);
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
