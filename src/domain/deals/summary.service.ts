import { sql, type SqlBool } from 'kysely';
import type { Db } from '../../db/database.js';
import type { StageType } from '../../db/schema.js';
import { NotFoundError } from '../../http/errors.js';
import { can, type Actor } from '../../host/permissions.js';
import { containsPattern } from '../paging.js';
import { findPipeline, visiblePipelineIds } from '../pipelines/pipelines.repository.js';
import { assertVisible } from '../pipelines/pipelines.service.js';
import { all, visibilityFilters } from './deals.list.js';

/**
 * A pipeline's figures per stage and in total: deal count, amount and amount
 * weighted by the stage's probability, per currency (amounts in different
 * currencies are never added). Over the deals the caller may see (the deal
 * list's visibility rule); open deals unless `status` asks otherwise. The API's
 * summary route and the board's column headers both read this.
 */

export type SummaryStatus = StageType | 'all';

export interface SummaryFilters {
  status?: SummaryStatus;
  owner?: number;
  search?: string;
}

export interface CurrencyFigures {
  currency: string;
  count: number;
  amount: number;
  weighted: number;
}

export interface StageSummary {
  stage: { id: number; name: string; type: StageType; position: number; probability: number };
  currencies: CurrencyFigures[];
}

export interface PipelineSummary {
  pipeline: { id: number; name: string };
  status: SummaryStatus;
  stages: StageSummary[];
  totals: CurrencyFigures[];
}

interface Row {
  stage_id: number | null;
  currency: string;
  n: number;
  amount: string;
  weighted: string;
}

const figures = (row: Row): CurrencyFigures => ({
  currency: row.currency.trim(),
  count: row.n,
  amount: Number(row.amount),
  weighted: Number(row.weighted),
});

/**
 * Without a title search the figures are sums over deal_counters (kept by
 * triggers per stage, status, owner, creator and currency): a few thousand
 * rows at most, whatever the pipeline holds. Weighted amounts are rounded per
 * stage and currency, then the totals add the rounded figures, so a
 * pipeline's total is the sum of what its columns show.
 */
async function readSums(db: Db, actor: Actor, visible: number[] | 'all', pipelineId: number, status: SummaryStatus, filters: SummaryFilters) {
  const where = visibilityFilters(actor, visible, '');
  where.push(sql<SqlBool>`pipeline_id = ${pipelineId}`);
  if (status !== 'all') where.push(sql<SqlBool>`status = ${status}`);
  if (filters.owner !== undefined) where.push(sql<SqlBool>`owner_id = ${filters.owner}`);
  const { rows } = await sql<Row>`
    select sums.stage_id, sums.currency, sums.n, sums.amount, round(sums.amount * stages.probability / 100.0, 2) as weighted
    from (
      select stage_id, currency, sum(deals)::int as n, sum(amount) as amount
      from deal_counters
      where ${all(where)}
      group by stage_id, currency
      having sum(deals) <> 0
    ) as sums join stages on stages.id = sums.stage_id
    order by sums.currency, sums.stage_id`.execute(db);
  return rows;
}

/** A title search needs the deals themselves: the same figures, aggregated at the call. */
async function aggregateDeals(
  db: Db,
  actor: Actor,
  visible: number[] | 'all',
  pipelineId: number,
  status: SummaryStatus,
  filters: SummaryFilters,
) {
  const where = visibilityFilters(actor, visible);
  where.push(sql<SqlBool>`deals.pipeline_id = ${pipelineId}`);
  if (status !== 'all') where.push(sql<SqlBool>`deals.status = ${status}`);
  if (filters.owner !== undefined) where.push(sql<SqlBool>`deals.owner_id = ${filters.owner}`);
  if (filters.search) where.push(sql<SqlBool>`deals.title ilike ${containsPattern(filters.search)}`);
  const { rows } = await sql<Row>`
    select deals.stage_id, deals.currency, count(*)::int as n, sum(deals.amount) as amount,
           round(sum(deals.amount) * stages.probability / 100.0, 2) as weighted
    from deals join stages on stages.id = deals.stage_id
    where ${all(where)}
    group by deals.stage_id, deals.currency, stages.probability
    order by deals.currency, deals.stage_id`.execute(db);
  return rows;
}

export async function pipelineSummary(db: Db, actor: Actor, pipelineId: number, filters: SummaryFilters = {}): Promise<PipelineSummary> {
  const pipeline = await findPipeline(db, pipelineId);
  if (!pipeline) throw new NotFoundError('Pipeline');
  await assertVisible(db, actor, pipelineId);
  const status = filters.status ?? 'open';

  const visible = await visiblePipelineIds(db, actor);
  // Without either view permission the caller sees no deal at all (the list route would refuse them).
  const blind = !can(actor, 'service:deals:viewown') && !can(actor, 'service:deals:viewother');
  const rows = blind
    ? []
    : filters.search
      ? await aggregateDeals(db, actor, visible, pipelineId, status, filters)
      : await readSums(db, actor, visible, pipelineId, status, filters);

  const stages = await db
    .selectFrom('stages')
    .select(['id', 'name', 'type', 'position', 'probability'])
    .where('pipeline_id', '=', pipelineId)
    .orderBy('position')
    .execute();

  const totals = new Map<string, CurrencyFigures>();
  for (const row of rows) {
    const each = figures(row);
    const total = totals.get(each.currency) ?? { currency: each.currency, count: 0, amount: 0, weighted: 0 };
    total.count += each.count;
    total.amount = Math.round((total.amount + each.amount) * 100) / 100;
    total.weighted = Math.round((total.weighted + each.weighted) * 100) / 100;
    totals.set(each.currency, total);
  }
  return {
    pipeline: { id: pipeline.id, name: pipeline.name },
    status,
    stages: stages.map((stage) => ({ stage, currencies: rows.filter((row) => row.stage_id === stage.id).map(figures) })),
    totals: [...totals.values()],
  };
}
