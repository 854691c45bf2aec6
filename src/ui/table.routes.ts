import type { FastifyInstance, FastifyRequest } from 'fastify';
import { runBatch, type BatchRequest } from '../domain/deals/batch.service.js';
import { DEAL_PERMISSIONS } from '../domain/deals/deal-access.js';
import { listDeals, type DealListQuery } from '../domain/deals/deals.list.js';
import { batchBody, listQuery } from '../domain/deals/deals.schemas.js';
import { findPerson } from '../domain/deals/deals.service.js';
import { listPipelines } from '../domain/pipelines/pipelines.service.js';
import type { UiOptions } from './index.js';
import { check, parseForm } from './forms.js';
import { layout, sendHtml, toastHeader, viewOf, type View } from './page.js';
import { batchError, batchResults, tablePage } from './table.view.js';
import { PICKER_USERS } from './user-picker.js';

/** The deals table (GET /service/deals for browsers) and its batch actions, through the API's list and batch. */

export async function tableRoutes(app: FastifyInstance, deps: UiOptions): Promise<void> {
  const { db, host } = deps;
  const base = app.prefix;
  const view = (request: FastifyRequest): View => viewOf(request, base);

  deps.pages.set('/service/deals', async (request, reply) => {
    const v = view(request);
    // The route already validated the query with listQuery; parsing again gives the typed result.
    const query: DealListQuery = check(listQuery, request.query);
    const [page, pipelines, users, owner] = await Promise.all([
      listDeals(db, v.actor, query),
      listPipelines(db, v.actor),
      host.users.search({ limit: PICKER_USERS }),
      query.owner ? findPerson(db, host, query.owner) : undefined,
    ]);
    return sendHtml(reply, layout(v, 'All deals', tablePage(v, { query, page, pipelines, users, owner }), '/service/deals'));
  });

  app.post(
    '/service/ui/deals/batch',
    { config: { permission: [...DEAL_PERMISSIONS.edit, ...DEAL_PERMISSIONS.delete], page: 'page' }, schema: { hide: true } },
    async (request, reply) => {
      const v = view(request);
      const body = { ...(request.body as Record<string, unknown>) };
      // One form serves every action: only the input the chosen action needs is sent on.
      if (body.action !== 'reassign') delete body.owner;
      if (body.action !== 'move_stage') delete body.stage_id;
      if (body.ids === undefined) return sendHtml(reply, batchError('Select at least one deal first.'));
      const parsed = parseForm(batchBody, body);
      if (!parsed.ok) return sendHtml(reply, batchError(Object.values(parsed.form.errors).flat().join(' ')));
      const { ids, action, owner, stage_id: stageId } = parsed.data;
      const batch: BatchRequest =
        action === 'delete' ? { action, ids } : action === 'reassign' ? { action, ids, owner: owner ?? null } : { action, ids, stageId: stageId! };
      const titles = new Map(
        (await db.selectFrom('deals').select(['id', 'title']).where('id', 'in', ids).execute()).map((row) => [row.id, row.title] as const),
      );
      const result = await runBatch(db, host, v.actor, batch);
      // Titles only of the deals the caller could act on: a refused id stays a number, as the API names it.
      for (const r of result.results) if (!r.ok) titles.delete(r.id);
      toastHeader(reply, `${result.succeeded} done, ${result.failed} failed`);
      return sendHtml(reply, batchResults(result, titles));
    },
  );
}
