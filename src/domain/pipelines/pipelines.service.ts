import type { Db } from '../../db/database.js';
import type { Actor } from '../../host/permissions.js';
import { stagesOf, visiblePipelineIds, type PipelineRow, type StageRow } from './pipelines.repository.js';

export interface StageJson {
  id: number;
  name: string;
  type: StageRow['type'];
  position: number;
  probability: number;
}

export interface PipelineJson {
  id: number;
  name: string;
  isDefault: boolean;
  stages: StageJson[];
}

export const toStageJson = (stage: StageRow): StageJson => ({
  id: stage.id,
  name: stage.name,
  type: stage.type,
  position: stage.position,
  probability: stage.probability,
});

async function visiblePipelines(db: Db, actor: Actor): Promise<PipelineRow[]> {
  const visible = await visiblePipelineIds(db, actor);
  let query = db.selectFrom('pipelines').select(['id', 'name', 'is_default']).orderBy('id');
  if (visible !== 'all') {
    if (visible.length === 0) return [];
    query = query.where('id', 'in', visible);
  }
  return query.execute();
}

/** Pipelines the actor may see, each with its stages in order. */
export async function listPipelines(db: Db, actor: Actor): Promise<PipelineJson[]> {
  const pipelines = await visiblePipelines(db, actor);
  const stages = await stagesOf(db, pipelines.map((p) => p.id));
  return pipelines.map((pipeline) => ({
    id: pipeline.id,
    name: pipeline.name,
    isDefault: pipeline.is_default,
    stages: stages.filter((s) => s.pipeline_id === pipeline.id).map(toStageJson),
  }));
}

/** Stages of the pipelines the actor may see, optionally of one pipeline. */
export async function listStages(db: Db, actor: Actor, pipelineId?: number) {
  const pipelines = (await visiblePipelines(db, actor)).filter((p) => pipelineId === undefined || p.id === pipelineId);
  const byId = new Map(pipelines.map((p) => [p.id, { id: p.id, name: p.name }]));
  const stages = await stagesOf(db, [...byId.keys()]);
  return stages.map((stage) => ({ ...toStageJson(stage), pipeline: byId.get(stage.pipeline_id)! }));
}
