import { createHmac, timingSafeEqual } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { writeDealEvents, type EventName, type EventPayload, type RecordOptions } from '../../src/events/events.js';
import { startWorker, type DeliveryWorker, type WorkerOptions } from '../../src/events/worker.js';
import type { TestContext } from './app.js';
import { defaultPipeline } from './factories.js';

/** Pieces of the outbound delivery tests: a real HTTP receiver, a Standard Webhooks verifier, a worker. */

export interface Received {
  headers: IncomingHttpHeaders;
  /** Repeated header fields kept apart (webhook-signature carries two). */
  distinct: NodeJS.Dict<string[]>;
  body: string;
  json: Record<string, any>;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Hold the response this long (ms), or forever with 'never'. */
  delay?: number | 'never';
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Decides each answer; `index` counts requests for the same webhook-id (0 = first). */
  reply: (request: Received, index: number) => Reply;
  close(): Promise<void>;
}

/** A node:http receiver on 127.0.0.1 that records every request. */
export async function startReceiver(reply: Receiver['reply'] = () => ({ status: 200 })): Promise<Receiver> {
  const seen = new Map<string, number>();
  const sockets = new Set<import('node:net').Socket>();
  const receiver: Receiver = { url: '', received: [], reply, close: async () => undefined };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const entry: Received = { headers: request.headers, distinct: request.headersDistinct, body, json: JSON.parse(body || '{}') };
      receiver.received.push(entry);
      const id = String(request.headers['webhook-id']);
      const index = seen.get(id) ?? 0;
      seen.set(id, index + 1);
      const answer = receiver.reply(entry, index);
      if (answer.delay === 'never') return;
      setTimeout(() => response.writeHead(answer.status, answer.headers).end(answer.body ?? 'ok'), answer.delay ?? 0);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise<void>((done) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => done());
    });
  afterAll(() => receiver.close());
  return receiver;
}

/**
 * Standard Webhooks verification written from the specification: the key is
 * the base64 part of `whsec_...`, the content `${id}.${timestamp}.${body}`,
 * the header a space-separated list of `v1,<base64>`; timestamps older than
 * five minutes are refused. Returns the number of valid signatures.
 */
/**
 * Standard Webhooks verification as the reference libraries do it: the
 * `webhook-signature` value split on spaces, each entry split on its one comma
 * into version and signature (a second comma is an error there too), entries
 * of other versions skipped. Answers how many v1 signatures match.
 */
export function verifyStandardWebhook(secret: string, received: Received): number {
  const id = received.headers['webhook-id'];
  const timestamp = received.headers['webhook-timestamp'];
  const header = received.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof header !== 'string') return 0;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return 0;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${received.body}`).digest();
  let matches = 0;
  for (const entry of header.split(' ')) {
    const parts = entry.split(',');
    if (parts.length !== 2) throw new Error(`malformed signature entry: ${entry}`);
    const [version, signature] = parts as [string, string];
    if (version !== 'v1') continue;
    const given = Buffer.from(signature, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) matches += 1;
  }
  return matches;
}

/** Mautic-style: the `mautic,` entry is the base64 HMAC-SHA256 of the raw body, keyed with the secret string. */
export function verifyMauticSignature(secret: string, received: Received): boolean {
  const header = received.headers['webhook-signature'];
  const entry = typeof header === 'string' ? header.split(' ').find((value) => value.startsWith('mautic,')) : undefined;
  return entry === `mautic,${createHmac('sha256', secret).update(received.body).digest('base64')}`;
}

/** Polls until `check` returns something truthy (the deadline only bounds a hang). */
export async function until<T>(check: () => T | Promise<T>, what: string, timeoutMs = 15_000): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | null | undefined | 0 | ''>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 25));
  }
}

/** Retries in milliseconds instead of minutes; same schedule shape. */
export const FAST_POLICY = { baseDelayMs: 20, maxDelayMs: 100, jitter: 0, retryWindowMs: 60_000, timeoutMs: 3000 };

export async function startTestWorker(
  t: TestContext,
  options: { env?: Partial<WorkerOptions['config']>; policy?: WorkerOptions['policy'] } = {},
): Promise<DeliveryWorker> {
  const worker = await startWorker({
    databaseUrl: t.url,
    config: { ...t.config, WORKER_CONCURRENCY: 4, ...options.env },
    logger: pino({ level: 'silent' }),
    policy: { ...FAST_POLICY, ...options.policy },
    pollIntervalMs: 50,
    resetLockedIntervalMs: 100,
  });
  afterAll(() => worker.stop());
  return worker;
}

/** A deal inserted straight into the default pipeline's first stage. */
export async function insertDeal(db: Db, title = 'Acme renewal'): Promise<number> {
  const pipeline = await defaultPipeline(db);
  const admin = await db.selectFrom('users').select('id').orderBy('id').executeTakeFirstOrThrow();
  const row = await db
    .insertInto('deals')
    .values({
      title,
      amount: '1500.50',
      currency: 'USD',
      pipeline_id: pipeline.id,
      stage_id: pipeline.stages[0]!.id,
      status: 'open',
      owner_id: admin.id,
      created_by_id: admin.id,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Records one event in its own committed transaction, as a deal service would. */
export function recordEvent(db: Db, dealId: number, event: EventName, extras?: RecordOptions['extras']): Promise<EventPayload> {
  return db.transaction().execute((trx) => writeDealEvents(trx, [{ event, dealId, changedBy: { id: 1, name: 'Ada Admin' }, extras }]).then(([payload]) => payload!));
}
