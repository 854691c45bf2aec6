import type { Trx } from '../../db/database.js';
import type { ChangedBy } from '../../events/events.js';
import { createDeal, INTERNAL, lockDealOrFail, patchLockedDeal } from './deal-write.js';

/** Who changes a deal: an API caller ({id, name}) or an inbound source ({id: null, name} plus `source`). */
export interface DealWriteContext {
  changedBy: ChangedBy;
  source?: { id: string; name: string };
}

export interface DealCreateInput {
  title: string;
  amount?: string;
  currency?: string;
  pipelineId?: number;
  stageId?: number;
  closeDate?: string | null;
  ownerId?: number | null;
  createdById?: number | null;
  customFields?: Record<string, unknown>;
  sourceId?: string;
  externalId?: string;
}

export interface DealUpdateInput {
  title?: string;
  amount?: string;
  currency?: string;
  stageId?: number;
  pipelineId?: number;
  closeDate?: string | null;
  ownerId?: number | null;
  customFields?: Record<string, unknown>;
}

/**
 * Creates a deal inside the caller's transaction and records
 * `service.deal.created` (with `source` when the context has one). Validates
 * references (stage in pipeline, owner exists) but checks no permissions.
 */
export function createDealInTransaction(trx: Trx, ctx: DealWriteContext, input: DealCreateInput): Promise<{ id: number }> {
  return createDeal(trx, ctx, input, INTERNAL);
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
