import { sql, type Expression, type SqlBool } from 'kysely';
import type { Executor, Trx } from '../../db/database.js';
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
  color: string | null;
}

export interface PipelineRow {
  id: number;
  name: string;
  is_default: boolean;
}

export const stageColumns = ['id', 'pipeline_id', 'name', 'type', 'position', 'probability', 'color'] as const;

/**
 * The visibility rule as an SQL condition on a pipeline id (a column reference):
 * no roles listed means open to every role, else the actor's role must be
 * listed; admins see every pipeline. The one place the rule is written.
 */
export function pipelineVisibleTo(actor: Actor, pipelineId: Expression<number>): Expression<SqlBool> {
  if (actor.isAdmin) return sql<SqlBool>`true`;
  return sql<SqlBool>`(not exists (select 1 from pipeline_roles where pipeline_roles.pipeline_id = ${pipelineId})
    or exists (select 1 from pipeline_roles where pipeline_roles.pipeline_id = ${pipelineId} and pipeline_roles.role_id = ${actor.roleId}))`;
}

/** Pipeline ids the actor may see, or 'all' for admins (so callers can skip the filter). */
export async function visiblePipelineIds(db: Executor, actor: Actor): Promise<number[] | 'all'> {
  if (actor.isAdmin) return 'all';
  const rows = await db
    .selectFrom('pipelines')
    .select('pipelines.id')
    .where(pipelineVisibleTo(actor, sql.ref('pipelines.id')))
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

export function findStages(db: Executor, ids: number[]): Promise<StageRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return db.selectFrom('stages').select(stageColumns).where('id', 'in', ids).execute();
}

export function findStage(db: Executor, id: number): Promise<StageRow | undefined> {
  return db.selectFrom('stages').select(stageColumns).where('id', '=', id).executeTakeFirst();
}

/**
 * Where new deals of a pipeline (by id, or the default one) start: its first
 * stage (lowest position), read with the pipeline in one statement. Undefined
 * when there is no such pipeline; `stage` undefined when it has no stages.
 */
export async function findEntryStage(
  db: Executor,
  pipelineId: number | 'default',
): Promise<{ pipelineId: number; stage: StageRow | undefined } | undefined> {
  const row = await db
    .selectFrom('pipelines')
    .leftJoinLateral(
      (eb) => eb.selectFrom('stages').select(stageColumns).whereRef('stages.pipeline_id', '=', 'pipelines.id').orderBy('position').limit(1).as('first'),
      (join) => join.onTrue(),
    )
    .selectAll('first')
    .select('pipelines.id as found_pipeline_id')
    .where((eb) => (pipelineId === 'default' ? eb('pipelines.is_default', '=', true) : eb('pipelines.id', '=', pipelineId)))
    .executeTakeFirst();
  if (!row) return undefined;
  const { found_pipeline_id, ...stage } = row;
  return { pipelineId: found_pipeline_id, stage: stage.id === null ? undefined : (stage as StageRow) };
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

/** Role ids each pipeline is limited to (absent or empty: open to every role). */
export async function rolesOf(db: Executor, pipelineIds: number[]): Promise<Map<number, number[]>> {
  const byPipeline = new Map<number, number[]>();
  if (pipelineIds.length === 0) return byPipeline;
  const rows = await db
    .selectFrom('pipeline_roles')
    .select(['pipeline_id', 'role_id'])
    .where('pipeline_id', 'in', pipelineIds)
    .orderBy('role_id')
    .execute();
  for (const row of rows) byPipeline.set(row.pipeline_id, [...(byPipeline.get(row.pipeline_id) ?? []), row.role_id]);
  return byPipeline;
}

/**
 * Serializes changes to a pipeline's shape (stages, positions) without blocking
 * deal writes: FOR NO KEY UPDATE does not conflict with the key-share locks that
 * deals' foreign keys take.
 */
export function lockPipeline(trx: Trx, id: number): Promise<PipelineRow | undefined> {
  return trx.selectFrom('pipelines').select(['id', 'name', 'is_default']).where('id', '=', id).forNoKeyUpdate().executeTakeFirst();
}

export async function insertPipeline(db: Executor, name: string): Promise<number> {
  const row = await db.insertInto('pipelines').values({ name }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function renamePipeline(db: Executor, id: number, name: string): Promise<void> {
  await db.updateTable('pipelines').set({ name, updated_at: new Date() }).where('id', '=', id).execute();
}

/** Exactly one default: an advisory lock orders concurrent switches, the partial unique index backs it. */
export async function makeDefaultPipeline(trx: Trx, id: number): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('deal-pipeline-default'))`.execute(trx);
  await trx.updateTable('pipelines').set({ is_default: false, updated_at: new Date() }).where('is_default', '=', true).where('id', '<>', id).execute();
  await trx.updateTable('pipelines').set({ is_default: true, updated_at: new Date() }).where('id', '=', id).execute();
}

export async function replacePipelineRoles(db: Executor, id: number, roleIds: number[]): Promise<void> {
  await db.deleteFrom('pipeline_roles').where('pipeline_id', '=', id).execute();
  if (roleIds.length > 0) {
    await db.insertInto('pipeline_roles').values(roleIds.map((role_id) => ({ pipeline_id: id, role_id }))).execute();
  }
}

export async function deletePipeline(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('pipelines').where('id', '=', id).execute();
}

/** What still points at a pipeline: its deals and the inbound sources that create deals in it. */
export async function pipelineUsage(db: Executor, id: number): Promise<{ deals: number; sources: number }> {
  const row = await db
    .selectNoFrom((eb) => [
      eb.selectFrom('deals').select((e) => e.fn.countAll<number>().as('n')).where('pipeline_id', '=', id).as('deals'),
      eb.selectFrom('inbound_sources').select((e) => e.fn.countAll<number>().as('n')).where('pipeline_id', '=', id).as('sources'),
    ])
    .executeTakeFirstOrThrow();
  return { deals: Number(row.deals), sources: Number(row.sources) };
}

export async function existingRoleIds(db: Executor, roleIds: number[]): Promise<Set<number>> {
  if (roleIds.length === 0) return new Set();
  const rows = await db.selectFrom('roles').select('id').where('id', 'in', roleIds).execute();
  return new Set(rows.map((row) => row.id));
}

/** The roles a pipeline can be limited to, by name. */
export function listRoleChoices(db: Executor): Promise<{ id: number; name: string; is_admin: boolean }[]> {
  return db.selectFrom('roles').select(['id', 'name', 'is_admin']).orderBy('name').orderBy('id').execute();
}
