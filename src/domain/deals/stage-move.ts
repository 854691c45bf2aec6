import type { Executor, Trx } from '../../db/database.js';
import { recordDealEvents, type StageRef } from '../../events/events.js';
import { ValidationError } from '../../http/errors.js';
import { findEntryStage, findStage, findStages, type StageRow } from '../pipelines/pipelines.repository.js';
import { insertStageHistory, setDealsStage, type DealRow } from './deals.repository.js';
import { sourceExtra } from './deal-access.js';
import type { DealWriteContext } from './deal-context.js';

/**
 * Where a deal goes (pipeline + stage) and the stage move itself: audit row,
 * status sync and events. Used by create, update, the stage endpoint and batch.
 */

/** Pipeline ids a caller may place deals in; 'all' for internal callers and admins. */
export type PipelineScope = number[] | 'all';

export interface PlacementNames {
  pipeline: string;
  stage: string;
}

export const DEAL_FIELD_NAMES: PlacementNames = { pipeline: 'deal[pipeline]', stage: 'deal[stage]' };

const inScope = (scope: PipelineScope, pipelineId: number) => scope === 'all' || scope.includes(pipelineId);

/**
 * Resolves the target stage: a stage alone implies its pipeline, a pipeline
 * alone means its first stage, neither means the default pipeline. A pipeline
 * outside the caller's scope is reported exactly like a missing one.
 */
export async function resolveStage(
  db: Executor,
  input: { pipelineId?: number; stageId?: number },
  names: PlacementNames,
  scope: PipelineScope,
): Promise<StageRow> {
  if (input.stageId !== undefined) {
    const stage = await findStage(db, input.stageId);
    if (!stage || !inScope(scope, stage.pipeline_id)) throw ValidationError.field(names.stage, 'Unknown stage');
    if (input.pipelineId !== undefined && stage.pipeline_id !== input.pipelineId) {
      throw ValidationError.field(names.stage, 'The stage does not belong to the given pipeline');
    }
    return stage;
  }
  const entry = await findEntryStage(db, input.pipelineId ?? 'default');
  if (!entry || !inScope(scope, entry.pipelineId)) {
    throw ValidationError.field(names.pipeline, input.pipelineId !== undefined ? 'Unknown pipeline' : 'There is no default pipeline');
  }
  if (!entry.stage) throw ValidationError.field(names.pipeline, 'The pipeline has no stages');
  return entry.stage;
}

export const stageRef = (stage: Pick<StageRow, 'id' | 'name' | 'type'>): StageRef => ({
  id: stage.id,
  name: stage.name,
  type: stage.type,
});

/**
 * Moves locked deals to a stage: one statement each for the rows, their
 * history entries and their events (`deal.stage_changed`, plus won or lost for
 * those stage types, with `previous_stage`). Deals already in the stage change
 * nothing and record nothing. Returns the ids that moved.
 */
export async function moveLockedDeals(
  trx: Trx,
  ctx: DealWriteContext,
  deals: DealRow[],
  target: StageRow,
  lostReason: string | null = null,
): Promise<number[]> {
  const moving = deals.filter((deal) => deal.stage_id !== target.id);
  if (moving.length === 0) return [];
  const previous = new Map((await findStages(trx, [...new Set(moving.map((deal) => deal.stage_id))])).map((stage) => [stage.id, stage]));
  const movedAt = await setDealsStage(trx, moving.map((deal) => deal.id), target, lostReason);
  await insertStageHistory(
    trx,
    moving.map((deal) => ({ dealId: deal.id, fromStageId: deal.stage_id, toStageId: target.id, changedBy: ctx.changedBy, at: movedAt.get(deal.id)! })),
  );

  const outcome = target.type === 'won' ? 'service.deal.won' : target.type === 'lost' ? 'service.deal.lost' : undefined;
  await recordDealEvents(
    trx,
    moving.flatMap((deal) => {
      const from = previous.get(deal.stage_id);
      const extras = { previous_stage: from ? stageRef(from) : null, ...sourceExtra(ctx) };
      const changed = { event: 'deal.stage_changed' as const, dealId: deal.id, changedBy: ctx.changedBy, extras };
      return outcome ? [changed, { ...changed, event: outcome }] : [changed];
    }),
  );
  return moving.map((deal) => deal.id);
}

/** Moves one locked deal; see moveLockedDeals. Returns whether it moved. */
export async function moveLockedDeal(
  trx: Trx,
  ctx: DealWriteContext,
  deal: DealRow,
  target: StageRow,
  lostReason: string | null = null,
): Promise<boolean> {
  return (await moveLockedDeals(trx, ctx, [deal], target, lostReason)).length > 0;
}
