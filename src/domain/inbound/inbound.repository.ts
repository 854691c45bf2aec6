import { sql } from 'kysely';
import type { Executor, Trx } from '../../db/database.js';
import type { ReceiveOutcome } from '../../db/schema.inbound.js';

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
}

/** How long a rotated-out secret keeps working, and how long a receive is remembered for replays. */
export const ROTATION_GRACE = '24 hours';
export const REPLAY_WINDOW = '24 hours';

function sourceQuery(db: Executor) {
  return db
    .selectFrom('inbound_sources')
    .innerJoin('pipelines', 'pipelines.id', 'inbound_sources.pipeline_id')
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
  values: { id: string; name: string; pipelineId: number; secretEncrypted: string; enabled: boolean; createdById: number },
): Promise<void> {
  await db
    .insertInto('inbound_sources')
    .values({
      id: values.id,
      name: values.name,
      pipeline_id: values.pipelineId,
      secret_encrypted: values.secretEncrypted,
      enabled: values.enabled,
      created_by_id: values.createdById,
    })
    .execute();
}

export async function updateSource(
  db: Executor,
  id: string,
  values: { name?: string; pipelineId?: number; enabled?: boolean },
): Promise<boolean> {
  const result = await db
    .updateTable('inbound_sources')
    .set({
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values.pipelineId !== undefined ? { pipeline_id: values.pipelineId } : {}),
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

/**
 * Claims a replay key for this receive. Returns true when this transaction owns
 * it; false when a committed receive within REPLAY_WINDOW already holds it. A
 * concurrent receive with the same key waits here on the primary key until the
 * holder commits (then sees its answer) or rolls back (then claims it itself).
 */
export async function claimReplayKey(trx: Trx, sourceId: string, key: string): Promise<boolean> {
  const claimed = await trx
    .insertInto('inbound_idempotency')
    .values({ source_id: sourceId, key })
    .onConflict((oc) =>
      oc
        .columns(['source_id', 'key'])
        .doUpdateSet({ created_at: sql<Date>`now()`, status: null, response: null })
        .where('inbound_idempotency.created_at', '<', sql<Date>`now() - ${sql.lit(REPLAY_WINDOW)}::interval`),
    )
    .returning('key')
    .executeTakeFirst();
  return claimed !== undefined;
}

export function findReplay(db: Executor, sourceId: string, key: string) {
  return db
    .selectFrom('inbound_idempotency')
    .select(['status', 'response'])
    .where('source_id', '=', sourceId)
    .where('key', '=', key)
    .executeTakeFirst();
}

/** Fills the claimed key with the answer and logs the receive, in one statement. */
export async function storeAnswerAndLog(
  trx: Trx,
  sourceId: string,
  key: string,
  answer: { status: number; body: Record<string, unknown> },
  entry: LogEntry,
): Promise<void> {
  await trx
    .with('stored', (db) =>
      db
        .updateTable('inbound_idempotency')
        .set({ status: answer.status, response: JSON.stringify(answer.body) })
        .where('source_id', '=', sourceId)
        .where('key', '=', key)
        .returning('key'),
    )
    .insertInto('inbound_receive_log')
    .values(logValues(sourceId, entry))
    .execute();
}

// ---------------------------------------------------------------------------
// Deals of a source

/** Serializes receives of one (source, external id), so two first receives of it make one deal. */
export async function lockExternalId(trx: Trx, sourceId: string, externalId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`${sourceId}:${externalId}`}, 0))`.execute(trx);
}

export async function findDealIdByExternalId(db: Executor, sourceId: string, externalId: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('deals')
    .select('id')
    .where('source_id', '=', sourceId)
    .where('external_id', '=', externalId)
    .executeTakeFirst();
  return row?.id;
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

export function listLogEntries(db: Executor, sourceId: string, limit: number) {
  return db
    .selectFrom('inbound_receive_log')
    .select(['id', 'received_at', 'status', 'outcome', 'error', 'deal_id'])
    .where('source_id', '=', sourceId)
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
