import { sql } from 'kysely';
import type { Executor, Trx } from '../../db/database.js';
import type { ReceiveOutcome } from '../../db/schema.inbound.js';
import type { FieldMap } from './field-map.js';

/** Rows of inbound sources, their receive log and their replay-safety keys. */

export interface SourceRow {
  id: string;
  name: string;
  pipeline_id: number;
  pipeline_name: string;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
  /** The previous secret exists and its grace period has not ended (by the database clock). */
  previous_secret_valid: boolean;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
  last_received_at: Date | null;
  default_stage_id: number | null;
  default_stage_name: string | null;
  default_owner_id: number | null;
  default_owner_name: string | null;
  field_map: FieldMap;
}

/** How long a rotated-out secret keeps working, and how long a receive is remembered for replays. */
export const ROTATION_GRACE = '24 hours';
export const REPLAY_WINDOW = '24 hours';

function sourceQuery(db: Executor) {
  return db
    .selectFrom('inbound_sources')
    .innerJoin('pipelines', 'pipelines.id', 'inbound_sources.pipeline_id')
    .leftJoin('stages', 'stages.id', 'inbound_sources.default_stage_id')
    .leftJoin('users', 'users.id', 'inbound_sources.default_owner_id')
    .select([
      'inbound_sources.id',
      'inbound_sources.name',
      'inbound_sources.pipeline_id',
      'pipelines.name as pipeline_name',
      'inbound_sources.secret_encrypted',
      'inbound_sources.previous_secret_encrypted',
      'inbound_sources.previous_secret_expires_at',
      sql<boolean>`coalesce(inbound_sources.previous_secret_expires_at > now(), false)`.as('previous_secret_valid'),
      'inbound_sources.enabled',
      'inbound_sources.created_at',
      'inbound_sources.updated_at',
      'inbound_sources.last_received_at',
      'inbound_sources.default_stage_id',
      'stages.name as default_stage_name',
      'inbound_sources.default_owner_id',
      'users.name as default_owner_name',
      'inbound_sources.field_map',
    ])
    .$castTo<SourceRow>();
}

export function listSourceRows(db: Executor): Promise<SourceRow[]> {
  return sourceQuery(db).orderBy('inbound_sources.created_at').orderBy('inbound_sources.id').execute();
}

export function findSourceRow(db: Executor, id: string): Promise<SourceRow | undefined> {
  return sourceQuery(db).where('inbound_sources.id', '=', id).executeTakeFirst();
}

export async function insertSource(
  db: Executor,
  values: {
    id: string;
    name: string;
    pipelineId: number;
    stageId: number | null;
    ownerId: number | null;
    fieldMap: FieldMap;
    secretEncrypted: string;
    enabled: boolean;
    createdById: number;
  },
): Promise<void> {
  await db
    .insertInto('inbound_sources')
    .values({
      id: values.id,
      name: values.name,
      pipeline_id: values.pipelineId,
      default_stage_id: values.stageId,
      default_owner_id: values.ownerId,
      field_map: JSON.stringify(values.fieldMap),
      secret_encrypted: values.secretEncrypted,
      enabled: values.enabled,
      created_by_id: values.createdById,
    })
    .execute();
}

