import { sql } from 'kysely';
import { open, WrongKeyError } from '../../crypto/secret-box.js';
import { recordTogether } from '../../events/events.js';
import type { Db, Trx } from '../../db/database.js';
import { AppError, InvalidSignatureError, NotFoundError, RateLimitedError, UnavailableError } from '../../http/errors.js';
import type { ContactRow, HostContacts } from '../../host/port.js';
import { addContactsInTransaction } from '../deals/committee.service.js';
import type { DealWriteContext } from '../deals/deal-context.js';
import { createDealsInTransaction, resolveNewDealStage, updateDealInTransaction } from '../deals/deals.service.js';
import type { StageRow } from '../pipelines/pipelines.repository.js';
import { GroupCommit, type Settled } from './group-commit.js';
import {
  claimReplayKeys,
  findDealIdsByExternalIds,
  findReplays,
  findSourceRow,
  insertLogEntry,
  lockExternalIds,
  pruneInboundRows,
  replayId,
  storeAnswersAndLog,
  touchSource,
  type LogEntry,
  type SourceRow,
} from './inbound.repository.js';
import { SourceRateLimiter } from './inbound.rate-limit.js';
import { bodyHash, parseSignatureHeader, signatureMatches } from './inbound.signature.js';
import { toDealCreate, toDealUpdate, type ReceiveBody } from './receive.mapping.js';
import { UUID } from './sources.service.js';

/**
 * The signed receive endpoint, step by step in the contract's order: the source
 * (404), the signature (403), the body (422, checked by the route schema), the
 * per-source rate (429), then replay safety and the deal write in one
 * transaction. Receives arriving together share that transaction (group
 * commit, see group-commit.ts): each step is one statement for the whole batch.
 */

export interface ReceiveAnswer {
  success: true;
  created: boolean;
  deal: { id: number };
  contact: { id: number; created: boolean } | null;
}

export interface ReceiveResult {
  answer: ReceiveAnswer;
  replayed: boolean;
}

interface PendingReceive {
  source: SourceRow;
  body: ReceiveBody;
  replayKey: string;
}

/** A source as the receive endpoint uses it: its row and its opened secrets (current, and previous while valid). */
export interface ReceivingSource extends SourceRow {
  secrets: readonly string[];
}

/** How long a process trusts what it read of a source (its enabled flag and secrets). */
export const SOURCE_TTL_MS = 1000;

/** At most this many receives share a transaction, and this many transactions run at once. */
const MAX_BATCH = 64;
const MAX_CONCURRENT_BATCHES = 2;

const externalKey = (item: PendingReceive) =>
  item.body.external_id != null ? { sourceId: item.source.id, externalId: item.body.external_id } : undefined;

/**
 * Writes a batch of receives in the caller's transaction. No two items share a
 * replay key or an external id (group commit keeps them apart), so each item's
 * outcome depends only on the database as it was and on itself. The batch's
 * contacts are looked up (or created) by the host meanwhile, on another
 * connection: their round trip overlaps the transaction's first ones instead of
 * adding to every receive's wait (about 5 % of the throughput per round trip,
 * docs/inbound.md), and a failed lookup rolls the claims back. So are the
 * placements of its new deals (lookups.stages).
 */
