import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../db/database.js';
import type { StageType } from '../../db/schema.js';
import { ValidationError } from '../../http/errors.js';
import { can, type Actor } from '../../host/permissions.js';
import { containsPattern } from '../paging.js';
import { visiblePipelineIds } from '../pipelines/pipelines.repository.js';
import { toDealSummaryJson, type DealSummaryJson } from './deal-json.js';
import { dealSummaryQuery } from './deal-view.js';

/**
 * The deal list: visibility, filters, sorting, offset pages and `after`
 * cursors (keyset on (sort column, id), an index range scan at any depth).
 *
 * `total` is exact and cheap when the filters are ones the trigger-kept
 * deal_counters table can answer (pipeline, stage, status, owner, plus
 * visibility and view-own). With a title search or a close-date range it is a
 * count capped at TOTAL_CAP rows: past the cap `totalApproximate` is true and
 * `total` is a lower bound.
 */

export const ORDER_COLUMNS = {
  id: { column: 'deals.id', type: 'integer', nullable: false },
  title: { column: 'deals.title', type: 'text', nullable: false },
  amount: { column: 'deals.amount', type: 'numeric', nullable: false },
  closeDate: { column: 'deals.close_date', type: 'date', nullable: true },
  createdAt: { column: 'deals.created_at', type: 'timestamptz', nullable: false },
  updatedAt: { column: 'deals.updated_at', type: 'timestamptz', nullable: false },
} as const;

export type OrderBy = keyof typeof ORDER_COLUMNS;
export const TOTAL_CAP = 1_000;

export interface DealListQuery {
  page: number;
  limit: number;
  pipeline?: number;
  stage?: number;
  status?: StageType;
  owner?: number;
  search?: string;
  closeDateFrom?: string;
  closeDateTo?: string;
  orderBy: OrderBy;
  orderByDir: 'asc' | 'desc';
  after?: string;
}

export interface DealListPage {
  total: number;
  totalApproximate: boolean;
  page: number;
  limit: number;
  pages: number;
  deals: DealSummaryJson[];
  next: string | null;
}

interface Cursor {
  o: OrderBy;
  d: 'asc' | 'desc';
  /** The sort value as PostgreSQL prints it (exact, unlike a JS Date), null for a missing close date. */
  v: string | number | null;
  i: number;
}

const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify(cursor)).toString('base64url');

function decodeCursor(text: string, query: DealListQuery): Cursor {
  let cursor: Cursor;
  try {
    cursor = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Cursor;
  } catch {
    throw ValidationError.field('after', 'Not a cursor from this list');
  }
  if (!cursor || typeof cursor !== 'object' || !Number.isInteger(cursor.i) || !['string', 'number', 'object'].includes(typeof cursor.v)) {
    throw ValidationError.field('after', 'Not a cursor from this list');
  }
  if (cursor.o !== query.orderBy || cursor.d !== query.orderByDir) {
    throw ValidationError.field('after', 'The cursor belongs to another sort order; send the same orderBy and orderByDir');
  }
  return cursor;
}

type Condition = RawBuilder<SqlBool>;

export const all = (conditions: Condition[]): Condition =>
  conditions.length ? sql<SqlBool>`(${sql.join(conditions, sql` and `)})` : sql<SqlBool>`true`;

/** Rows after the cursor in (column, id) order; NULL close dates sort last ascending, first descending. */
function afterCursor(query: DealListQuery, cursor: Cursor): Condition {
  const { column, type, nullable } = ORDER_COLUMNS[query.orderBy];
  const col = sql.ref(column);
  const asc = query.orderByDir === 'asc';
  if (cursor.v === null) {
    return asc ? sql<SqlBool>`(${col} is null and deals.id > ${cursor.i})` : sql<SqlBool>`(${col} is not null or deals.id < ${cursor.i})`;
  }
  const keyset = sql<SqlBool>`(${col}, deals.id) ${sql.raw(asc ? '>' : '<')} (cast(${cursor.v} as ${sql.raw(type)}), ${cursor.i})`;
  return nullable && asc ? sql<SqlBool>`(${keyset} or ${col} is null)` : keyset;
}

/**
 * The deals an actor may see: in pipelines open to their role, and their own
 * (owned or created) unless they may view others'. Every read of many deals
 * (list, summaries, forecast) scopes with this.
 */
