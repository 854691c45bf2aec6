import { open } from '../../crypto/secret-box.js';
import type { Db } from '../../db/database.js';
import { AppError, InvalidSignatureError, NotFoundError, RateLimitedError } from '../../http/errors.js';
import { findOrCreateContactByEmail } from '../../host/builtin/contacts.repository.js';
import { addContactInTransaction } from '../deals/committee.service.js';
import { createDealInTransaction, updateDealInTransaction, type DealWriteContext } from '../deals/deals.service.js';
import {
  claimReplayKey,
  findDealIdByExternalId,
  findReplay,
  findSourceRow,
  insertLogEntry,
  lockExternalId,
  pruneInboundRows,
  storeAnswerAndLog,
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
 * per-source rate (429), then replay safety and the deal write in one transaction.
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

/** Housekeeping (log and replay-key pruning) runs once per this many logged receives of a process. */
const PRUNE_EVERY = 500;

export function createReceiver(options: { db: Db; appKey: Buffer; logger: { warn(details: object, message: string): void }; limiter?: SourceRateLimiter }) {
  const { db, appKey, logger } = options;
  const limiter = options.limiter ?? new SourceRateLimiter();
  let logged = 0;
  const touched = new Map<string, number>();

  /** lastReceivedAt has one-second precision; skipping the write within that second saves a statement per receive. */
  async function touch(sourceId: string): Promise<void> {
    const now = Date.now();
    if (now - (touched.get(sourceId) ?? 0) < 1000) return;
    if (touched.size > 10_000) touched.clear();
    touched.set(sourceId, now);
    await touchSource(db, sourceId);
  }

  async function countLogged(sourceId: string): Promise<void> {
    if (++logged % PRUNE_EVERY === 0) await pruneInboundRows(db, sourceId);
  }

  async function log(sourceId: string, entry: LogEntry): Promise<void> {
    await insertLogEntry(db, sourceId, entry);
    await countLogged(sourceId);
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
    async source(sourceId: string): Promise<SourceRow> {
      const source = UUID.test(sourceId) ? await findSourceRow(db, sourceId) : undefined;
      if (source && !source.enabled) {
        await quietly('log a receive', () => log(source.id, { status: 404, outcome: 'rejected', error: 'Source is disabled' }));
      }
      if (!source?.enabled) throw new NotFoundError('Inbound source');
      return source;
    },

    /** 403 unless the header carries the HMAC of these exact bytes under the current or a still-valid previous secret. */
    authenticate(source: SourceRow, header: string | string[] | undefined, raw: Buffer): void {
      const digest = parseSignatureHeader(header);
      if (!digest) throw new InvalidSignatureError('Missing or malformed X-Service-Signature header: expected sha256=<hex>');
      const secrets = [open(appKey, source.secret_encrypted)];
      if (source.previous_secret_valid) secrets.push(open(appKey, source.previous_secret_encrypted!));
      if (!signatureMatches(digest, raw, secrets)) throw new InvalidSignatureError('Signature does not match the request body');
    },

    /**
     * Creates or updates the deal, links the contact and remembers the answer,
     * all in one transaction. A repeated replay key gets the first answer back.
     */
    async receive(source: SourceRow, body: ReceiveBody, raw: Buffer, idempotencyKey: string | undefined): Promise<ReceiveResult> {
      const retryAfter = limiter.take(source.id);
      if (retryAfter > 0) throw new RateLimitedError(retryAfter);

      const key = idempotencyKey !== undefined ? `header:${idempotencyKey}` : `body:${bodyHash(raw)}`;
      const ctx: DealWriteContext = { changedBy: { id: null, name: source.name }, source: { id: source.id, name: source.name } };

      const result = await db.transaction().execute(async (trx): Promise<ReceiveResult> => {
        if (!(await claimReplayKey(trx, source.id, key))) {
          const stored = await findReplay(trx, source.id, key);
          if (!stored?.response) throw new Error('replay key held without an answer');
          const dealId = (stored.response as { deal: { id: number } }).deal.id;
          await insertLogEntry(trx, source.id, { status: 200, outcome: 'replayed', dealId });
          return { answer: stored.response as unknown as ReceiveAnswer, replayed: true };
        }

        let dealId: number | undefined;
        if (body.external_id != null) {
          await lockExternalId(trx, source.id, body.external_id);
          dealId = await findDealIdByExternalId(trx, source.id, body.external_id);
        }
        // The contact first: the deal insert takes row locks that concurrent receives wait on, so it comes as late as it can.
        const found = body.contact ? await findOrCreateContactByEmail(trx, body.contact) : undefined;
        const created = dealId === undefined;
        if (dealId === undefined) {
          dealId = (await createDealInTransaction(trx, ctx, toDealCreate(body, { id: source.id, pipelineId: source.pipeline_id }))).id;
        } else {
          await updateDealInTransaction(trx, ctx, dealId, toDealUpdate(body));
        }
        if (found) await addContactInTransaction(trx, ctx, dealId, { contactId: found.contact.id, primaryIfNone: true });
        const contact = found ? { id: found.contact.id, created: found.created } : null;

        const answer: ReceiveAnswer = { success: true, created, deal: { id: dealId }, contact };
        await storeAnswerAndLog(trx, source.id, key, { status: 200, body: { ...answer } }, { status: 200, outcome: created ? 'created' : 'updated', dealId });
        return { answer, replayed: false };
      });

      await quietly('mark the source as heard from', async () => {
        await touch(source.id);
        await countLogged(source.id);
      });
      return result;
    },

    /** Records a refused receive of a known source (the error's status and message; never the secret or the body). */
    async logRejection(source: SourceRow, error: AppError): Promise<void> {
      await quietly('log a refused receive', () => log(source.id, { status: error.statusCode, outcome: 'rejected', error: error.message.slice(0, 1000) }));
    },
  };
}

export type Receiver = ReturnType<typeof createReceiver>;
