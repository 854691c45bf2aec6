import { describe, expect, it } from 'vitest';
import { setupApp } from './helpers/app.js';
import { createDeal, createUser } from './helpers/factories.js';

describe('tasks', () => {
  it('creates a task from a form body with an existing assignee', async () => {
    const t = await setupApp();
    const assignee = await createUser(t.db, [], { name: 'Asha' });
    const { id } = await createDeal(t.db);
    const res = await t.call({
      method: 'POST',
      url: `/service/${id}/tasks`,
      payload: `task[title]=Send+quote&task[dueDate]=2026-12-01&task[assignee]=${assignee.id}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(200);
    const task = res.json().task;
    expect(task).toMatchObject({
      deal: id,
      title: 'Send quote',
      dueDate: '2026-12-01',
      assignee: { id: assignee.id, name: 'Asha' },
      isCompleted: false,
      completedAt: null,
    });
    expect(res.headers.location).toBe(`http://service.test/service/tasks/${task.id}`);
    expect((await t.call({ method: 'GET', url: `/service/${id}/view` })).json().deal.tasks).toEqual([task]);
  });

  it('validates title, due date and assignee', async () => {
    const t = await setupApp();
    const { id } = await createDeal(t.db);
    const cases: [Record<string, unknown>, string][] = [
      [{ dueDate: '2026-12-01' }, 'task[title]'],
      [{ title: 'x', dueDate: '2026-02-30' }, 'task[dueDate]'],
      [{ title: 'x', assignee: 999999 }, 'task[assignee]'],
      [{ title: 'x', assignee: 'abc' }, 'task[assignee]'],
    ];
    for (const [task, field] of cases) {
      const res = await t.call({ method: 'POST', url: `/service/${id}/tasks`, payload: { task } });
      expect(res.statusCode, field).toBe(422);
      expect(res.json().errors[0].details, field).toHaveProperty([field]);
    }
  });

  it('completes with {"success":true,"task"}; completing again is a no-op; reopen works', async () => {
    const t = await setupApp();
    const { id } = await createDeal(t.db);
    const task = (await t.call({ method: 'POST', url: `/service/${id}/tasks`, payload: { task: { title: 'Call' } } })).json().task;
    const first = await t.call({ method: 'POST', url: `/service/tasks/${task.id}/complete` });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ success: true, task: { id: task.id, isCompleted: true } });
    const completedAt = first.json().task.completedAt;
    expect(completedAt).not.toBeNull();
    const again = await t.call({ method: 'POST', url: `/service/tasks/${task.id}/complete` });
    expect(again.json()).toMatchObject({ success: true, task: { isCompleted: true, completedAt } });

    const reopened = await t.call({ method: 'POST', url: `/service/tasks/${task.id}/reopen` });
    expect(reopened.json()).toMatchObject({ success: true, task: { isCompleted: false, completedAt: null } });
    expect((await t.call({ method: 'POST', url: '/service/tasks/999999/complete' })).statusCode).toBe(404);
  });

  it('edits only the fields sent and deletes', async () => {
    const t = await setupApp();
    const { id } = await createDeal(t.db);
    const task = (await t.call({ method: 'POST', url: `/service/${id}/tasks`, payload: { task: { title: 'Call', dueDate: '2026-05-01', assignee: 1 } } })).json().task;
    const edited = await t.call({ method: 'POST', url: `/service/tasks/${task.id}/edit`, payload: { task: { title: 'Call back' } } });
    expect(edited.json().task).toMatchObject({ title: 'Call back', dueDate: '2026-05-01', assignee: { id: 1 } });
    const cleared = await t.call({ method: 'PATCH', url: `/service/tasks/${task.id}`, payload: { task: { dueDate: null, assignee: null } } });
    expect(cleared.json().task).toMatchObject({ title: 'Call back', dueDate: null, assignee: null });
    expect((await t.call({ method: 'DELETE', url: `/service/tasks/${task.id}` })).json()).toEqual({ success: true });
    expect((await t.call({ method: 'GET', url: `/service/tasks/${task.id}` })).statusCode).toBe(404);
  });

  it('needs edit permission on the deal to complete its tasks', async () => {
    const t = await setupApp();
    const viewer = await createUser(t.db, ['service:deals:viewother', 'service:deals:editown']);
    const { id } = await createDeal(t.db);
    const task = (await t.call({ method: 'POST', url: `/service/${id}/tasks`, payload: { task: { title: 'Call' } } })).json().task;
    expect((await t.call({ method: 'POST', url: `/service/tasks/${task.id}/complete` }, viewer)).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `/service/tasks/${task.id}` }, viewer)).statusCode).toBe(200);
  });
});