export function visibilityFilters(actor: Actor, visible: number[] | 'all', table: 'deals.' | '' = 'deals.'): Condition[] {
  const c = (name: string) => sql.ref(`${table}${name}`);
  const where: Condition[] = [];
  if (visible !== 'all') where.push(sql<SqlBool>`${c('pipeline_id')} = any(${visible})`);
  if (!can(actor, 'service:deals:viewother')) {
    where.push(sql<SqlBool>`(${c('owner_id')} = ${actor.id} or ${c('created_by_id')} = ${actor.id})`);
  }
  return where;
}

/**
 * Visibility and the filters deal_counters can answer; `table` is 'deals.' for
 * the deal rows and '' for the counter rows (same column names, 0 = no owner).
 */
function keyedFilters(query: DealListQuery, actor: Actor, visible: number[] | 'all', table: 'deals.' | ''): Condition[] {
  const c = (name: string) => sql.ref(`${table}${name}`);
  const where = visibilityFilters(actor, visible, table);
  if (query.pipeline !== undefined) where.push(sql<SqlBool>`${c('pipeline_id')} = ${query.pipeline}`);
  if (query.stage !== undefined) where.push(sql<SqlBool>`${c('stage_id')} = ${query.stage}`);
  if (query.status !== undefined) where.push(sql<SqlBool>`${c('status')} = ${query.status}`);
  if (query.owner !== undefined) where.push(sql<SqlBool>`${c('owner_id')} = ${query.owner}`);
  return where;
}

function otherFilters(query: DealListQuery): Condition[] {
  const where: Condition[] = [];
  if (query.search) where.push(sql<SqlBool>`deals.title ilike ${containsPattern(query.search)}`);
  if (query.closeDateFrom) where.push(sql<SqlBool>`deals.close_date >= ${query.closeDateFrom}`);
  if (query.closeDateTo) where.push(sql<SqlBool>`deals.close_date <= ${query.closeDateTo}`);
  return where;
}

async function countDeals(db: Db, query: DealListQuery, actor: Actor, visible: number[] | 'all') {
  const others = otherFilters(query);
  if (others.length === 0) {
    const condition = all(keyedFilters(query, actor, visible, ''));
    const { rows } = await sql<{ total: string | null }>`select sum(deals) as total from deal_counters where ${condition}`.execute(db);
    return { total: Number(rows[0]?.total ?? 0), approximate: false };
  }
  const condition = all([...keyedFilters(query, actor, visible, 'deals.'), ...others]);
  const capped = db.selectFrom('deals').select('deals.id').where(condition).limit(TOTAL_CAP + 1);
  const row = await db
    .selectFrom(capped.as('capped'))
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return row.n > TOTAL_CAP ? { total: TOTAL_CAP, approximate: true } : { total: row.n, approximate: false };
}

export async function listDeals(db: Db, actor: Actor, query: DealListQuery): Promise<DealListPage> {
  const cursor = query.after ? decodeCursor(query.after, query) : undefined;
  const visible = await visiblePipelineIds(db, actor);
  const empty = visible !== 'all' && visible.length === 0;

  const { column } = ORDER_COLUMNS[query.orderBy];
  const dir = query.orderByDir;
  const nulls = sql.raw(dir === 'asc' ? 'nulls last' : 'nulls first');
  const where = [...keyedFilters(query, actor, visible, 'deals.'), ...otherFilters(query)];
  if (cursor) where.push(afterCursor(query, cursor));

  const rowsQuery = dealSummaryQuery(db)
    .select(sql<string | number | null>`${sql.ref(column)}${sql.raw(query.orderBy === 'id' ? '' : '::text')}`.as('sort_value'))
    .where(all(where))
    .orderBy(sql`${sql.ref(column)} ${sql.raw(dir)} ${nulls}`)
    .orderBy('deals.id', dir)
    .limit(query.limit + 1)
    .offset(cursor ? 0 : (query.page - 1) * query.limit);

  const [rows, count] = empty
    ? [[], { total: 0, approximate: false }]
    : await Promise.all([rowsQuery.execute(), countDeals(db, query, actor, visible)]);

  const more = rows.length > query.limit;
  const pageRows = more ? rows.slice(0, query.limit) : rows;
  const last = pageRows.at(-1);
  return {
    total: count.total,
    totalApproximate: count.approximate,
    page: query.page,
    limit: query.limit,
    pages: Math.ceil(count.total / query.limit),
    deals: pageRows.map(toDealSummaryJson),
    next: more && last ? encodeCursor({ o: query.orderBy, d: dir, v: last.sort_value, i: last.id }) : null,
  };
}
