import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteDeps } from './deps.js';
import {
  createPipelineBody,
  editPipelineBody,
  pipelineJson,
  stageWithPipelineJson,
} from '../domain/pipelines/pipelines.schemas.js';
import { createPipeline, editPipeline, getPipeline, listPipelines, listStages, removePipeline } from '../domain/pipelines/pipelines.service.js';
import { actorOf } from '../http/guard.js';
import { id, idParams, successResponse } from '../http/schemas.js';
import { stageRoutes } from './stages.routes.js';

const view = { permission: 'service:pipelines:view' } as const;
const manage = { permission: 'service:pipelines:manage' } as const;
const tags = ['pipelines'];
const pipelineResponse = { 200: z.object({ pipeline: pipelineJson }) };

export const pipelineRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, deps) => {
  const { db, baseUrl } = deps;

  app.get(
    '/service/stages',
    {
      config: view,
      schema: {
        tags,
        summary: 'List the stages visible to the caller',
        querystring: z.object({ pipeline: id.optional() }),
        response: { 200: z.object({ stages: z.array(stageWithPipelineJson) }) },
      },
    },
    async (request) => ({ stages: await listStages(db, actorOf(request), request.query.pipeline) }),
  );

  app.get(
    '/service/pipelines',
    {
      config: view,
      schema: { tags, summary: 'List pipelines with their ordered stages', response: { 200: z.object({ pipelines: z.array(pipelineJson) }) } },
    },
    async (request) => ({ pipelines: await listPipelines(db, actorOf(request)) }),
  );

  app.get(
    '/service/pipelines/:id',
    { config: view, schema: { tags, summary: 'Get a pipeline with its ordered stages', params: idParams, response: pipelineResponse } },
    async (request) => ({ pipeline: await getPipeline(db, actorOf(request), request.params.id) }),
  );

  app.post(
    '/service/pipelines/new',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Create a pipeline with its stages',
        description: 'pipeline[roles][] (role ids) limits who sees it; none: every role. pipeline[isDefault]=true makes it the default.',
        body: createPipelineBody,
        response: pipelineResponse,
      },
    },
    async (request, reply) => {
      const pipeline = await createPipeline(db, request.body);
      void reply.header('Location', `${baseUrl}/service/pipelines/${pipeline.id}`);
      return { pipeline };
    },
  );

  app.post(
    '/service/pipelines/:id/edit',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Rename a pipeline, make it the default or change the roles that see it',
        params: idParams,
        body: editPipelineBody,
        response: pipelineResponse,
      },
    },
    async (request) => ({ pipeline: await editPipeline(db, actorOf(request), request.params.id, request.body.pipeline) }),
  );

  app.delete(
    '/service/pipelines/:id',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Delete a pipeline and its stages (409 while it holds deals, or is the default)',
        params: idParams,
        response: { 200: successResponse },
      },
    },
    async (request) => {
      await removePipeline(db, actorOf(request), request.params.id);
      return { success: true as const };
    },
  );

  await app.register(stageRoutes, deps);
};
