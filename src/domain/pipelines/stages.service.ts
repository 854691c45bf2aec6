import type { Db } from '../../db/database.js';
import type { StageType } from '../../db/schema.js';
import type { Actor } from '../../host/permissions.js';
import { ConflictError, NotFoundError, ValidationError } from '../../http/errors.js';
import { findPipeline, findStage, stagesOf, type StageRow } from './pipelines.repository.js';
import { actorContext } from '../deals/deal-access.js';
import { lockDealsInStage } from '../deals/deals.repository.js';
import { moveLockedDeals } from '../deals/stage-move.js';
import {
  assertVisible,
  defaultProbability, lockVisiblePipeline, pipelineJson, toStageJson, type PipelineJson, type StageJson } from './pipelines.service.js';
import {
  compactPositions,
  countDealsInStage,
  deleteStage,
  insertStages,
  lockStage,
  setStageOrder,
  shiftStagesFrom,
  stageCount,
  updateStage,
} from './stages.repository.js';

/**
 * Managing the stages of a pipeline. Every change of shape locks the pipeline
 * first (see lockPipeline), so adds, deletes and reorders of one pipeline
 * serialize while deals keep moving.
 */

export interface StageInput {
  name?: string;
  type?: StageType;
  probability?: number;
  color?: string | null;
}

export type StageWithPipeline = StageJson & { pipeline: { id: number; name: string } };

const withPipeline = (stage: StageRow, pipeline: { id: number; name: string }): StageWithPipeline => ({
  ...toStageJson(stage),
  pipeline: { id: pipeline.id, name: pipeline.name },
});

/** A stage the actor may see: hidden pipeline, hidden stages. */
export async function getStage(db: Db, actor: Actor, id: number): Promise<StageWithPipeline> {
  const stage = await findStage(db, id);
  if (!stage) throw new NotFoundError('Stage');
  await assertVisible(db, actor, stage.pipeline_id);
  return withPipeline(stage, (await findPipeline(db, stage.pipeline_id))!);
}

/** Adds a stage at `position` (1..n+1, default: last), moving later stages down. */
export async function addStage(
  db: Db,
  actor: Actor,
  pipelineId: number,
  input: Required<Pick<StageInput, 'name'>> & StageInput & { position?: number },
): Promise<StageWithPipeline> {
  return db.transaction().execute(async (trx) => {
    const pipeline = await lockVisiblePipeline(trx, actor, pipelineId);
    const count = await stageCount(trx, pipelineId);
    const position = input.position ?? count + 1;
    if (position > count + 1) throw ValidationError.field('stage[position]', `Must be between 1 and ${count + 1}`);
    await shiftStagesFrom(trx, pipelineId, position);
    const type = input.type ?? 'open';
    const [stage] = await insertStages(trx, pipelineId, [
      { name: input.name, type, probability: input.probability ?? defaultProbability(type), color: input.color ?? null, position },
    ]);
    return withPipeline(stage!, pipeline);
  });
}

/** A stage's type decides its deals' status, so it cannot change while deals are in it. */
export async function editStage(db: Db, actor: Actor, id: number, input: StageInput): Promise<StageWithPipeline> {
  return db.transaction().execute(async (trx) => {
    const found = await findStage(trx, id);
    if (!found) throw new NotFoundError('Stage');
    const pipeline = await lockVisiblePipeline(trx, actor, found.pipeline_id);
    const stage = await lockStage(trx, id);
    if (!stage) throw new NotFoundError('Stage');
    if (input.type !== undefined && input.type !== stage.type) {
      const deals = await countDealsInStage(trx, id);
      if (deals > 0) throw new ConflictError(`The stage holds ${deals} deal(s); move them before changing its type`, { deals });
    }
    return withPipeline(await updateStage(trx, id, input), pipeline);
  });
}

/**
 * Deletes a stage. Its deals move to `moveTo` (a stage of the same pipeline)
 * or, without it, the delete is refused; the last stage of a pipeline stays.
 */
export async function removeStage(db: Db, actor: Actor, id: number, moveTo?: number): Promise<{ movedDeals: number }> {
  return db.transaction().execute(async (trx) => {
    const found = await findStage(trx, id);
    if (!found) throw new NotFoundError('Stage');
    await lockVisiblePipeline(trx, actor, found.pipeline_id);
    const stage = await lockStage(trx, id);
    if (!stage) throw new NotFoundError('Stage');
    if ((await stageCount(trx, stage.pipeline_id)) === 1) throw new ConflictError('A pipeline keeps at least one stage');

    let target: StageRow | undefined;
    if (moveTo !== undefined) {
      target = await findStage(trx, moveTo);
      if (!target || target.pipeline_id !== stage.pipeline_id || target.id === stage.id) {
        throw ValidationError.field('moveTo', 'Must be another stage of the same pipeline');
      }
    }
    const deals = await countDealsInStage(trx, id);
    if (deals > 0 && !target) {
      throw new ConflictError(`The stage holds ${deals} deal(s); give moveTo (a stage of the same pipeline) to move them`, { deals });
    }
    // Moving a stage's deals is a stage change of each: history rows and stage_changed (+ won/lost) events.
    const movedDeals = target && deals > 0 ? (await moveLockedDeals(trx, actorContext(actor), await lockDealsInStage(trx, id), target)).length : 0;
    await deleteStage(trx, id);
    await compactPositions(trx, stage.pipeline_id);
    return { movedDeals };
  });
}

/** `order` must name each stage of the pipeline exactly once. */
export async function reorderStages(db: Db, actor: Actor, pipelineId: number, order: number[]): Promise<PipelineJson> {
  return db.transaction().execute(async (trx) => {
    await lockVisiblePipeline(trx, actor, pipelineId);
    const current = new Set((await stagesOf(trx, [pipelineId])).map((stage) => stage.id));
    const exact = order.length === current.size && new Set(order).size === order.length && order.every((id) => current.has(id));
    if (!exact) throw ValidationError.field('order', `Must list each of the pipeline's ${current.size} stage ids exactly once`);
    await setStageOrder(trx, pipelineId, order);
    return pipelineJson(trx, pipelineId);
  });
}
