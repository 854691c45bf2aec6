import type { Db, Trx } from '../../db/database.js';
import type { Actor } from '../../host/permissions.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../http/errors.js';
import {
  canSeePipeline,
  deletePipeline,
  existingRoleIds,
  findPipeline,
  insertPipeline,
  listRoleChoices,
  lockPipeline,
  makeDefaultPipeline,
  pipelineUsage,
  renamePipeline,
  replacePipelineRoles,
  rolesOf,
  stagesOf,
  visiblePipelineIds,
  type PipelineRow,
  type StageRow,
} from './pipelines.repository.js';
import { insertStages, type StageValues } from './stages.repository.js';

export interface StageJson {
  id: number;
  name: string;
  type: StageRow['type'];
  position: number;
  probability: number;
  /** #rrggbb, or null for the default look. */
  color: string | null;
}

export interface PipelineJson {
  id: number;
  name: string;
  isDefault: boolean;
  /** Role ids the pipeline is limited to; empty means every role sees it. */
  roles: number[];
  stages: StageJson[];
}

export interface PipelineInput {
  name?: string;
  isDefault?: boolean;
  roles?: number[];
}

export const toStageJson = (stage: StageRow): StageJson => ({
  id: stage.id,
  name: stage.name,
  type: stage.type,
  position: stage.position,
  probability: stage.probability,
  color: stage.color,
});

/** Won stages are sure by default; every other stage starts at 0 %. */
export const defaultProbability = (type: StageRow['type']) => (type === 'won' ? 100 : 0);

async function visiblePipelines(db: Db, actor: Actor): Promise<PipelineRow[]> {
  const visible = await visiblePipelineIds(db, actor);
  let query = db.selectFrom('pipelines').select(['id', 'name', 'is_default']).orderBy('id');
  if (visible !== 'all') {
    if (visible.length === 0) return [];
    query = query.where('id', 'in', visible);
  }
  return query.execute();
}

async function withStages(db: Db | Trx, pipelines: PipelineRow[]): Promise<PipelineJson[]> {
  const ids = pipelines.map((p) => p.id);
  const [stages, roles] = await Promise.all([stagesOf(db, ids), rolesOf(db, ids)]);
  return pipelines.map((pipeline) => ({
    id: pipeline.id,
    name: pipeline.name,
    isDefault: pipeline.is_default,
    roles: roles.get(pipeline.id) ?? [],
    stages: stages.filter((s) => s.pipeline_id === pipeline.id).map(toStageJson),
  }));
}

/** Pipelines the actor may see, each with its stages in order. */
export async function listPipelines(db: Db, actor: Actor): Promise<PipelineJson[]> {
  return withStages(db, await visiblePipelines(db, actor));
}

/** Pipelines as the pages offer them to choose from: the default one first, the rest in the list's order. */
export function defaultFirst<P extends { isDefault: boolean }>(pipelines: P[]): P[] {
  return [...pipelines].sort((a, b) => Number(b.isDefault) - Number(a.isDefault));
}

/** Stages of the pipelines the actor may see, optionally of one pipeline. */
export async function listStages(db: Db, actor: Actor, pipelineId?: number) {
  const pipelines = (await visiblePipelines(db, actor)).filter((p) => pipelineId === undefined || p.id === pipelineId);
  const byId = new Map(pipelines.map((p) => [p.id, { id: p.id, name: p.name }]));
  const stages = await stagesOf(db, [...byId.keys()]);
  return stages.map((stage) => ({ ...toStageJson(stage), pipeline: byId.get(stage.pipeline_id)! }));
}

export async function assertVisible(db: Db | Trx, actor: Actor, id: number): Promise<void> {
  if (!(await canSeePipeline(db, actor, id))) throw new ForbiddenError('This pipeline is not open to your role');
}

/**
 * The pipeline, locked for a change of shape, if the actor may see it. A hidden
 * pipeline that exists is a 403, as for deals; managing one requires seeing it.
 */
