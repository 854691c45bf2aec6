import type { Db, Trx } from '../../db/database.js';
import { recordDealEvent } from '../../events/events.js';
import { NotFoundError } from '../../http/errors.js';
import type { Actor } from '../../host/permissions.js';
import type { People } from '../../host/port.js';
import { actorContext, assertCanViewDeal, lockDealFor } from './deal-access.js';
import { toTaskJson, type TaskJson } from './deal-json.js';
import { assertUser } from './deal-write.js';
import { deleteTask as deleteTaskRow, findTask, insertTask, setTaskCompleted, updateTask, type TaskValues } from './tasks.repository.js';

/**
 * Tasks on a deal. Writes need edit permission on the deal and lock it, so a
 * task and its deal's event sequence change together.
 */

export interface TaskInput {
  title?: string;
  dueDate?: string | null;
  assignee?: number | null;
}

async function toValues(trx: Trx, input: TaskInput): Promise<TaskValues> {
  await assertUser(trx, input.assignee, 'task[assignee]');
  return { title: input.title, due_date: input.dueDate, assignee_id: input.assignee };
}

async function lockTaskFor(trx: Trx, actor: Actor, taskId: number) {
  const task = await findTask(trx, taskId);
  if (!task) throw new NotFoundError('Task');
  await lockDealFor(trx, actor, task.deal_id, 'edit');
  return task;
}

async function reload(trx: Trx, taskId: number): Promise<TaskJson> {
  const task = await findTask(trx, taskId);
  if (!task) throw new NotFoundError('Task'); // deleted while we waited for the deal's lock
  return toTaskJson(task);
}

export async function createTask(db: Db, people: People, actor: Actor, dealId: number, input: TaskInput & { title: string }): Promise<TaskJson> {
  if (input.assignee) await people.users.ensure([input.assignee]);
  return db.transaction().execute(async (trx) => {
    await lockDealFor(trx, actor, dealId, 'edit');
    const values = await toValues(trx, input);
    return reload(trx, await insertTask(trx, dealId, { ...values, title: input.title, created_by_id: actor.id }));
  });
}

export async function getTask(db: Db, actor: Actor, taskId: number): Promise<TaskJson> {
  const task = await findTask(db, taskId);
  if (!task) throw new NotFoundError('Task');
  await assertCanViewDeal(db, actor, task.deal_id);
  return toTaskJson(task);
}

export async function editTask(db: Db, people: People, actor: Actor, taskId: number, input: TaskInput): Promise<TaskJson> {
  if (input.assignee) await people.users.ensure([input.assignee]);
  return db.transaction().execute(async (trx) => {
    await lockTaskFor(trx, actor, taskId);
    await updateTask(trx, taskId, await toValues(trx, input));
    return reload(trx, taskId);
  });
}

/** Completing records `service.deal.task_completed` once; completing a done task changes nothing. */
export async function completeTask(db: Db, actor: Actor, taskId: number): Promise<TaskJson> {
  return db.transaction().execute(async (trx) => {
    const { deal_id: dealId } = await lockTaskFor(trx, actor, taskId);
    const completed = await setTaskCompleted(trx, taskId, true);
    const task = await reload(trx, taskId);
    if (completed) {
      const { deal: _deal, ...extra } = task;
      await recordDealEvent(trx, { event: 'service.deal.task_completed', dealId, changedBy: actorContext(actor).changedBy, extras: { task: extra } });
    }
    return task;
  });
}

export async function reopenTask(db: Db, actor: Actor, taskId: number): Promise<TaskJson> {
  return db.transaction().execute(async (trx) => {
    await lockTaskFor(trx, actor, taskId);
    await setTaskCompleted(trx, taskId, false);
    return reload(trx, taskId);
  });
}

export async function deleteTask(db: Db, actor: Actor, taskId: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockTaskFor(trx, actor, taskId);
    await deleteTaskRow(trx, taskId);
  });
}
