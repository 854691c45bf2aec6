import type { Executor, Trx } from '../../db/database.js';
import { ForbiddenError, NotFoundError } from '../../http/errors.js';
import { canOnRecord, type Actor, type Permission } from '../../host/permissions.js';
import { canSeePipeline } from '../pipelines/pipelines.repository.js';
import { findDealRow, lockDeal, type DealRow } from './deals.repository.js';
import type { DealWriteContext } from './deal-context.js';

/**
 * Who may do what with one deal: the own/other permission of the action, on a
 * deal whose pipeline the caller can see. A deal that exists but is out of
 * reach is 403; one that does not exist is 404.
 */

export type DealAction = 'view' | 'edit' | 'delete';

export const DEAL_PERMISSIONS: Record<DealAction, readonly [own: Permission, other: Permission]> = {
  view: ['service:deals:viewown', 'service:deals:viewother'],
  edit: ['service:deals:editown', 'service:deals:editother'],
  delete: ['service:deals:deleteown', 'service:deals:deleteother'],
};

export interface DealAccessFacts {
  ownerId: number | null;
  createdById: number | null;
  pipelineVisible: boolean;
}

/** A write also needs the view permission: every write answers with the deal, and nobody edits what they cannot see. */
export function assertDealAccess(actor: Actor, facts: DealAccessFacts, action: DealAction): void {
  const needed: DealAction[] = action === 'view' ? ['view'] : ['view', action];
  const allowed = needed.every((each) => canOnRecord(actor, facts, ...DEAL_PERMISSIONS[each]));
  if (!facts.pipelineVisible || !allowed) throw new ForbiddenError(`You may not ${action} this deal`);
}

async function checkRow(db: Executor, actor: Actor, deal: DealRow | undefined, action: DealAction): Promise<DealRow> {
  if (!deal) throw new NotFoundError('Deal');
  const pipelineVisible = await canSeePipeline(db, actor, deal.pipeline_id);
  assertDealAccess(actor, { ownerId: deal.owner_id, createdById: deal.created_by_id, pipelineVisible }, action);
  return deal;
}

/** Locks the deal for a write and checks the caller may do `action` with it. */
export async function lockDealFor(trx: Trx, actor: Actor, dealId: number, action: DealAction): Promise<DealRow> {
  return checkRow(trx, actor, await lockDeal(trx, dealId), action);
}

/** Checks without locking, for reads of a deal's parts (history, one note, one task). */
export async function assertCanViewDeal(db: Executor, actor: Actor, dealId: number): Promise<void> {
  await checkRow(db, actor, await findDealRow(db, dealId), 'view');
}

/** API calls change deals in the caller's name. */
export const actorContext = (actor: Actor): DealWriteContext => ({ changedBy: { id: actor.id, name: actor.name } });

/** The `source` extra of events written for an inbound source (none for API calls). */
export const sourceExtra = (ctx: DealWriteContext) => (ctx.source ? { source: ctx.source } : {});