async function writeReceives(trx: Trx, items: PendingReceive[], currency: string, lookups: Lookups): Promise<ReceiveResult[]> {
  const keys = items.map((item) => ({ sourceId: item.source.id, key: item.replayKey }));
  const claimed = await claimReplayKeys(trx, keys);
  const replays = await findReplays(trx, keys.filter((key) => !claimed.has(replayId(key))));
  const fresh = items.filter((_, i) => claimed.has(replayId(keys[i]!)));
  // Before the external ids' locks: a slow remote host keeps only this batch's new replay keys locked meanwhile.
  const contacts = await lookups.contacts;

  const externals = fresh.map(externalKey).filter((key) => key !== undefined);
  await lockExternalIds(trx, externals);
  const existing = await findDealIdsByExternalIds(trx, externals);
  const dealIdOf = (item: PendingReceive) => {
    const key = externalKey(item);
    return key ? existing.get(`${key.sourceId}:${key.externalId}`) : undefined;
  };
  const contextOf = (source: SourceRow): DealWriteContext => ({
    changedBy: { id: null, name: source.name },
    source: { id: source.id, name: source.name },
  });

  // Existing deals are updated in id order, like every multi-deal lock, so no two writers wait on each other crosswise.
  const updates = fresh.filter((item) => dealIdOf(item) !== undefined).sort((a, b) => dealIdOf(a)! - dealIdOf(b)!);
  for (const item of updates) await updateDealInTransaction(trx, contextOf(item.source), dealIdOf(item)!, toDealUpdate(item.body));
  const contactOf = (item: PendingReceive) => (item.body.contact ? contacts.get(item.body.contact.email.toLowerCase())! : undefined);
  const creates = fresh.filter((item) => dealIdOf(item) === undefined);
  const stages = creates.length > 0 ? await lookups.stages : undefined;
  const created = await createDealsInTransaction(
    trx,
    creates.map((item) => ({
      ctx: contextOf(item.source),
      input: { ...toDealCreate(item.body, {
        id: item.source.id,
        pipelineId: item.source.pipeline_id,
        stageId: item.source.default_stage_id,
        ownerId: item.source.default_owner_id,
        currency,
      }), contact: contactOf(item)?.contact, stage: stages!.get(placementOf(item.source)) },
    })),
  );
  const createdIds = new Map(creates.map((item, i) => [item, created[i]!.id]));

  const answers = new Map<PendingReceive, ReceiveAnswer>();
  const newContactsAnswered = new Set<number>();
  for (const item of fresh) {
    const found = contactOf(item);
    // Two receives of a batch bringing one new email: the first created the contact, the second found it.
    const contactCreated = found !== undefined && found.created && !newContactsAnswered.has(found.contact.id);
    if (contactCreated) newContactsAnswered.add(found.contact.id);
    answers.set(item, {
      success: true,
      created: createdIds.has(item),
      deal: { id: dealIdOf(item) ?? createdIds.get(item)! },
      contact: found ? { id: found.contact.id, created: contactCreated } : null,
    });
  }
  // A new deal got its contact as it was created; an updated one adds it to the committee it has.
  await addContactsInTransaction(
    trx,
    updates.flatMap((item) => {
      const answer = answers.get(item)!;
      return answer.contact ? [{ ctx: contextOf(item.source), dealId: answer.deal.id, input: { contactId: answer.contact.id, primaryIfNone: true } }] : [];
    }),
  );

  const results = items.map((item, i): ReceiveResult => {
    const own = answers.get(item);
    if (own) return { answer: own, replayed: false };
    const stored = replays.get(replayId(keys[i]!));
    if (!stored) throw new Error('replay key held without an answer');
    return { answer: stored as unknown as ReceiveAnswer, replayed: true };
  });
  await storeAnswersAndLog(
    trx,
    fresh.map((item) => ({ sourceId: item.source.id, key: item.replayKey, status: 200, body: { ...answers.get(item)! } })),
    items.map((item, i) => ({
      sourceId: item.source.id,
      status: 200,
      outcome: results[i]!.replayed ? 'replayed' : results[i]!.answer.created ? 'created' : 'updated',
      dealId: results[i]!.answer.deal.id,
    })),
  );
  return results;
}

type ContactsByEmail = Map<string, { contact: ContactRow; created: boolean }>;

/** The job that writes a verified receive once the host can find or create its contact again. */
export const INBOUND_RETRY_TASK = 'inbound_retry';

/** The host (not our database) could not answer: the receive is kept and retried instead of failing the sender. */
class HostUnavailableError extends UnavailableError {}

async function contactsFor(contacts: HostContacts, items: PendingReceive[]): Promise<ContactsByEmail> {
  try {
    return await contacts.findOrCreateByEmail(items.flatMap((item) => (item.body.contact ? [item.body.contact] : [])));
  } catch (error) {
    if (error instanceof UnavailableError) throw new HostUnavailableError(error.message);
    throw error;
  }
}

