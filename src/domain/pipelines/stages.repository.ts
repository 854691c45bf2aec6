import { sql } from 'kysely';
import type { Executor, Trx } from '../../db/database.js';
import type { StageType } from '../../db/schema.js';
import { stageColumns, type StageRow } from './pipelines.repository.js';

/** Writes to stages. Positions are 1..n per pipeline; their unique constraint is checked at commit. */

export interface StageValues {
  name: string;
  type: StageType;
  probability: number;
  color?: string | null;
}

/** Locks the stage row: deals cannot enter it (their foreign key waits) until the transaction ends. */
export function lockStage(trx: Trx, id: number): Promise<StageRow | undefined> {
  return trx.selectFrom('stages').select(stageColumns).where('id', '=', id).forUpdate().executeTakeFirst();
}

export function insertStages(db: Executor, pipelineId: number, stages: (StageValues & { position: number })[]): Promise<StageRow[]> {
  return db
    .insertInto('stages')
    .values(stages.map((stage) => ({ ...stage, pipeline_id: pipelineId })))
    .returning(stageColumns)
    .execute();
}

export function updateStage(db: Executor, id: number, values: Partial<StageValues>): Promise<StageRow> {
  return db
    .updateTable('stages')
    .set({ ...values, updated_at: new Date() })
    .where('id', '=', id)
    .returning(stageColumns)
    .executeTakeFirstOrThrow();
}

export async function deleteStage(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('stages').where('id', '=', id).execute();
}

export async function stageCount(db: Executor, pipelineId: number): Promise<number> {
  const row = await db
    .selectFrom('stages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('pipeline_id', '=', pipelineId)
    .executeTakeFirstOrThrow();
  return row.n;
}

/** Makes room at `position` by moving that stage and the ones after it down by one. */
export async function shiftStagesFrom(db: Executor, pipelineId: number, position: number): Promise<void> {
  await db
    .updateTable('stages')
    .set((eb) => ({ position: eb('position', '+', 1) }))
    .where('pipeline_id', '=', pipelineId)
    .where('position', '>=', position)
    .execute();
}

/** Positions become 1..n in the given order of stage ids. */
export async function setStageOrder(db: Executor, pipelineId: number, orderedIds: number[]): Promise<void> {
  await sql`
    update stages set position = ordered.position, updated_at = now()
    from unnest(${sql.val(orderedIds)}::int[]) with ordinality as ordered(id, position)
    where stages.id = ordered.id and stages.pipeline_id = ${pipelineId}
  `.execute(db);
}

/** Closes the gap a deleted stage leaves. */
export async function compactPositions(db: Executor, pipelineId: number): Promise<void> {
  await sql`
    update stages set position = ranked.position
    from (select id, row_number() over (order by position) as position from stages where pipeline_id = ${pipelineId}) ranked
    where stages.id = ranked.id and stages.position <> ranked.position
  `.execute(db);
}

export async function countDealsInStage(db: Executor, stageId: number): Promise<number> {
  const row = await db
    .selectFrom('deals')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('stage_id', '=', stageId)
    .executeTakeFirstOrThrow();
  return row.n;
}

