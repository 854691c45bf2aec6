import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteDeps } from './deps.js';
import { DEAL_PERMISSIONS } from '../domain/deals/deal-access.js';
import { createTaskBody, taskJson, updateTaskBody } from '../domain/deals/deals.schemas.js';
import { completeTask, createTask, deleteTask, editTask, getTask, reopenTask } from '../domain/deals/tasks.service.js';
import { actorOf } from '../http/guard.js';
import { id, idParams, successResponse } from '../http/schemas.js';

/** Tasks on deals: create, edit, complete (idempotent), reopen, delete. */
export const dealTaskRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, { db, host, baseUrl }) => {
  const tags = ['tasks'];
  const edit = { permission: DEAL_PERMISSIONS.edit };
  const taskResponse = { 200: z.object({ task: taskJson }) };
  const flagResponse = { 200: z.object({ success: z.literal(true), task: taskJson }) };
  const taskParams = z.object({ taskId: id });

  app.post(
    '/service/:id/tasks',
    {
      config: edit,
      schema: { tags, summary: 'Create a task on a deal', params: idParams, body: createTaskBody, response: taskResponse },
    },
    async (request, reply) => {
      const task = await createTask(db, host, actorOf(request), request.params.id, request.body.task);
      void reply.header('Location', `${baseUrl}/service/tasks/${task.id}`);
      return { task };
    },
  );

  app.get(
    '/service/tasks/:taskId',
    {
      config: { permission: DEAL_PERMISSIONS.view },
      schema: { tags, summary: 'Get a task', params: taskParams, response: taskResponse },
    },
    async (request) => ({ task: await getTask(db, actorOf(request), request.params.taskId) }),
  );

  for (const [method, url] of [['POST', '/service/tasks/:taskId/edit'], ['PATCH', '/service/tasks/:taskId']] as const) {
    app.route({
      method,
      url,
      config: edit,
      schema: { tags, summary: 'Edit a task (only the fields sent)', params: taskParams, body: updateTaskBody, response: taskResponse },
      handler: async (request) => ({ task: await editTask(db, host, actorOf(request), request.params.taskId, request.body.task) }),
    });
  }

  app.post(
    '/service/tasks/:taskId/complete',
    {
      config: edit,
      schema: { tags, summary: 'Complete a task (completing again changes nothing)', params: taskParams, response: flagResponse },
    },
    async (request) => ({ success: true as const, task: await completeTask(db, actorOf(request), request.params.taskId) }),
  );

  app.post(
    '/service/tasks/:taskId/reopen',
    {
      config: edit,
      schema: { tags, summary: 'Reopen a completed task', params: taskParams, response: flagResponse },
    },
    async (request) => ({ success: true as const, task: await reopenTask(db, actorOf(request), request.params.taskId) }),
  );

  for (const [method, url] of [['DELETE', '/service/tasks/:taskId'], ['POST', '/service/tasks/:taskId/delete']] as const) {
    app.route({
      method,
      url,
      config: edit,
      schema: { tags, summary: 'Delete a task', params: taskParams, response: { 200: successResponse } },
      handler: async (request) => {
        await deleteTask(db, actorOf(request), request.params.taskId);
        return { success: true as const };
      },
    });
  }
};
