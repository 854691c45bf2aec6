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

export async function pipelineSummary(db: Db, actor: Actor, pipelineId: number, filters: SummaryFilters = {}): Promise<PipelineSummary> {
  const pipeline = await findPipeline(db, pipelineId);
  if (!pipeline) throw new NotFoundError('Pipeline');
  await assertVisible(db, actor, pipelineId);
  const status = filters.status ?? 'open';

  const where = visibilityFilters(actor, await visiblePipelineIds(db, actor));
  // Without either view permission the caller sees no deal at all (the list route would refuse them).
  if (!can(actor, 'service:deals:viewown') && !can(actor, 'service:deals:viewother')) where.push(sql<SqlBool>`false`);
  where.push(sql<SqlBool>`deals.pipeline_id = ${pipelineId}`);
  if (status !== 'all') where.push(sql<SqlBool>`deals.status = ${status}`);
  if (filters.owner !== undefined) where.push(sql<SqlBool>`deals.owner_id = ${filters.owner}`);
  if (filters.search) where.push(sql<SqlBool>`deals.title ilike ${containsPattern(filters.search)}`);

  // Weighted amounts are rounded per stage and currency, then the totals add the rounded figures,
  // so a pipeline's total is the sum of what its columns show.
  const { rows } = await sql<Row>`
    select deals.stage_id, deals.currency, count(*)::int as n, sum(deals.amount) as amount,
           round(sum(deals.amount * stages.probability / 100.0), 2) as weighted
    from deals join stages on stages.id = deals.stage_id
    where ${all(where)}
    group by deals.stage_id, deals.currency
    order by deals.currency`.execute(db);

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
