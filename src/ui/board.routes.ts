import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DEAL_PERMISSIONS } from '../domain/deals/deal-access.js';
import { listDeals } from '../domain/deals/deals.list.js';
import { createDealBody, stageMoveBody, toDealInput } from '../domain/deals/deals.schemas.js';
import { createDealAsActor, findPerson, moveDealStage } from '../domain/deals/deals.service.js';
import { pipelineSummary } from '../domain/deals/summary.service.js';
import { summaryQuery } from '../domain/deals/summary.schemas.js';
import { defaultFirst, listPipelines, type PipelineJson } from '../domain/pipelines/pipelines.service.js';
import { NotFoundError, ValidationError } from '../http/errors.js';
import { id } from '../http/schemas.js';
import type { UiOptions } from './index.js';
import { check, formFromError, parseForm } from './forms.js';
import { html } from './html.js';
import { card, boardPage, columnHeader, moreCards, pipelineTotals, quickAdd, CARDS_PER_PAGE, type BoardFilters } from './board.view.js';
import { layout, sendHtml, toastHeader, viewOf, type View } from './page.js';
import { PICKER_USERS } from './user-picker.js';

/**
 * The board: a column per stage of one pipeline, cards from the deal list (the
 * API's visibility rule and keyset cursor, 50 at a time per column), column
 * figures from the pipeline summary, moves through moveDealStage.
 */

const boardQuery = summaryQuery.extend({ pipeline: id.optional() });
const cardsQuery = boardQuery.extend({ stage: id, after: z.string().max(1000) });
const boardFilterBody = z.object({ board: summaryQuery.partial().optional() });

function chosenPipeline(pipelines: PipelineJson[], wanted?: number): PipelineJson {
  const pipeline = wanted ? pipelines.find((p) => p.id === wanted) : (pipelines.find((p) => p.isDefault) ?? pipelines[0]);
  if (!pipeline) throw new NotFoundError('Pipeline');
  return pipeline;
}

