import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { NotFoundError, ValidationError } from '../../http/errors.js';
import { can, type Actor } from '../../host/permissions.js';
import { findPipeline, visiblePipelineIds } from '../pipelines/pipelines.repository.js';
import { assertVisible } from '../pipelines/pipelines.service.js';
import { all, visibilityFilters } from './deals.list.js';

/**
 * A pipeline's forecast for a period, from the deals the caller may see (the
 * deal list's visibility rule):
 * - open deals by expected close month: count, amount, and amount weighted by
 *   their stage's probability;
 * - won deals by the month they were won: count and amount, and the average
 *   days from creation to won;
 * - the win rate: won / (won + lost) of the deals closed in the period.
 * By owner and in total, per currency (amounts in different currencies are
 * never added). Months are calendar months in UTC.
 *
 * Periods of whole months, asked by a caller who sees every deal, read the
 * monthly sums the triggers keep (deal_forecast_sums); anything else
 * aggregates the deals. Both answer the same figures.
 */

export const MAX_FORECAST_MONTHS = 36;

interface Figures {
  open: { count: number; amount: number; weighted: number };
  won: { count: number; amount: number };
  lost: { count: number };
}

export interface CurrencyForecast extends Figures {
  currency: string;
  winRate: number | null;
  averageDaysToWin: number | null;
  months: ({ month: string } & Omit<Figures, 'lost'>)[];
}

export interface Forecast {
  pipeline: { id: number; name: string };
  from: string;
  to: string;
  months: string[];
  totals: CurrencyForecast[];
  owners: { owner: { id: number; name: string } | null; currencies: CurrencyForecast[] }[];
}

interface Row {
  is_total: boolean;
  owner_id: number | null;
  owner_name: string | null;
  currency: string;
  kind: 'open' | 'won' | 'lost';
  month: string;
  n: number;
  amount: string;
  weighted: string | null;
  days: string | null;
}

/** The calendar quarter holding `today` (the default period). */
export function currentQuarter(today = new Date()): { from: string; to: string } {
  const year = today.getUTCFullYear();
  const first = Math.floor(today.getUTCMonth() / 3) * 3;
  const last = new Date(Date.UTC(year, first + 3, 0));
  return { from: `${year}-${String(first + 1).padStart(2, '0')}-01`, to: last.toISOString().slice(0, 10) };
}

function monthsBetween(from: string, to: string): string[] {
  const months: string[] = [];
  let [year, month] = from.split('-').map(Number) as [number, number];
  const end = to.slice(0, 7);
  for (;;) {
    const key = `${year}-${String(month).padStart(2, '0')}`;
    months.push(key);
    if (key >= end) return months;
    if (++month > 12) [year, month] = [year + 1, 1];
  }
}

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

function assemble(rows: Row[], months: string[]): CurrencyForecast[] {
  const byCurrency = new Map<string, Row[]>();
  for (const row of rows) byCurrency.set(row.currency, [...(byCurrency.get(row.currency) ?? []), row]);
  return [...byCurrency.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, group]) => {
      const sum = (kind: Row['kind'], pick: (row: Row) => number, month?: string) =>
        group.filter((row) => row.kind === kind && (month === undefined || row.month === month)).reduce((total, row) => total + pick(row), 0);
      const count = (row: Row) => row.n;
      const amount = (row: Row) => Number(row.amount);
      const figures = (month?: string) => ({
        open: { count: sum('open', count, month), amount: round(sum('open', amount, month), 2), weighted: round(sum('open', (r) => Number(r.weighted), month), 2) },
        won: { count: sum('won', count, month), amount: round(sum('won', amount, month), 2) },
      });
      const won = sum('won', count);
      const lost = sum('lost', count);
      return {
        currency,
        ...figures(),
        lost: { count: lost },
        winRate: won + lost === 0 ? null : round(won / (won + lost), 4),
        averageDaysToWin: won === 0 ? null : round(sum('won', (row) => Number(row.days)) / won, 1),
        months: months.map((month) => ({ month, ...figures(month) })),
      };
    });
}

/** Whether the period is whole calendar months (the page's periods and the default quarter are). */
function wholeMonths(from: string, to: string): boolean {
  const dayAfter = new Date(`${to}T00:00:00Z`);
  dayAfter.setUTCDate(dayAfter.getUTCDate() + 1);
  return from.endsWith('-01') && dayAfter.getUTCDate() === 1;
}

/*
 * Both sources below answer the same rows: (owner_id, currency, kind, month,
 * n, amount, weighted, days), summed by the query around them.
 */

/**
 * Whole months, for a caller who sees every deal of the pipeline: the sums
 * the triggers keep per month in deal_forecast_sums (open deals by expected
 * close month, won and lost deals by the UTC month they closed). A quarter is
 * a few thousand rows whatever the pipeline holds.
 */
