import { setTimeout as sleep } from 'node:timers/promises';
import { run, type Runner } from 'graphile-worker';
import type { Logger } from 'pino';
import { createDatabase } from '../db/database.js';
import { INBOUND_RETRY_TASK, retryReceive } from '../domain/inbound/receive.service.js';
import { dispatchFromConfig, type EventDispatch, type HostContacts } from '../host/port.js';
import { DELIVER_ATTEMPT_TASK } from './delivery.repository.js';
import { createDispatcher, type DispatcherConfig } from './dispatcher.js';
import { DELIVER_EVENT_TASK } from './events.js';
import { createHeartbeat, type HeartbeatOptions } from './heartbeat.js';
import { DEFAULT_RETENTION_MS, PRUNE_CRONTAB, PRUNE_TASK, pruneDeliveryLog } from './prune.js';
import { COMPACT_SUMS_CRONTAB, COMPACT_SUMS_TASK, compactKeptSums } from '../domain/deals/kept-sums.js';
import { queueLogger } from './queue-logger.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.js';

/**
 * The delivery worker: graphile-worker over its own connection pool, picking
 * jobs up by LISTEN/NOTIFY the moment their transaction commits. Runs inside
 * `npm start` (WORKER=inline) or alone (`npm run worker`); any number of them
 * share the queue, each job locked by one. stop() finishes the jobs in hand
 * and hands back the ones fetched but not started, so nothing is dropped.
 */

export interface WorkerOptions {
  databaseUrl: string;
  config: DispatcherConfig;
  logger: Logger;
  policy?: Partial<RetryPolicy>;
  retentionMs?: number;
  /** How often scheduled retries are looked for (new jobs arrive by NOTIFY). */
  pollIntervalMs?: number;
  /**
   * How often locks of crashed workers (older than graphile-worker's 4 hours)
   * are released; graphile-worker's default is every 8 to 10 minutes.
   */
  resetLockedIntervalMs?: number;
  /** Where events go (the host port's dispatch); default: from WEBHOOK_MODE. */
  dispatch?: EventDispatch;
  /** Heartbeat and dead-worker detection (see heartbeat.ts). */
  heartbeat?: HeartbeatOptions;
  /**
   * Start a fresh runner when this one stops with an error, instead of leaving
   * the process without a worker. graphile-worker stops its pool when it cannot
   * record a job's outcome (the database went away); inside `npm start` that
   * must not take the web server down with it, nor leave `npm run worker` idle.
   */
  restartOnError?: boolean;
  /** The host's contacts and DEFAULT_CURRENCY, for inbound receives queued while the host was down (inbound_retry jobs). */
  inbound?: { contacts: HostContacts; currency: string };
}

export interface DeliveryWorker {
  /** The current runner (a new one after a restart). */
  readonly runner: Runner;
  stop(): Promise<void>;
}

/**
 * The worker's own connections commit without waiting for the WAL flush. Safe
 * for at-least-once: a database crash can only lose the newest commits, and the
 * job's completion is always committed after the rows it depends on, so what is
 * lost is redone (a delivery sent again), never skipped.
 */
function withAsyncCommit(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const options = url.searchParams.get('options');
  url.searchParams.set('options', `${options ? `${options} ` : ''}-c synchronous_commit=off`);
  return url.toString();
}

function idOf(payload: unknown, key: string): unknown {
  return payload && typeof payload === 'object' ? (payload as Record<string, unknown>)[key] : undefined;
}

/** WEBHOOK_RETRY_BASE_MS / WEBHOOK_RETRY_MAX_MS, when set: a shorter schedule of the same shape. */
function shortenedSchedule(config: DispatcherConfig): Partial<RetryPolicy> {
  const policy: Partial<RetryPolicy> = {};
  if (config.WEBHOOK_RETRY_BASE_MS) policy.baseDelayMs = config.WEBHOOK_RETRY_BASE_MS;
  if (config.WEBHOOK_RETRY_MAX_MS) policy.maxDelayMs = config.WEBHOOK_RETRY_MAX_MS;
  return policy;
}

