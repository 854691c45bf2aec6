import type { Trx } from '../../db/database.js';
import { recordDealEvent, type StageRef } from '../../events/events.js';
import { ValidationError } from '../../http/errors.js';
import { findDefaultPipeline, findPipeline, findStage, firstStage, type StageRow } from '../pipelines/pipelines.repository.js';
import { setDealStage, insertStageHistory, type DealRow } from './deals.repository.js';
import type { DealWriteContext } from './deals.service.js';

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
  trx: Trx,
  input: { pipelineId?: number; stageId?: number },
  names: PlacementNames,
  scope: PipelineScope,
): Promise<StageRow> {
  if (input.stageId !== undefined) {
    const stage = await findStage(trx, input.stageId);
    if (!stage || !inScope(scope, stage.pipeline_id)) throw ValidationError.field(names.stage, 'Unknown stage');
    if (input.pipelineId !== undefined && stage.pipeline_id !== input.pipelineId) {
      throw ValidationError.field(names.stage, 'The stage does not belong to the given pipeline');
    }
    return stage;
  }
  const pipeline =
    input.pipelineId !== undefined ? await findPipeline(trx, input.pipelineId) : await findDefaultPipeline(trx);
  if (!pipeline || !inScope(scope, pipeline.id)) {
    throw ValidationError.field(names.pipeline, input.pipelineId !== undefined ? 'Unknown pipeline' : 'There is no default pipeline');
  }
  const stage = await firstStage(trx, pipeline.id);
  if (!stage) throw ValidationError.field(names.pipeline, 'The pipeline has no stages');
  return stage;
}

export const stageRef = (stage: Pick<StageRow, 'id' | 'name' | 'type'>): StageRef => ({
  id: stage.id,
  name: stage.name,
  type: stage.type,
});

/**
 * Moves a locked deal to a stage. Moving to the stage it is in changes nothing
 * and records nothing. Returns whether the deal moved.
 */
export async function moveLockedDeal(
  trx: Trx,
  ctx: DealWriteContext,
  deal: DealRow,
  target: StageRow,
  lostReason: string | null = null,
): Promise<boolean> {
  if (target.id === deal.stage_id) return false;
  const previous = await findStage(trx, deal.stage_id);
  const at = await setDealStage(trx, deal.id, target, lostReason);
  await insertStageHistory(trx, [{ dealId: deal.id, fromStageId: deal.stage_id, toStageId: target.id, changedBy: ctx.changedBy, at }]);

  const extras = { previous_stage: previous ? stageRef(previous) : null, ...(ctx.source ? { source: ctx.source } : {}) };
  await recordDealEvent(trx, { event: 'deal.stage_changed', dealId: deal.id, changedBy: ctx.changedBy, extras });
  if (target.type !== 'open') {
    const event = target.type === 'won' ? 'service.deal.won' : 'service.deal.lost';
    await recordDealEvent(trx, { event, dealId: deal.id, changedBy: ctx.changedBy, extras });
  }
  return true;
}
