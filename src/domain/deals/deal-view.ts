import { sql, type CompiledQuery, type SqlBool } from 'kysely';
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import type { Executor } from '../../db/database.js';
import type { Actor } from '../../host/permissions.js';
import { toDealSummaryJson, toMemberJson, toNoteJson, toTaskJson, type DealFullJson } from './deal-json.js';
import { pipelineVisibleTo } from '../pipelines/pipelines.repository.js';
import { MEMBER_COLUMNS } from './committee.repository.js';
import { NOTE_COLUMNS } from './notes.repository.js';
import { TASK_COLUMNS } from './tasks.repository.js';

/**
 * Reads of whole deals. The summary (list) form brings its one-to-one relations
 * and the full form adds committee, notes and tasks, all as json subqueries, so a
 * deal view is ONE round trip to the database whatever its size.
 */

export function dealSummaryQuery(db: Executor) {
  // Related rows come as json subqueries rather than joins: with a million deals
  // and an index per sort order, planning a six-way join costs ~4 ms, the
  // subqueries ~0.2 ms, and the rows read are the same.
  return db.selectFrom('deals').select((eb) => [
    'deals.id',
    'deals.title',
    'deals.amount',
    'deals.currency',
    'deals.status',
    'deals.close_date',
    'deals.custom_fields',
    'deals.lost_reason',
    'deals.stage_changed_at',
    'deals.won_at',
    'deals.lost_at',
    'deals.created_at',
    'deals.updated_at',
    'deals.owner_id',
    'deals.created_by_id',
    jsonObjectFrom(
      eb
        .selectFrom('stages')
        .select(['stages.id', 'stages.name', 'stages.type', 'stages.position', 'stages.probability'])
        .whereRef('stages.id', '=', 'deals.stage_id'),
    ).as('stage'),
    jsonObjectFrom(eb.selectFrom('pipelines').select(['pipelines.id', 'pipelines.name']).whereRef('pipelines.id', '=', 'deals.pipeline_id')).as(
      'pipeline',
    ),
    jsonObjectFrom(eb.selectFrom('users').select(['users.id', 'users.name']).whereRef('users.id', '=', 'deals.owner_id')).as('owner'),
    jsonObjectFrom(eb.selectFrom('users').select(['users.id', 'users.name']).whereRef('users.id', '=', 'deals.created_by_id')).as(
      'created_by',
    ),
    jsonObjectFrom(
      eb.selectFrom('inbound_sources').select(['inbound_sources.id', 'inbound_sources.name']).whereRef('inbound_sources.id', '=', 'deals.source_id'),
    ).as('source'),
  ]);
}

export interface FullDeal {
  deal: DealFullJson;
  ownerId: number | null;
  createdById: number | null;
  pipelineVisible: boolean;
}

/** The full deal's query, as built for one deal and one actor. */
function fullDealQuery(db: Executor, dealId: number, actor: Actor) {
  return dealSummaryQuery(db)
    .select((eb) => [
      eb.cast<SqlBool>(pipelineVisibleTo(actor, sql.ref('deals.pipeline_id')), 'boolean').as('pipeline_visible'),
      jsonArrayFrom(
        eb
          .selectFrom('deal_contacts')
          .innerJoin('contacts', 'contacts.id', 'deal_contacts.contact_id')
          .select(MEMBER_COLUMNS)
          .whereRef('deal_contacts.deal_id', '=', 'deals.id')
          .orderBy('deal_contacts.is_primary', 'desc')
          .orderBy('deal_contacts.created_at')
          .orderBy('deal_contacts.contact_id'),
      ).as('contacts'),
      jsonArrayFrom(
        eb
          .selectFrom('deal_notes')
          .leftJoin('users as author', 'author.id', 'deal_notes.author_id')
          .select(NOTE_COLUMNS)
          .whereRef('deal_notes.deal_id', '=', 'deals.id')
          .orderBy('deal_notes.id', 'desc'),
      ).as('notes'),
      jsonArrayFrom(
        eb
          .selectFrom('deal_tasks')
          .leftJoin('users as assignee', 'assignee.id', 'deal_tasks.assignee_id')
          .select(TASK_COLUMNS)
          .whereRef('deal_tasks.deal_id', '=', 'deals.id')
          // Open tasks first, soonest due first; then the done ones.
          .orderBy('deal_tasks.is_completed')
          .orderBy(sql`deal_tasks.due_date asc nulls last`)
          .orderBy('deal_tasks.id'),
      ).as('tasks'),
    ])
    .where('deals.id', '=', dealId);
}

type FullDealRow = Awaited<ReturnType<ReturnType<typeof fullDealQuery>['executeTakeFirstOrThrow']>>;

/**
 * Building and compiling the query above costs more of the service's CPU than
 * PostgreSQL spends running it (about two dozen subqueries and their columns,
 * on every view). Its text depends only on whether the actor is an admin, so it
 * is compiled once per kind of actor, with markers where the deal id and role
 * id go, and each view only fills in the parameters. The text is also a named
 * prepared statement, so PostgreSQL does not parse and plan it at every view
 * either; every lookup in it is by a key, so the plan does not depend on the values.
 */
const DEAL_ID = Object.freeze({ marker: 'deal id' });
const ROLE_ID = Object.freeze({ marker: 'role id' });
const compiledViews = new Map<boolean, CompiledQuery<FullDealRow>>();

function compiledView(db: Executor, isAdmin: boolean): CompiledQuery<FullDealRow> {
  let compiled = compiledViews.get(isAdmin);
  if (!compiled) {
    const shape = { isAdmin, roleId: ROLE_ID as unknown as number } as Actor;
    const built = fullDealQuery(db, DEAL_ID as unknown as number, shape).compile();
    // A named prepared statement (see preparedAs): PostgreSQL parses and plans its two dozen subqueries once per connection.
    compiled = { ...built, sql: `-- prepared: deal_view_${isAdmin ? 'admin' : 'role'}\n${built.sql}` };
    compiledViews.set(isAdmin, compiled);
  }
  return compiled;
}

/** The full deal and what its access check needs, in one query. */
export async function loadFullDeal(db: Executor, dealId: number, actor: Actor): Promise<FullDeal | undefined> {
  const compiled = compiledView(db, actor.isAdmin);
  const parameters = compiled.parameters.map((value) => (value === DEAL_ID ? dealId : value === ROLE_ID ? actor.roleId : value));
  const [row] = (await db.executeQuery<FullDealRow>({ ...compiled, parameters })).rows;
  if (!row) return undefined;
  return {
    deal: {
      ...toDealSummaryJson(row),
      contacts: row.contacts.map(toMemberJson),
      notes: row.notes.map(toNoteJson),
      tasks: row.tasks.map(toTaskJson),
    },
    ownerId: row.owner_id,
    createdById: row.created_by_id,
    pipelineVisible: Boolean(row.pipeline_visible),
  };
}
