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
import { MAX_FORECAST_MONTHS, pipelineForecast } from '../domain/deals/forecast.service.js';
import { forecastJson } from '../domain/deals/forecast.schemas.js';
import { actorOf } from '../http/guard.js';
import { id, idParams, isoDate, successResponse } from '../http/schemas.js';
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

  app.get(
    '/service/pipelines/:id/forecast',
    {
      config: { permission: ['service:deals:viewown', 'service:deals:viewother'] },
      schema: {
        tags,
        summary: 'The forecast of a pipeline for a period',
        description:
          'From the deals the caller may see: open deals by expected close month (count, amount, amount weighted by stage probability), ' +
          'won deals by the month they were won (count, amount), the win rate (won / (won + lost) of the deals closed in the period) and the ' +
          `average days from creation to won; in total and by owner, per currency. Months are UTC calendar months; \`from\` and \`to\` default to the current quarter and may span at most ${MAX_FORECAST_MONTHS} months.`,
        params: idParams,
        querystring: z.object({ from: isoDate.optional(), to: isoDate.optional() }),
        response: { 200: z.object({ forecast: forecastJson }) },
      },
    },
    async (request) => ({ forecast: await pipelineForecast(db, actorOf(request), request.params.id, request.query) }),
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
