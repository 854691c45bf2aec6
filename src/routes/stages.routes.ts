import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteDeps } from './deps.js';
import {
  addStageBody,
  deleteStageQuery,
  editStageBody,
  pipelineJson,
  reorderBody,
  stageWithPipelineJson,
} from '../domain/pipelines/pipelines.schemas.js';
import { addStage, editStage, getStage, removeStage, reorderStages } from '../domain/pipelines/stages.service.js';
import { actorOf } from '../http/guard.js';
import { idParams } from '../http/schemas.js';

const manage = { permission: 'service:pipelines:manage' } as const;
const tags = ['pipelines'];
const stageResponse = { 200: z.object({ stage: stageWithPipelineJson }) };

/** Stages of a pipeline: add, edit, delete (moving its deals), reorder. Registered by pipelines.routes. */
export const stageRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, { db, baseUrl }) => {
  app.get(
    '/service/stages/:id',
    { config: { permission: 'service:pipelines:view' }, schema: { tags, summary: 'Get a stage', params: idParams, response: stageResponse } },
    async (request) => ({ stage: await getStage(db, actorOf(request), request.params.id) }),
  );

  app.post(
    '/service/pipelines/:id/stages/new',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Add a stage (stage[position] 1..n+1, default last)',
        params: idParams,
        body: addStageBody,
        response: stageResponse,
      },
    },
    async (request, reply) => {
      const stage = await addStage(db, actorOf(request), request.params.id, request.body.stage);
      void reply.header('Location', `${baseUrl}/service/stages/${stage.id}`);
      return { stage };
    },
  );

  app.post(
    '/service/stages/:id/edit',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Edit a stage (its type cannot change while it holds deals)',
        params: idParams,
        body: editStageBody,
        response: stageResponse,
      },
    },
    async (request) => ({ stage: await editStage(db, actorOf(request), request.params.id, request.body.stage) }),
  );

  app.delete(
    '/service/stages/:id',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Delete a stage; its deals move to moveTo (a stage of the same pipeline), else 409',
        description: 'DELETE /service/stages/{id}?moveTo={stageId}. Each moved deal is a stage move: history row and deal.stage_changed (+ won/lost) events.',
        params: idParams,
        querystring: deleteStageQuery,
        response: { 200: z.object({ success: z.literal(true), movedDeals: z.number() }) },
      },
    },
    async (request) => ({ success: true as const, ...(await removeStage(db, actorOf(request), request.params.id, request.query.moveTo)) }),
  );

  app.post(
    '/service/pipelines/:id/stages/reorder',
    {
      config: manage,
      schema: {
        tags,
        summary: "Reorder stages: order[] lists each of the pipeline's stage ids once, first to last",
        params: idParams,
        body: reorderBody,
        response: { 200: z.object({ pipeline: pipelineJson }) },
      },
    },
    async (request) => ({ pipeline: await reorderStages(db, actorOf(request), request.params.id, request.body.order) }),
  );
};