export async function lockVisiblePipeline(trx: Trx, actor: Actor, id: number): Promise<PipelineRow> {
  const pipeline = await lockPipeline(trx, id);
  if (!pipeline) throw new NotFoundError('Pipeline');
  await assertVisible(trx, actor, id);
  return pipeline;
}

/** The pipeline as JSON, without a visibility check (for the answer to a write that already checked). */
export async function pipelineJson(db: Db | Trx, id: number): Promise<PipelineJson> {
  const pipeline = await findPipeline(db, id);
  if (!pipeline) throw new NotFoundError('Pipeline');
  return (await withStages(db, [pipeline]))[0]!;
}

export async function getPipeline(db: Db, actor: Actor, id: number): Promise<PipelineJson> {
  const json = await pipelineJson(db, id);
  await assertVisible(db, actor, id);
  return json;
}

export interface RoleChoice {
  id: number;
  name: string;
  isAdmin: boolean;
}

/** The roles `roles` may name (administrators see every pipeline whatever it names). */
export async function pipelineRoleChoices(db: Db): Promise<RoleChoice[]> {
  return (await listRoleChoices(db)).map((role) => ({ id: role.id, name: role.name, isAdmin: role.is_admin }));
}

async function applyRoles(trx: Trx, id: number, roles: number[], field: string): Promise<void> {
  const unique = [...new Set(roles)];
  const known = await existingRoleIds(trx, unique);
  const unknown = roles.findIndex((role) => !known.has(role));
  if (unknown >= 0) throw ValidationError.field(`${field}[${unknown}]`, 'Role not found');
  await replacePipelineRoles(trx, id, unique);
}

export async function createPipeline(
  db: Db,
  input: { pipeline: PipelineInput & { name: string }; stages: (Omit<StageValues, 'probability'> & { probability?: number })[] },
): Promise<PipelineJson> {
  return db.transaction().execute(async (trx) => {
    const id = await insertPipeline(trx, input.pipeline.name);
    await insertStages(
      trx,
      id,
      input.stages.map((stage, index) => ({
        ...stage,
        probability: stage.probability ?? defaultProbability(stage.type),
        color: stage.color ?? null,
        position: index + 1,
      })),
    );
    if (input.pipeline.roles) await applyRoles(trx, id, input.pipeline.roles, 'pipeline[roles]');
    if (input.pipeline.isDefault) await makeDefaultPipeline(trx, id);
    return pipelineJson(trx, id);
  });
}

/** There is always exactly one default: it moves by making another pipeline the default. */
export async function editPipeline(db: Db, actor: Actor, id: number, input: PipelineInput): Promise<PipelineJson> {
  return db.transaction().execute(async (trx) => {
    const pipeline = await lockVisiblePipeline(trx, actor, id);
    if (input.isDefault === false && pipeline.is_default) {
      throw new ConflictError('This is the default pipeline; make another pipeline the default instead');
    }
    if (input.name !== undefined) await renamePipeline(trx, id, input.name);
    if (input.roles) await applyRoles(trx, id, input.roles, 'pipeline[roles]');
    if (input.isDefault && !pipeline.is_default) await makeDefaultPipeline(trx, id);
    return pipelineJson(trx, id);
  });
}

export async function removePipeline(db: Db, actor: Actor, id: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // FOR UPDATE (not the shape lock): new deals must wait until the pipeline is gone.
    const pipeline = await trx.selectFrom('pipelines').select(['id', 'is_default']).where('id', '=', id).forUpdate().executeTakeFirst();
    if (!pipeline) throw new NotFoundError('Pipeline');
    await assertVisible(trx, actor, id);
    if (pipeline.is_default) throw new ConflictError('The default pipeline cannot be deleted; make another pipeline the default first');
    const usage = await pipelineUsage(trx, id);
    if (usage.deals > 0) throw new ConflictError(`The pipeline holds ${usage.deals} deal(s); move or delete them first`, usage);
    if (usage.sources > 0) {
      throw new ConflictError(`${usage.sources} inbound webhook source(s) create deals in this pipeline; change them first`, usage);
    }
    await deletePipeline(trx, id);
  });
}
