import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteDeps } from '../app.js';
import { listPipelines, listStages } from '../domain/pipelines/pipelines.service.js';
import { actorOf } from '../http/guard.js';
import { id } from '../http/schemas.js';

const stageJson = z.object({
  id: z.number(),
  name: z.string(),
  type: z.enum(['open', 'won', 'lost']),
  position: z.number(),
  probability: z.number(),
});
const pipelineJson = z.object({ id: z.number(), name: z.string(), isDefault: z.boolean(), stages: z.array(stageJson) });

export const pipelineRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, { db }) => {
  app.get(
    '/service/stages',
    {
      config: { permission: 'service:pipelines:view' },
      schema: {
        tags: ['pipelines'],
        summary: 'List the stages visible to the caller',
        querystring: z.object({ pipeline: id.optional() }),
        response: { 200: z.object({ stages: z.array(stageJson.extend({ pipeline: z.object({ id: z.number(), name: z.string() }) })) }) },
      },
    },
    async (request) => ({ stages: await listStages(db, actorOf(request), request.query.pipeline) }),
  );

  app.get(
    '/service/pipelines',
    {
      config: { permission: 'service:pipelines:view' },
      schema: {
        tags: ['pipelines'],
        summary: 'List pipelines with their ordered stages',
        response: { 200: z.object({ pipelines: z.array(pipelineJson) }) },
      },
    },
    async (request) => ({ pipelines: await listPipelines(db, actorOf(request)) }),
  );
};
