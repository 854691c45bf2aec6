import type { Executor } from '../../db/database.js';
import type { StageType } from '../../db/schema.js';
import type { Actor } from '../../host/permissions.js';

/**
 * Reads of pipelines and stages, with role visibility: a pipeline with no rows in
 * pipeline_roles is open to every role; otherwise only to the listed roles.
 * Admins see every pipeline.
 */

export interface StageRow {
  id: number;
  pipeline_id: number;
  name: string;
  type: StageType;
  position: number;
  probability: number;
}

export interface PipelineRow {
  id: number;
  name: string;
  is_default: boolean;
}

const stageColumns = ['id', 'pipeline_id', 'name', 'type', 'position', 'probability'] as const;

/** Pipeline ids the actor may see, or 'all' for admins (so callers can skip the filter). */
export async function visiblePipelineIds(db: Executor, actor: Actor): Promise<number[] | 'all'> {
  if (actor.isAdmin) return 'all';
  const rows = await db
    .selectFrom('pipelines')
    .select('pipelines.id')
    .where((eb) =>
      eb.or([
        eb.not(eb.exists(eb.selectFrom('pipeline_roles').select('pipeline_roles.role_id').whereRef('pipeline_roles.pipeline_id', '=', 'pipelines.id'))),
        eb.exists(
          eb
            .selectFrom('pipeline_roles')
            .select('pipeline_roles.role_id')
            .whereRef('pipeline_roles.pipeline_id', '=', 'pipelines.id')
            .where('pipeline_roles.role_id', '=', actor.roleId),
        ),
      ]),
    )
    .execute();
  return rows.map((row) => row.id);
}

export async function canSeePipeline(db: Executor, actor: Actor, pipelineId: number): Promise<boolean> {
  const visible = await visiblePipelineIds(db, actor);
  return visible === 'all' || visible.includes(pipelineId);
}

export function findPipeline(db: Executor, id: number): Promise<PipelineRow | undefined> {
  return db.selectFrom('pipelines').select(['id', 'name', 'is_default']).where('id', '=', id).executeTakeFirst();
}

export function findDefaultPipeline(db: Executor): Promise<PipelineRow | undefined> {
  return db.selectFrom('pipelines').select(['id', 'name', 'is_default']).where('is_default', '=', true).executeTakeFirst();
}

export function findStage(db: Executor, id: number): Promise<StageRow | undefined> {
  return db.selectFrom('stages').select(stageColumns).where('id', '=', id).executeTakeFirst();
}

/** The first stage of a pipeline (lowest position): where new deals start. */
export function firstStage(db: Executor, pipelineId: number): Promise<StageRow | undefined> {
  return db
    .selectFrom('stages')
    .select(stageColumns)
    .where('pipeline_id', '=', pipelineId)
    .orderBy('position')
    .limit(1)
    .executeTakeFirst();
}

export function stagesOf(db: Executor, pipelineIds: number[]): Promise<StageRow[]> {
  if (pipelineIds.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('stages')
    .select(stageColumns)
    .where('pipeline_id', 'in', pipelineIds)
    .orderBy('pipeline_id')
    .orderBy('position')
    .execute();
}
