import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { RouteDeps } from './deps.js';
import { DEAL_PERMISSIONS } from '../domain/deals/deal-access.js';
import { listDeals } from '../domain/deals/deals.list.js';
import {
  createDealBody,
  dealResponse,
  listQuery,
  listResponse,
  toDealInput,
  toNewDealInput,
  updateDealBody,
} from '../domain/deals/deals.schemas.js';
import { createDealAsActor, deleteDealAsActor, getDeal, updateDealAsActor } from '../domain/deals/deals.service.js';
import { actorOf } from '../http/guard.js';
import { idParams, successResponse } from '../http/schemas.js';
import { dealActionRoutes } from './deal-actions.routes.js';
import { dealCommitteeRoutes } from './deal-committee.routes.js';
import { dealNoteRoutes } from './deal-notes.routes.js';
import { dealTaskRoutes } from './deal-tasks.routes.js';

/**
 * Deals (contract section 4). `/service/deals/...` paths are static and win
 * over `/service/:id/...` in the router; a non-numeric `:id` is a 404.
 */
export const dealRoutes: FastifyPluginAsyncZod<RouteDeps> = async (app, deps) => {
  const { db, host, baseUrl } = deps;
  const tags = ['deals'];

  app.get(
    '/service/deals',
    {
      // Browsers preferring HTML get the deals table page instead (src/ui).
      config: { permission: DEAL_PERMISSIONS.view, page: 'negotiated' },
      schema: {
        tags,
        summary: 'List the deals visible to the caller',
        description:
          'Offset pages with `page`, or cursor pages with `after` (the `next` of the previous answer; fast at any depth). ' +
          '`total` is exact unless `totalApproximate` is true: with `search` or a close-date range the count stops at 1,000.',
        querystring: listQuery,
        response: { 200: listResponse },
      },
    },
    async (request) => listDeals(db, actorOf(request), request.query),
  );

  app.post(
    '/service/deals/new',
    {
      config: { permission: 'service:deals:create' },
      schema: { tags, summary: 'Create a deal', body: createDealBody, response: { 200: dealResponse } },
    },
    async (request, reply) => {
      const deal = await createDealAsActor(db, host, actorOf(request), toNewDealInput(request.body.deal, deps.config.DEFAULT_CURRENCY));
      void reply.header('Location', `${baseUrl}/service/${deal.id}/view`);
      return { deal };
    },
  );

  app.get(
    '/service/:id/view',
    {
      // Browsers preferring HTML get the deal page instead (src/ui).
      config: { permission: DEAL_PERMISSIONS.view, page: 'negotiated' },
      schema: { tags, summary: 'Get a deal with stage, pipeline, contacts, notes and tasks', params: idParams, response: { 200: dealResponse } },
    },
    async (request) => ({ deal: await getDeal(db, host, actorOf(request), request.params.id) }),
  );

  const update = {
    config: { permission: DEAL_PERMISSIONS.edit },
    schema: { tags, summary: 'Update a deal (only the fields sent)', params: idParams, body: updateDealBody, response: { 200: dealResponse } },
  };
  for (const [method, url] of [['POST', '/service/:id/edit'], ['PATCH', '/service/:id']] as const) {
    app.route({
      method,
      url,
      ...update,
      handler: async (request) => ({
        deal: await updateDealAsActor(db, host, actorOf(request), request.params.id, toDealInput(request.body.deal)),
      }),
    });
  }

  for (const [method, url] of [['DELETE', '/service/:id'], ['POST', '/service/:id/delete']] as const) {
    app.route({
      method,
      url,
      config: { permission: DEAL_PERMISSIONS.delete },
      schema: { tags, summary: 'Delete a deal', params: idParams, response: { 200: successResponse } },
      handler: async (request) => {
        await deleteDealAsActor(db, actorOf(request), request.params.id);
        return { success: true as const };
      },
    });
  }

  await app.register(dealActionRoutes, deps);
  await app.register(dealCommitteeRoutes, deps);
  await app.register(dealNoteRoutes, deps);
  await app.register(dealTaskRoutes, deps);
};
