import { sql } from 'kysely';
import type { Executor, Trx } from '../../db/database.js';
import type { TaskJsonRow } from './deal-json.js';

/** What a task's JSON needs, from deal_tasks left-joined with `users as assignee` (also used by the deal view). */
export const TASK_COLUMNS = [
  'deal_tasks.id',
  'deal_tasks.deal_id',
  'deal_tasks.title',
  'deal_tasks.due_date',
  'deal_tasks.assignee_id',
  'assignee.name as assignee_name',
  'deal_tasks.is_completed',
  'deal_tasks.completed_at',
  'deal_tasks.created_at',
  'deal_tasks.updated_at',
] as const;

export function findTask(db: Executor, id: number): Promise<TaskJsonRow | undefined> {
  return db
    .selectFrom('deal_tasks')
    .leftJoin('users as assignee', 'assignee.id', 'deal_tasks.assignee_id')
    .select(TASK_COLUMNS)
    .where('deal_tasks.id', '=', id)
    .executeTakeFirst();
}

export interface TaskValues {
  title?: string;
  due_date?: string | null;
  assignee_id?: number | null;
}

export async function insertTask(trx: Trx, dealId: number, values: TaskValues & { title: string; created_by_id: number }): Promise<number> {
  const row = await trx
    .insertInto('deal_tasks')
    .values({ deal_id: dealId, ...values })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function updateTask(trx: Trx, id: number, values: TaskValues): Promise<void> {
  await trx.updateTable('deal_tasks').set({ ...values, updated_at: sql<Date>`now()` }).where('id', '=', id).execute();
}

/** Flips the completion flag; false when it already had that value (so completing twice is a no-op). */
export async function setTaskCompleted(trx: Trx, id: number, completed: boolean): Promise<boolean> {
  const result = await trx
    .updateTable('deal_tasks')
    .set({ is_completed: completed, completed_at: completed ? sql<Date>`now()` : null, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('is_completed', '=', !completed)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteTask(trx: Trx, id: number): Promise<void> {
  await trx.deleteFrom('deal_tasks').where('id', '=', id).execute();
}
