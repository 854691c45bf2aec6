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
  /** The host's contacts and DEFAULT_CURRENCY, for inbound receives queued while the host was down (inbound_retry jobs). */
  inbound?: { contacts: HostContacts; currency: string };
}

export interface DeliveryWorker {
  runner: Runner;
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

export async function startWorker(options: WorkerOptions): Promise<DeliveryWorker> {
  const { config } = options;
  const logger = options.logger.child({ component: 'worker' });
  const policy = { ...DEFAULT_RETRY_POLICY, ...options.policy };
  const concurrency = config.WORKER_CONCURRENCY;
  const database = createDatabase(withAsyncCommit(options.databaseUrl), { max: concurrency + 4 });
  const dispatch = options.dispatch ?? dispatchFromConfig(config);
  const dispatcher = createDispatcher(database.db, config, policy, logger, dispatch);
  const heartbeat = createHeartbeat(database.db, logger, options.heartbeat);

  const runner = await run({
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
    crontab: PRUNE_CRONTAB,
    preset: {
      // A small local batch keeps the next job at hand; completions are batched per tick.
      worker: { localQueue: { size: concurrency }, completeJobBatchDelay: 0 },
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
      [PRUNE_TASK]: async () => {
        const pruned = await pruneDeliveryLog(database.db, options.retentionMs ?? DEFAULT_RETENTION_MS);
        logger.info(pruned, 'pruned the delivery log');
      },
    },
  });
  heartbeat.start();
  runner.promise.catch((err: unknown) => logger.error({ err }, 'delivery worker stopped with an error'));
  logger.info({ concurrency, mode: dispatch.mode }, 'delivery worker started');

  let stopping: Promise<void> | undefined;
  return {
    runner,
    stop() {
      stopping ??= (async () => {
        await runner.stop();
        await heartbeat.stop();
        dispatcher.close();
        await database.destroy();
        logger.info('delivery worker stopped');
      })();
      return stopping;
    },
  };
}