/** What a batch reads outside its transaction, on other connections, while the transaction starts (see writeReceives). */
interface Lookups {
  contacts: Promise<ContactsByEmail>;
  /** The stage each placement of the batch's sources resolves to, by placementOf. */
  stages: Promise<Map<string, StageRow>>;
}

/** A source's placement for new deals: its pipeline and default stage (none: the pipeline's entry stage). */
const placementOf = (source: SourceRow) => `${source.pipeline_id}:${source.default_stage_id ?? ''}`;

/** Resolves each placement once, as createDealsInTransaction would, one after another (one pool connection at a time). */
async function stagesFor(db: Db, items: PendingReceive[]): Promise<Map<string, StageRow>> {
  const stages = new Map<string, StageRow>();
  for (const { source } of items) {
    const placement = placementOf(source);
    if (stages.has(placement)) continue;
    const input = { pipelineId: source.pipeline_id, stageId: source.default_stage_id ?? undefined };
    stages.set(placement, await resolveNewDealStage(db, input));
  }
  return stages;
}

/**
 * Writes a batch in one transaction while its contacts and placements are
 * looked up beside it (see writeReceives), or, with `beside` false, first. The
 * lookups are awaited in every outcome, so none outlives the batch; a failed
 * one fails the batch only where writeReceives needs it (a placement only when
 * the batch creates deals).
 */
async function writeBatchTogether(db: Db, contacts: HostContacts, items: PendingReceive[], currency: string, beside: boolean): Promise<ReceiveResult[]> {
  const lookups: Lookups = { contacts: contactsFor(contacts, items), stages: stagesFor(db, items) };
  // Handled at once: a lookup can fail before the transaction awaits it (or the batch may never need it), which must not
  // count as an unhandled rejection; writeReceives still gets the failure where it awaits the lookup.
  for (const lookup of [lookups.contacts, lookups.stages]) lookup.catch(() => undefined);
  if (!beside) await Promise.allSettled([lookups.contacts, lookups.stages]);
  try {
    return await db.transaction().execute((trx) => recordTogether(trx, () => writeReceives(trx, items, currency, lookups)));
  } finally {
    await Promise.allSettled([lookups.contacts, lookups.stages]);
  }
}

/**
 * The worker's side of a receive queued while the host was down: the same
 * writeReceives path, so the replay key still makes a resent receive a replay.
 * A throw (host still down) leaves the job to graphile-worker's backoff.
 */
export async function retryReceive(
  options: { db: Db; contacts: HostContacts; currency: string },
  payload: { sourceId: string; body: ReceiveBody; replayKey: string },
): Promise<ReceiveResult | undefined> {
  const source = await findSourceRow(options.db, payload.sourceId);
  // A source deleted since: nothing to write the deal for.
  if (!source) return undefined;
  // One job holds one transaction, and the worker's pool has four connections more than it runs jobs at once.
  const [result] = await writeBatchTogether(options.db, options.contacts, [{ source, body: payload.body, replayKey: payload.replayKey }], options.currency, true);
  return result;
}

/** Housekeeping (log and replay-key pruning) of a source runs once per this many of its logged receives in a process. */
const PRUNE_EVERY = 500;