export async function boardRoutes(app: FastifyInstance, deps: UiOptions): Promise<void> {
  const { db, host } = deps;
  const base = app.prefix;
  const view = (request: FastifyRequest): View => viewOf(request, base);
  const dealsView = { permission: DEAL_PERMISSIONS.view, page: 'page' } as const;

  const columnDeals = (v: View, filters: BoardFilters, stage: number, after?: string) =>
    listDeals(db, v.actor, {
      page: 1,
      limit: CARDS_PER_PAGE,
      pipeline: filters.pipeline,
      stage,
      status: filters.status === 'all' ? undefined : filters.status,
      owner: filters.owner,
      search: filters.search || undefined,
      // Newest first: a backward range scan of the (stage_id, id) index, fast at any depth.
      orderBy: 'id',
      orderByDir: 'desc',
      after,
    });

  const summaryOf = (v: View, f: BoardFilters) => pipelineSummary(db, v.actor, f.pipeline, f);

  app.get('/service/board', { config: dealsView, schema: { hide: true } }, async (request, reply) => {
    const v = view(request);
    const parsed = boardQuery.safeParse(request.query);
    const query = parsed.success ? parsed.data : { status: 'open' as const };
    // The switcher offers the default pipeline first.
    const pipelines = defaultFirst(await listPipelines(db, v.actor));
    if (pipelines.length === 0) return sendHtml(reply, layout(v, 'Board', html`<p class="panel">No pipeline is visible to you.</p>`, '/service/board'));
    const pipeline = chosenPipeline(pipelines, 'pipeline' in query ? query.pipeline : undefined);
    const filters: BoardFilters = { pipeline: pipeline.id, status: query.status, owner: 'owner' in query ? query.owner : undefined, search: 'search' in query ? query.search : undefined };
    const shown = pipeline.stages.filter((s) => (filters.status === 'all' ? true : s.type === filters.status));
    const [summary, owners, owner, columns] = await Promise.all([
      summaryOf(v, filters),
      host.users.search({ limit: PICKER_USERS }),
      filters.owner ? findPerson(db, host, filters.owner) : undefined,
      Promise.all(shown.map(async (stage) => ({ stage, ...(await columnDeals(v, filters, stage.id)) }))),
    ]);
    const dropZones = filters.status === 'open' ? pipeline.stages.filter((s) => s.type !== 'open') : [];
    const body = boardPage(v, {
      pipelines,
      pipeline,
      filters,
      summary,
      owners,
      owner,
      dropZones,
      columns: columns.map((c) => ({ stage: c.stage, deals: c.deals, next: c.next })),
    });
    return sendHtml(reply, layout(v, `${pipeline.name} board`, body, '/service/board'));
  });

  // The next page of one column (htmx, when its "Load more" scrolls into view).
  app.get('/service/ui/board/cards', { config: dealsView, schema: { hide: true } }, async (request, reply) => {
    const v = view(request);
    const query = check(cardsQuery, request.query);
    const filters: BoardFilters = { pipeline: query.pipeline!, status: query.status, owner: query.owner, search: query.search };
    if (!filters.pipeline) throw ValidationError.field('pipeline', 'Required');
    const page = await columnDeals(v, filters, query.stage, query.after);
    return sendHtml(reply, html`${page.deals.map((deal) => card(v, deal))}${moreCards(v, filters, query.stage, page.next)}`);
  });

  /** Column headers and the pipeline total, swapped out of band after a change. */
  async function figuresUpdate(v: View, filters: BoardFilters) {
    const summary = await summaryOf(v, filters);
    const pipelines = await listPipelines(db, v.actor);
    // Only the stages shown as columns have a header to update (won/lost are drop zones on the open board).
    const stages = chosenPipeline(pipelines, filters.pipeline).stages.filter((s) => filters.status === 'all' || s.type === filters.status);
    return html`${stages.map((stage) => columnHeader(stage, summary, true))}${pipelineTotals(summary, true)}`;
  }

  const filtersFrom = (body: unknown, pipeline: number): BoardFilters => {
    const parsed = boardFilterBody.safeParse(body);
    const f = parsed.success ? (parsed.data.board ?? {}) : {};
    return { pipeline, status: f.status ?? 'open', owner: f.owner, search: f.search };
  };

  // A drag and drop: the API's stage move (status from the stage type, history, events).
  app.post('/service/ui/board/move', { config: { permission: DEAL_PERMISSIONS.edit, page: 'page' }, schema: { hide: true } }, async (request, reply) => {
    const v = view(request);
    const body = request.body as Record<string, unknown>;
    const dealId = check(id, body.deal_id);
    const move = check(stageMoveBody, body);
    const deal = await moveDealStage(db, v.actor, dealId, { stageId: move.stage_id, lostReason: move.lost_reason });
    const filters = filtersFrom(body, deal.pipeline.id);
    const stillShown = filters.status === 'all' || deal.status === filters.status;
    toastHeader(reply, `“${deal.title}” moved to ${deal.stage.name}`);
    return sendHtml(reply, html`${stillShown ? card(v, deal) : ''}${await figuresUpdate(v, filters)}`);
  });

  // Quick "new deal" in a column: the API's create with the contract's body (deal[title], deal[amount], deal[stage]).
  app.post('/service/ui/board/deals', { config: { permission: 'service:deals:create', page: 'page' }, schema: { hide: true } }, async (request, reply) => {
    const v = view(request);
    const parsed = parseForm(createDealBody, request.body);
    const body = request.body as Record<string, unknown>;
    const pipelines = await listPipelines(db, v.actor);
    const pipelineId = parsed.ok ? parsed.data.deal.pipeline : Number((body.deal as Record<string, unknown> | undefined)?.pipeline);
    const pipeline = chosenPipeline(pipelines, pipelineId || undefined);
    const stageId = parsed.ok ? parsed.data.deal.stage : Number((body.deal as Record<string, unknown> | undefined)?.stage);
    const stage = pipeline.stages.find((s) => s.id === stageId);
    if (!stage) throw ValidationError.field('deal[stage]', 'Not a stage of this pipeline');
    const filters = filtersFrom(body, pipeline.id);
    if (!parsed.ok) return sendHtml(reply, quickAdd(v, filters, stage, parsed.form, true));
    try {
      const fields = parsed.data.deal;
      const deal = await createDealAsActor(db, host, v.actor, { ...toDealInput(fields), title: fields.title, currency: fields.currency ?? deps.config.DEFAULT_CURRENCY });
      toastHeader(reply, `Deal “${deal.title}” added`);
      return sendHtml(
        reply,
        html`${quickAdd(v, filters, stage, { values: {}, errors: {} })}<div hx-swap-oob="afterbegin:#cards-${stage.id}">${card(v, deal)}</div>${await figuresUpdate(v, filters)}`,
      );
    } catch (error) {
      return sendHtml(reply, quickAdd(v, filters, stage, formFromError(error, request.body), true));
    }
  });
}
