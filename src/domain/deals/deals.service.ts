import type { Db, Executor, Trx } from '../../db/database.js';
import { NotFoundError } from '../../http/errors.js';
import type { Actor } from '../../host/permissions.js';
import type { People } from '../../host/port.js';
import type { DealCreateInput, DealUpdateInput, DealWriteContext } from './deal-context.js';
import { formatMoney } from '../money.js';
import { visiblePipelineIds } from '../pipelines/pipelines.repository.js';
import { actorContext, assertDealAccess, lockDealFor } from './deal-access.js';
import type { DealFullJson } from './deal-json.js';
import { loadFullDeal } from './deal-view.js';
import { findDealRow, findUser, type DealRow } from './deals.repository.js';
import type { StageRow } from '../pipelines/pipelines.repository.js';
import { createDeal, createDeals, DEAL_WRITE_NAMES, deleteLockedDeal, INTERNAL, lockDealOrFail, patchLockedDeal, type NewDealItem, type WriteOptions } from './deal-write.js';
import { moveLockedDeal, resolveStage } from './stage-move.js';

/**
 * Creates deals inside the caller's transaction (one statement per step) and
 * records `service.deal.created` for each (with `source` when the context has
 * one). Validates references (stage in pipeline, owner exists) but checks no
 * permissions.
 */
export function createDealsInTransaction(trx: Trx, items: NewDealItem[]): Promise<{ id: number }[]> {
  return createDeals(trx, items, INTERNAL);
}

/**
 * The stage createDealsInTransaction puts a new deal of this placement in (a
 * 422 when there is none), for callers that resolve it ahead of their
 * transaction and pass it as the input's `stage`.
 */
export function resolveNewDealStage(db: Executor, placement: { pipelineId?: number; stageId?: number }): Promise<StageRow> {
  return resolveStage(db, placement, INTERNAL.names, INTERNAL.scope);
}

/**
 * Updates a deal inside the caller's transaction: `service.deal.updated` with
 * `changes` only when a field changed; a stage change is a stage move
 * (stage_changed, plus won/lost). No permission checks.
 */
export async function updateDealInTransaction(
  trx: Trx,
  ctx: DealWriteContext,
  dealId: number,
  patch: DealUpdateInput,
): Promise<{ changed: boolean }> {
  const deal = await lockDealOrFail(trx, dealId);
  return patchLockedDeal(trx, ctx, deal, patch, INTERNAL);
}

/* ---- API operations: permission and visibility checks, then the rules above ---- */

export type DealApiCreate = Omit<DealCreateInput, 'createdById' | 'sourceId' | 'externalId' | 'contact'>;

const apiOptions = async (trx: Trx, actor: Actor, owner = DEAL_WRITE_NAMES.owner): Promise<WriteOptions> => ({
  scope: await visiblePipelineIds(trx, actor),
  names: { ...DEAL_WRITE_NAMES, owner },
});

/** The full deal after a write the caller was allowed to make. */
async function readDeal(db: Db, actor: Actor, dealId: number): Promise<DealFullJson> {
  const full = await loadFullDeal(db, dealId, actor);
  if (!full) throw new NotFoundError('Deal');
  return full.deal;
}

/** A user a deal may name (an owner filter's), as deal reads show them: from the local copy of the host's people. */
export async function findPerson(db: Db, people: People, id: number): Promise<{ id: number; name: string } | undefined> {
  await people.users.ensure([id]);
  return findUser(db, id);
}

/** A read answers from the local copy of the host's people; entries past their age are refreshed in the background. */
export async function getDeal(db: Db, people: People, actor: Actor, dealId: number): Promise<DealFullJson> {
  const full = await loadFullDeal(db, dealId, actor);
  if (!full) throw new NotFoundError('Deal');
  assertDealAccess(actor, full, 'view');
  const { deal } = full;
  people.refresh({
    userIds: [deal.owner?.id, deal.createdBy?.id, ...deal.tasks.map((task) => task.assignee?.id)].filter((id) => id != null),
    contactIds: deal.contacts.map((member) => member.contact_id),
  });
  return deal;
}

/** Pipelines the caller cannot see are answered like missing ones (422 on the reference). */
export async function createDealAsActor(db: Db, people: People, actor: Actor, input: DealApiCreate): Promise<DealFullJson> {
  if (input.ownerId) await people.users.ensure([input.ownerId]);
  const { id } = await db.transaction().execute(async (trx) => createDeal(trx, actorContext(actor), input, await apiOptions(trx, actor)));
  return readDeal(db, actor, id);
}

export async function updateDealAsActor(db: Db, people: People, actor: Actor, dealId: number, patch: DealUpdateInput): Promise<DealFullJson> {
  if (patch.ownerId) await people.users.ensure([patch.ownerId]);
  await db.transaction().execute(async (trx) => {
    const deal = await lockDealFor(trx, actor, dealId, 'edit');
    await patchLockedDeal(trx, actorContext(actor), deal, patch, await apiOptions(trx, actor));
  });
  return readDeal(db, actor, dealId);
}

export async function deleteDealAsActor(db: Db, actor: Actor, dealId: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockDealFor(trx, actor, dealId, 'delete');
    await deleteLockedDeal(trx, actorContext(actor), dealId);
  });
}

export async function moveDealStage(
  db: Db,
  actor: Actor,
  dealId: number,
  input: { stageId: number; lostReason?: string | null },
): Promise<DealFullJson> {
  await db.transaction().execute(async (trx) => {
    const deal = await lockDealFor(trx, actor, dealId, 'edit');
    const target = await resolveStage(trx, input, { pipeline: 'stage_id', stage: 'stage_id' }, await visiblePipelineIds(trx, actor));
    await moveLockedDeal(trx, actorContext(actor), deal, target, input.lostReason ?? null);
  });
  return readDeal(db, actor, dealId);
}

export type InlineField = 'title' | 'amount' | 'currency' | 'closeDate' | 'owner';

function inlinePatch(field: InlineField, value: string | number | null): DealUpdateInput {
  switch (field) {
    case 'owner':
      return { ownerId: value as number | null };
    case 'closeDate':
      return { closeDate: value as string | null };
    default:
      return { [field]: value as string };
  }
}

const INLINE_VALUE: Record<InlineField, (deal: DealRow) => string | number | null> = {
  title: (deal) => deal.title,
  amount: (deal) => formatMoney(deal.amount),
  currency: (deal) => deal.currency.trim(),
  closeDate: (deal) => deal.close_date,
  owner: (deal) => deal.owner_id,
};

/** One field changed in place; answers the value as stored (amount as a number). */
export async function inlineUpdate(
  db: Db,
  people: People,
  actor: Actor,
  dealId: number,
  field: InlineField,
  value: string | number | null,
): Promise<string | number | null> {
  if (field === 'owner' && typeof value === 'number') await people.users.ensure([value]);
  return db.transaction().execute(async (trx) => {
    const deal = await lockDealFor(trx, actor, dealId, 'edit');
    await patchLockedDeal(trx, actorContext(actor), deal, inlinePatch(field, value), await apiOptions(trx, actor, 'value'));
    return INLINE_VALUE[field]((await findDealRow(trx, dealId))!);
  });
}
