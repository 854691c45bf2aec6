import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteDeps } from './deps.js';
import { runBatch, type BatchRequest } from '../domain/deals/batch.service.js';
import { DEAL_PERMISSIONS } from '../domain/deals/deal-access.js';
import { batchBody, batchResponse, dealResponse, historyResponse, inlineBody, stageMoveBody } from '../domain/deals/deals.schemas.js';
import { inlineUpdate, moveDealStage } from '../domain/deals/deals.service.js';
import { stageHistory } from '../domain/deals/history.service.js';
import { actorOf } from '../http/guard.js';
import { idParams } from '../http/schemas.js';

/** Stage moves, inline updates, batch actions and stage history. */
export const dealActionRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, { db, host }) => {
  const tags = ['deals'];

  app.post(
    '/service/:id/stage',
    {
      config: { permission: DEAL_PERMISSIONS.edit },
      schema: {
        tags,
        summary: 'Move a deal to a stage',
        description: 'Status follows the stage type (won/lost set wonAt/lostAt); moving to the current stage changes nothing.',
        params: idParams,
        body: stageMoveBody,
        response: { 200: dealResponse },
      },
    },
    async (request) => ({
      deal: await moveDealStage(db, actorOf(request), request.params.id, {
        stageId: request.body.stage_id,
        lostReason: request.body.lost_reason,
      }),
    }),
  );

  app.post(
    '/service/:id/inline',
    {
      config: { permission: DEAL_PERMISSIONS.edit },
      schema: {
        tags,
        summary: 'Update one field in place',
        params: idParams,
        body: inlineBody,
        response: {
          200: z.object({
            success: z.literal(true),
            field: z.string(),
            value: z.union([z.string(), z.number(), z.null()]),
          }),
        },
      },
    },
    async (request) => {
      const { field, value } = request.body;
      const stored = await inlineUpdate(db, host, actorOf(request), request.params.id, field, value);
      return { success: true as const, field, value: stored };
    },
  );

  app.post(
    '/service/deals/batch',
    {
      config: { permission: [...DEAL_PERMISSIONS.edit, ...DEAL_PERMISSIONS.delete] },
      schema: {
        tags,
        summary: 'Apply delete, reassign or move_stage to up to 200 deals',
        description: 'Each deal succeeds or fails on its own (permission, not found); an invalid request as a whole is a 422.',
        body: batchBody,
        response: { 200: batchResponse },
      },
    },
    async (request) => {
      const { ids, action, owner, stage_id: stageId } = request.body;
      const batch: BatchRequest =
        action === 'delete'
          ? { action, ids }
          : action === 'reassign'
            ? { action, ids, owner: owner! }
            : { action, ids, stageId: stageId! };
      return runBatch(db, host, actorOf(request), batch);
    },
  );

  app.get(
    '/service/:id/history',
    {
      config: { permission: DEAL_PERMISSIONS.view },
      schema: { tags, summary: 'Stage history with the time spent in each stage', params: idParams, response: { 200: historyResponse } },
    },
    async (request) => ({ history: await stageHistory(db, actorOf(request), request.params.id) }),
  );
};