export async function updateSource(
  db: Executor,
  id: string,
  values: { name?: string; pipelineId?: number; stageId?: number | null; ownerId?: number | null; fieldMap?: FieldMap; enabled?: boolean },
): Promise<boolean> {
  const result = await db
    .updateTable('inbound_sources')
    .set({
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values.pipelineId !== undefined ? { pipeline_id: values.pipelineId } : {}),
      ...(values.stageId !== undefined ? { default_stage_id: values.stageId } : {}),
      ...(values.ownerId !== undefined ? { default_owner_id: values.ownerId } : {}),
      ...(values.fieldMap !== undefined ? { field_map: JSON.stringify(values.fieldMap) } : {}),
      ...(values.enabled !== undefined ? { enabled: values.enabled } : {}),
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The current secret becomes the previous one for ROTATION_GRACE; an older previous one stops at once. */
export async function rotateSourceSecret(db: Executor, id: string, secretEncrypted: string): Promise<boolean> {
  const result = await db
    .updateTable('inbound_sources')
    .set((eb) => ({
      previous_secret_encrypted: eb.ref('secret_encrypted'),
      previous_secret_expires_at: sql<Date>`now() + ${sql.lit(ROTATION_GRACE)}::interval`,
      secret_encrypted: secretEncrypted,
      updated_at: sql<Date>`now()`,
    }))
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteSourceRow(db: Executor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('inbound_sources').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Marks a source as heard from; the row changes at most once a second, so busy sources do not contend on it. */
export async function touchSource(db: Executor, id: string): Promise<void> {
  await db
    .updateTable('inbound_sources')
    .set({ last_received_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_received_at', 'is', null), eb('last_received_at', '<', sql<Date>`now() - interval '1 second'`)]))
    .execute();
}

// ---------------------------------------------------------------------------
// Replay safety

export interface ReplayKey {
  sourceId: string;
  key: string;
}

/** One key as a string: `source\\0key`. */
export const replayId = (k: ReplayKey) => `${k.sourceId}\0${k.key}`;

/**
 * Claims replay keys (in one statement, in a fixed order so two batches cannot
 * deadlock). Returns the ids (`source\0key`) this transaction now owns; a key a
 * committed receive within REPLAY_WINDOW holds is not among them. A concurrent
 * receive with the same key waits on the primary key until its holder commits
 * (then it is a replay) or rolls back (then it is claimed here).
 */
export async function claimReplayKeys(trx: Trx, keys: ReplayKey[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const sorted = [...keys].sort((a, b) => (replayId(a) < replayId(b) ? -1 : 1));
  const claimed = await trx
    .insertInto('inbound_idempotency')
    .values(sorted.map((k) => ({ source_id: k.sourceId, key: k.key })))
    .onConflict((oc) =>
      oc
        .columns(['source_id', 'key'])
        .doUpdateSet({ created_at: sql<Date>`now()`, status: null, response: null })
        .where('inbound_idempotency.created_at', '<', sql<Date>`now() - ${sql.lit(REPLAY_WINDOW)}::interval`),
    )
    .returning(['source_id', 'key'])
    .execute();
  return new Set(claimed.map((row) => replayId({ sourceId: row.source_id, key: row.key })));
}

/** The stored answers of replay keys, by `source\0key`. */
export async function findReplays(db: Executor, keys: ReplayKey[]): Promise<Map<string, Record<string, unknown>>> {
  if (keys.length === 0) return new Map();
  const rows = await db
    .selectFrom('inbound_idempotency')
    .select(['source_id', 'key', 'response'])
    .where((eb) => eb.or(keys.map((k) => eb.and([eb('source_id', '=', k.sourceId), eb('key', '=', k.key)]))))
    .execute();
  return new Map(rows.filter((r) => r.response).map((r) => [replayId({ sourceId: r.source_id, key: r.key }), r.response!]));
}

/** Fills claimed keys with their answers and writes the log entries (one per answer at least), in one statement. */
export async function storeAnswersAndLog(
  trx: Trx,
  answers: (ReplayKey & { status: number; body: Record<string, unknown> })[],
  entries: (LogEntry & { sourceId: string })[],
): Promise<void> {
  if (entries.length === 0) return;
  // Value lists, not a prepared statement: planned with the real row count, the update finds its rows by primary key.
  const logRows = sql.join(
    entries.map((e) => sql`(${e.sourceId}::uuid, ${e.status}::int, ${e.outcome}, ${e.error ?? null}, ${e.dealId ?? null}::int)`),
  );
  const answerRows = answers.length
    ? sql.join(answers.map((a) => sql`(${a.sourceId}::uuid, ${a.key}, ${a.status}::int, ${JSON.stringify(a.body)}::jsonb)`))
    : sql`(null::uuid, null::text, null::int, null::jsonb)`;
  await sql`
    with stored as (
      update inbound_idempotency set status = answer.status, response = answer.response
      from (values ${answerRows}) as answer (source_id, key, status, response)
      where inbound_idempotency.source_id = answer.source_id and inbound_idempotency.key = answer.key
      returning 1
    )
    insert into inbound_receive_log (source_id, status, outcome, error, deal_id) values ${logRows}`.execute(trx);
}

// ---------------------------------------------------------------------------
// Deals of a source

export interface ExternalKey {
  sourceId: string;
  externalId: string;
}

/** Serializes receives of one (source, external id), so two first receives of it make one deal; locks taken in a fixed order. */
export async function lockExternalIds(trx: Trx, keys: ExternalKey[]): Promise<void> {
  if (keys.length === 0) return;
  const texts = [...new Set(keys.map((k) => `${k.sourceId}:${k.externalId}`))].sort();
  await sql`select pg_advisory_xact_lock(hashtextextended(k, 0)) from unnest(${texts}::text[]) as k order by k`.execute(trx);
}

/** Deal ids by `source:external id`. */
export async function findDealIdsByExternalIds(db: Executor, keys: ExternalKey[]): Promise<Map<string, number>> {
  if (keys.length === 0) return new Map();
  const rows = await db
    .selectFrom('deals')
    .select(['id', 'source_id', 'external_id'])
    .where((eb) => eb.or(keys.map((k) => eb.and([eb('source_id', '=', k.sourceId), eb('external_id', '=', k.externalId)]))))
    .execute();
  return new Map(rows.map((row) => [`${row.source_id}:${row.external_id}`, row.id]));
}

// ---------------------------------------------------------------------------
// Receive log

export interface LogEntry {
  status: number;
  outcome: ReceiveOutcome;
  error?: string | null;
  dealId?: number | null;
}

/** Newest entries kept per source; older ones are pruned now and then. */
export const LOG_KEEP = 1000;

const logValues = (sourceId: string, entry: LogEntry) => ({
  source_id: sourceId,
  status: entry.status,
  outcome: entry.outcome,
  error: entry.error ?? null,
  deal_id: entry.dealId ?? null,
});

export async function insertLogEntry(db: Executor, sourceId: string, entry: LogEntry): Promise<void> {
  await db.insertInto('inbound_receive_log').values(logValues(sourceId, entry)).execute();
}

export function listLogEntries(db: Executor, sourceId: string, limit: number, outcome?: ReceiveOutcome) {
  return db
    .selectFrom('inbound_receive_log')
    .select(['id', 'received_at', 'status', 'outcome', 'error', 'deal_id'])
    .where('source_id', '=', sourceId)
    .$if(outcome !== undefined, (query) => query.where('outcome', '=', outcome!))
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Drops a source's log entries beyond the newest LOG_KEEP and replay keys past their window. */
export async function pruneInboundRows(db: Executor, sourceId: string): Promise<void> {
  await sql`
    delete from inbound_receive_log
    where source_id = ${sourceId}
      and id < (select id from inbound_receive_log where source_id = ${sourceId} order by id desc offset ${LOG_KEEP - 1} limit 1)
  `.execute(db);
  await sql`
    delete from inbound_idempotency
    where ctid in (select ctid from inbound_idempotency where created_at < now() - ${sql.lit(REPLAY_WINDOW)}::interval limit 10000)
  `.execute(db);
}