function summedFacts(pipelineId: number, from: string, to: string) {
  return sql`
    select nullif(sums.owner_id, 0) as owner_id, sums.currency, sums.status as kind, to_char(sums.month, 'YYYY-MM') as month,
           sums.deals as n, sums.amount,
           case when sums.status = 'open' then sums.amount * stages.probability / 100 end as weighted,
           case when sums.status = 'won' then sums.days end as days
    from deal_forecast_sums sums join stages on stages.id = sums.stage_id
    where sums.pipeline_id = ${pipelineId} and sums.month >= ${from}::date and sums.month <= ${to}::date`;
}

/**
 * Any other period, or a caller who sees only their own deals: the deals
 * themselves, each kind an index range scan (deals_forecast_* partial
 * indexes). Closed deals count in the month (UTC) they closed; the period's
 * end day is included whole.
 */
function dealFacts(pipelineId: number, from: string, to: string, visible: ReturnType<typeof all>) {
  const scoped = (status: 'open' | 'won' | 'lost', column: 'close_date' | 'won_at' | 'lost_at') => sql`
    select deals.owner_id, deals.currency, deals.amount, deals.stage_id, deals.close_date, deals.created_at, deals.won_at, deals.lost_at
    from deals
    where deals.pipeline_id = ${pipelineId} and deals.status = ${status} and ${visible}
      and deals.${sql.raw(column)} >= ${from}::date and deals.${sql.raw(column)} < ${to}::date + 1`;
  return sql`
    select open.owner_id, open.currency, 'open' as kind, to_char(open.close_date, 'YYYY-MM') as month, 1 as n, open.amount,
           open.amount * stages.probability / 100 as weighted, null::numeric as days
      from (${scoped('open', 'close_date')}) open
      join stages on stages.id = open.stage_id
    union all
    select owner_id, currency, 'won', to_char(won_at at time zone 'UTC', 'YYYY-MM'), 1, amount, null,
           extract(epoch from won_at - created_at) / 86400
      from (${scoped('won', 'won_at')}) won
    union all
    select owner_id, currency, 'lost', to_char(lost_at at time zone 'UTC', 'YYYY-MM'), 1, amount, null, null
      from (${scoped('lost', 'lost_at')}) lost`;
}

export async function pipelineForecast(db: Db, actor: Actor, pipelineId: number, period: { from?: string; to?: string }): Promise<Forecast> {
  const { from, to } = { ...currentQuarter(), ...Object.fromEntries(Object.entries(period).filter(([, v]) => v !== undefined)) };
  if (from > to) throw ValidationError.field('to', 'Must not be before from');
  const months = monthsBetween(from, to);
  if (months.length > MAX_FORECAST_MONTHS) throw ValidationError.field('to', `The period may span at most ${MAX_FORECAST_MONTHS} months`);
  const pipeline = await findPipeline(db, pipelineId);
  if (!pipeline) throw new NotFoundError('Pipeline');
  await assertVisible(db, actor, pipelineId);

  const facts = wholeMonths(from, to) && can(actor, 'service:deals:viewother')
    ? summedFacts(pipelineId, from, to)
    : dealFacts(pipelineId, from, to, all(visibilityFilters(actor, await visiblePipelineIds(db, actor))));
  const { rows } = await sql<Row>`
    with facts as (${facts})
    select grouping(facts.owner_id) = 1 as is_total, facts.owner_id, max(users.name) as owner_name, facts.currency, kind, month,
           sum(n)::int as n, sum(amount) as amount, sum(weighted) as weighted, sum(days) as days
    from facts left join users on users.id = facts.owner_id
    group by grouping sets ((facts.owner_id, facts.currency, kind, month), (facts.currency, kind, month))
    having sum(n) <> 0`.execute(db);

  const owners = new Map<number | null, { owner: { id: number; name: string } | null; rows: Row[] }>();
  for (const row of rows.filter((r) => !r.is_total)) {
    const entry = owners.get(row.owner_id) ?? { owner: row.owner_id === null ? null : { id: row.owner_id, name: row.owner_name ?? '' }, rows: [] };
    entry.rows.push({ ...row, currency: row.currency.trim() });
    owners.set(row.owner_id, entry);
  }
  return {
    pipeline: { id: pipeline.id, name: pipeline.name },
    from,
    to,
    months,
    totals: assemble(
      rows.filter((r) => r.is_total).map((r) => ({ ...r, currency: r.currency.trim() })),
      months,
    ),
    owners: [...owners.values()]
      .sort((a, b) => (a.owner?.name ?? '\uffff').localeCompare(b.owner?.name ?? '\uffff'))
      .map(({ owner, rows: ownerRows }) => ({ owner, currencies: assemble(ownerRows, months) })),
  };
}