export async function startWorker(options: WorkerOptions): Promise<DeliveryWorker> {
  const { config } = options;
  const logger = options.logger.child({ component: 'worker' });
  const policy = { ...DEFAULT_RETRY_POLICY, ...shortenedSchedule(config), ...options.policy };
  const concurrency = config.WORKER_CONCURRENCY;
  const database = createDatabase(withAsyncCommit(options.databaseUrl), { max: concurrency + 4 });
  const dispatch = options.dispatch ?? dispatchFromConfig(config);
  const dispatcher = createDispatcher(database.db, config, policy, logger, dispatch);
  const heartbeat = createHeartbeat(database.db, logger, options.heartbeat);

  const runOptions: Parameters<typeof run>[0] = {
    events: heartbeat.events,
    pgPool: database.pool,
    concurrency,
    noHandleSignals: true,
    pollInterval: options.pollIntervalMs ?? 1000,
    ...(options.resetLockedIntervalMs && {
      minResetLockedInterval: options.resetLockedIntervalMs,
      maxResetLockedInterval: options.resetLockedIntervalMs,
    }),
    logger: queueLogger(logger),
    crontab: [PRUNE_CRONTAB, COMPACT_SUMS_CRONTAB].join('\n'),
    preset: {
      // A small local batch keeps the next job at hand; completions are batched per tick. Failures too: unbatched,
      // graphile-worker does not await recording a failure, and a database outage then ends the process with an unhandled rejection.
      worker: { localQueue: { size: concurrency }, completeJobBatchDelay: 0, failJobBatchDelay: 0 },
    },
    taskList: {
      [DELIVER_EVENT_TASK]: async (payload) => {
        const eventIds = idOf(payload, 'eventIds');
        if (!Array.isArray(eventIds) || !eventIds.every((id) => typeof id === 'string')) throw new Error('deliver_event needs eventIds');
        // A failed attempt schedules its own retry; only a failure to record one fails this job, and its rerun skips targets that already have a delivery row.
        await dispatcher.deliverEvents(eventIds);
      },
      [DELIVER_ATTEMPT_TASK]: async (payload) => {
        const deliveryId = Number(idOf(payload, 'deliveryId'));
        if (!Number.isSafeInteger(deliveryId)) throw new Error('deliver_attempt needs a deliveryId');
        await dispatcher.attempt(deliveryId);
      },
      [INBOUND_RETRY_TASK]: async (payload, helpers) => {
        if (!options.inbound) throw new Error('inbound_retry needs the host contacts (startWorker({ inbound }))');
        const job = payload as Parameters<typeof retryReceive>[1];
        const result = await retryReceive({ db: database.db, ...options.inbound }, job);
        helpers.logger.info(`queued inbound receive written: deal ${result?.answer.deal.id ?? '(source gone)'}`);
      },
      [COMPACT_SUMS_TASK]: async () => {
        logger.info(await compactKeptSums(database.db), 'compacted the deal counters and forecast sums');
      },
      [PRUNE_TASK]: async () => {
        const pruned = await pruneDeliveryLog(database.db, options.retentionMs ?? DEFAULT_RETENTION_MS);
        logger.info(pruned, 'pruned the delivery log');
      },
    },
  };
  // graphile-worker gives up on a pool it cannot record outcomes for ("queue is in an inconsistent state"),
  // but its runner does not always settle; the pool's fatal error is the signal that always comes.
  let currentPool: string | undefined;
  heartbeat.events.on('pool:create', ({ workerPool }) => void (currentPool = workerPool.id));
  heartbeat.events.on('pool:fatalError', ({ workerPool, error }) => {
    if (workerPool.id === currentPool && runner) fail(runner, error);
  });
  // Assigned before any pool exists to fail; the listeners above only read it then.
  let runner!: Runner;
  runner = await run(runOptions);
  let stopping: Promise<void> | undefined;
  const stopped = new AbortController();

  /** After an error: new runners, backing off up to 15 s, until one starts or stop() is called. */
  async function restart(): Promise<void> {
    // Its jobs stay locked under ids that no longer beat: a live worker (this one, once back) unlocks them.
    heartbeat.forget();
    for (let attempt = 0; !stopping; attempt++) {
      const wait = Math.min(1000 * 2 ** attempt, 15_000);
      const slept = await sleep(wait, true, { signal: stopped.signal }).catch(() => false);
      if (!slept || stopping) return;
      try {
        runner = await run(runOptions);
        supervise(runner);
        logger.info('delivery worker restarted');
        return;
      } catch (err) {
        logger.warn({ err, retryInMs: Math.min(wait * 2, 15_000) }, 'delivery worker could not restart; trying again');
      }
    }
  }
  let restarting: Promise<void> = Promise.resolve();
  const failed = new WeakSet<Runner>();
  function fail(current: Runner, err: unknown): void {
    if (failed.has(current)) return;
    failed.add(current);
    logger.error({ err }, 'delivery worker stopped with an error');
    if (!options.restartOnError || stopping || current !== runner) return;
    // Its graceful shutdown can wait forever on a dead connection: let it go on alone and start afresh.
    current.stop().catch(() => undefined);
    restarting = restart();
  }
  function supervise(current: Runner): void {
    current.promise.catch((err: unknown) => fail(current, err));
  }
  supervise(runner);
  heartbeat.start();
  logger.info({ concurrency, mode: dispatch.mode }, 'delivery worker started');

  return {
    get runner() {
      return runner;
    },
    stop() {
      stopping ??= (async () => {
        stopped.abort();
        await restarting;
        await runner.stop().catch((err: unknown) => logger.warn({ err }, 'delivery worker runner was already stopped'));
        await heartbeat.stop();
        dispatcher.close();
        await database.destroy();
        logger.info('delivery worker stopped');
      })();
      return stopping;
    },
  };
}