export function createReceiver(options: {
  db: Db;
  /** APP_KEY, or during a rotation [APP_KEY, APP_KEY_PREVIOUS]. */
  appKey: Buffer | readonly Buffer[];
  ratePerSecond: number;
  /** Deals from senders have no currency field: DEFAULT_CURRENCY. */
  currency: string;
  logger: { warn(details: object, message: string): void };
  /** The host's contacts: a receive's contact is found or created there before the deal is written. */
  contacts: HostContacts;
  /** How many processes share the rate limit (live service processes); default 1. */
  share?: () => number;
  /** Housekeeping period in logged receives per source (PRUNE_EVERY). */
  pruneEvery?: number;
  /**
   * DB_POOL_SIZE. A batch's lookups run beside its transaction only when the
   * pool has a connection more than the batches' transactions can hold: each
   * transaction waits for its lookups, so with every connection held by one
   * they would wait for each other until the acquire timeout.
   */
  poolSize?: number;
}) {
  const { db, appKey, logger } = options;
  const limiter = new SourceRateLimiter(options.ratePerSecond, undefined, options.share);
  const logged = new Map<string, number>();
  const pruneEvery = options.pruneEvery ?? PRUNE_EVERY;
  const lookupsBeside = (options.poolSize ?? Infinity) > MAX_CONCURRENT_BATCHES;

  /** A batch in one transaction; if it fails as a whole, each receive is tried alone so only the bad one fails. */
  async function writeBatch(items: PendingReceive[]): Promise<Settled<ReceiveResult>[]> {
    try {
      const results = await writeBatchTogether(db, options.contacts, items, options.currency, lookupsBeside);
      return results.map((value) => ({ ok: true, value }));
    } catch (error) {
      if (items.length === 1) return [{ ok: false, error }];
      const settled: Settled<ReceiveResult>[] = [];
      for (const item of items) settled.push(...(await writeBatch([item])));
      return settled;
    }
  }

  const batches = new GroupCommit<PendingReceive, ReceiveResult>({
    write: writeBatch,
    conflictKeys: (item) => {
      const external = externalKey(item);
      return [`replay:${item.source.id}:${item.replayKey}`, ...(external ? [`external:${external.sourceId}:${external.externalId}`] : [])];
    },
    maxBatch: MAX_BATCH,
    maxConcurrent: MAX_CONCURRENT_BATCHES,
  });
  const touched = new Map<string, number>();

  /**
   * Sources as read at most SOURCE_TTL_MS ago, with their secrets opened: the
   * lookup and two AES-GCM opens would otherwise cost every receive a round
   * trip and some CPU. A source in use is read again in the background once
   * half its time is up, so receives do not wait for the lookup. Changes made
   * through this process apply at once (forget); other processes see them
   * within SOURCE_TTL_MS.
   */
  const known = new Map<string, { source: ReceivingSource | undefined; readAt: number; refreshing?: boolean }>();
  let forgotten = 0;
  /** A secret sealed under another key is the operator's misconfiguration: 503 and a log line, not a 500 per receive. */
  function openSecrets(row: SourceRow): string[] {
    try {
      return [row.secret_encrypted, ...(row.previous_secret_valid ? [row.previous_secret_encrypted!] : [])].map((sealed) => open(appKey, sealed));
    } catch (error) {
      if (!(error instanceof WrongKeyError)) throw error;
      logger.warn({ sourceId: row.id }, 'inbound source secret does not open with APP_KEY');
      throw new UnavailableError('This source cannot verify signatures right now (its secret does not open with the configured APP_KEY)', 60);
    }
  }

  async function read(sourceId: string): Promise<ReceivingSource | undefined> {
    const before = forgotten;
    const row = await findSourceRow(db, sourceId);
    const source = row && { ...row, secrets: openSecrets(row) };
    // A read that overlapped a forget() may predate the change: answer with it, but do not keep it.
    if (forgotten === before) {
      if (known.size >= 10_000) known.clear();
      known.set(sourceId, { source, readAt: Date.now() });
    }
    return source;
  }
  async function lookup(sourceId: string): Promise<ReceivingSource | undefined> {
    const hit = known.get(sourceId);
    const age = hit ? Date.now() - hit.readAt : Infinity;
    if (!hit || age >= SOURCE_TTL_MS) return read(sourceId);
    if (age >= SOURCE_TTL_MS / 2 && !hit.refreshing) {
      hit.refreshing = true;
      void quietly('read a source again', async () => {
        await read(sourceId).finally(() => (hit.refreshing = false));
      });
    }
    return hit.source;
  }

  /** lastReceivedAt has one-second precision; skipping the write within that second saves a statement per receive. */
  async function touch(sourceId: string): Promise<void> {
    const now = Date.now();
    if (now - (touched.get(sourceId) ?? 0) < 1000) return;
    if (touched.size > 10_000) touched.clear();
    touched.set(sourceId, now);
    await touchSource(db, sourceId);
  }

  /** Every pruneEvery logged receives of a source, prunes in the background: no sender waits for housekeeping. */
  function countLogged(sourceId: string): void {
    const count = (logged.get(sourceId) ?? 0) + 1;
    if (logged.size >= 10_000 && !logged.has(sourceId)) logged.clear();
    logged.set(sourceId, count % pruneEvery);
    if (count === pruneEvery) void quietly('prune the receive log', () => pruneInboundRows(db, sourceId));
  }

  async function log(sourceId: string, entry: LogEntry): Promise<void> {
    await insertLogEntry(db, sourceId, entry);
    countLogged(sourceId);
  }

  /** Bookkeeping outside the receive's transaction: its failure must not change the sender's answer. */
  async function quietly(what: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      logger.warn({ err }, `inbound receive: could not ${what}`);
    }
  }

  return {
    /** The source a receive is addressed to; unknown, malformed and disabled ids are all 404 (a disabled hit is logged). */
    async source(sourceId: string): Promise<ReceivingSource> {
      const source = UUID.test(sourceId) ? await lookup(sourceId) : undefined;
      if (source && !source.enabled) {
        await quietly('log a receive', () => log(source.id, { status: 404, outcome: 'rejected', error: 'Source is disabled' }));
      }
      if (!source?.enabled) throw new NotFoundError('Inbound source');
      return source;
    },

    /** 403 unless the header carries the HMAC of these exact bytes under the current or a still-valid previous secret. */
    authenticate(source: ReceivingSource, header: string | string[] | undefined, raw: Buffer): void {
      const digest = parseSignatureHeader(header);
      if (!digest) throw new InvalidSignatureError('Missing or malformed X-Service-Signature header: expected sha256=<hex>');
      if (!signatureMatches(digest, raw, source.secrets)) throw new InvalidSignatureError('Signature does not match the request body');
    },

    /**
     * Creates or updates the deal, links the contact and remembers the answer,
     * in one transaction (shared with the receives arriving alongside). A
     * repeated replay key gets the first answer back.
     */
    async receive(source: SourceRow, body: ReceiveBody, raw: Buffer, idempotencyKey: string | undefined): Promise<ReceiveResult | { queued: true }> {
      const retryAfter = limiter.take(source.id);
      if (retryAfter > 0) throw new RateLimitedError(retryAfter);
      const replayKey = idempotencyKey !== undefined ? `header:${idempotencyKey}` : `body:${bodyHash(raw)}`;
      let result: ReceiveResult;
      try {
        result = await batches.submit({ source, body, replayKey });
      } catch (error) {
        if (!(error instanceof HostUnavailableError)) throw error;
        // Verified and valid, but its contact lives in a host that is down: kept as a job, never lost.
        await sql`select graphile_worker.add_job(${INBOUND_RETRY_TASK}, ${JSON.stringify({ sourceId: source.id, body, replayKey })}::json, max_attempts => 25)`.execute(db);
        logger.warn({ sourceId: source.id }, 'inbound receive queued: the host could not find or create its contact');
        return { queued: true };
      }

      // The sender's answer does not wait for this bookkeeping.
      void quietly('mark the source as heard from', () => touch(source.id));
      countLogged(source.id);
      return result;
    },

    /** Drops what this process remembers of a source (after an edit, rotation or delete). */
    forget(sourceId: string): void {
      forgotten += 1;
      known.delete(sourceId);
    },

    /** Records a refused receive of a known source (the error's status and message; never the secret or the body). */
    async logRejection(source: SourceRow, error: AppError): Promise<void> {
      await quietly('log a refused receive', () => log(source.id, { status: error.statusCode, outcome: 'rejected', error: error.message.slice(0, 1000) }));
    },
  };
}

export type Receiver = ReturnType<typeof createReceiver>;
