import type { Logger } from 'pino';
import { appKeys, type Config } from '../config.js';
import type { Db } from '../db/database.js';
import { open } from '../crypto/secret-box.js';
import { dispatchFromConfig, type EventDispatch } from '../host/port.js';
import {
  abandon,
  firstAttempts,
  loadDelivery,
  recordFailure,
  recordSuccess,
  type DeliveryToAttempt,
} from './delivery.repository.js';
import { postJson } from './http-post.js';
import { retryDelay, type RetryPolicy } from './retry-policy.js';
import { signedHeaders } from './signing.js';
import { targetAgents, type TargetAgents } from './ssrf.js';

/**
 * What the worker's tasks do. `deliverEvents` turns a job's outbox events into
 * deliveries (one per subscription in builtin mode, one to the host in forward
 * mode) and makes their first attempts, side by side; `attempt` is a retry (or
 * a manual redelivery, or a test event) of one delivery. Each attempt is
 * recorded; a failure schedules that delivery's own retry job.
 */

export type DispatcherConfig = Pick<
  Config,
  'WEBHOOK_MODE' | 'HOST_WEBHOOK_URL' | 'HOST_WEBHOOK_SECRET' | 'WEBHOOK_ALLOW_PRIVATE_TARGETS' | 'WORKER_CONCURRENCY' | 'APP_KEY' | 'APP_KEY_PREVIOUS'
>;

export interface Dispatcher {
  deliverEvents(eventIds: string[]): Promise<void>;
  attempt(deliveryId: number): Promise<void>;
  close(): void;
}

interface Target {
  url: string;
  secrets: string[];
  agents: TargetAgents;
  /** Why nothing can be sent to this target now (the attempt is recorded as failed). */
  unusable?: string;
}

/** `dispatch`: where events go, as the host port says (default: from WEBHOOK_MODE). */
export function createDispatcher(
  db: Db,
  config: DispatcherConfig,
  policy: RetryPolicy,
  logger: Logger,
  dispatch: EventDispatch = dispatchFromConfig(config),
): Dispatcher {
  const sockets = Math.max(config.WORKER_CONCURRENCY, 8);
  // Subscriber URLs go through the SSRF filter; the host's own dispatcher is operator configuration.
  const subscriberAgents = targetAgents(config.WEBHOOK_ALLOW_PRIVATE_TARGETS, sockets);
  const hostAgents = targetAgents(true, sockets);

  function targetOf(delivery: DeliveryToAttempt): Target | string {
    if (delivery.subscription_id === null) {
      if (dispatch.mode !== 'forward') return 'Forward mode is not configured (HOST_WEBHOOK_URL)';
      return { url: dispatch.url, secrets: [dispatch.secret], agents: hostAgents };
    }
    if (!delivery.enabled || !delivery.url || !delivery.secret_encrypted) return 'Subscription disabled';
    if (!config.APP_KEY) throw new Error('APP_KEY is required to open subscription secrets');
    try {
      const secrets = [open(appKeys(config), delivery.secret_encrypted)];
      if (delivery.previous_secret_encrypted) secrets.push(open(appKeys(config), delivery.previous_secret_encrypted));
      return { url: delivery.url, secrets, agents: subscriberAgents };
    } catch {
      // Not a reason to stop the other targets: this one's attempts fail, visibly, until the key is right.
      return { url: delivery.url, secrets: [], agents: subscriberAgents, unusable: 'The signing secret cannot be decrypted with this APP_KEY' };
    }
  }

  async function attemptDelivery(delivery: DeliveryToAttempt): Promise<void> {
    const target = targetOf(delivery);
    if (typeof target === 'string') {
      // First attempts only target enabled subscriptions or a configured host, so this is a retry.
      if (delivery.id !== null) await abandon(db, delivery.id, target);
      return;
    }

    const body = JSON.stringify(delivery.payload);
    const attemptedAt = new Date();
    const result = target.unusable
      ? { statusCode: null, responseBody: null, error: target.unusable, retryAfterMs: null, durationMs: 0 }
      : await postJson({
          url: target.url,
          headers: signedHeaders(target.secrets, delivery.event_id, Math.floor(attemptedAt.getTime() / 1000), body),
          body,
          timeoutMs: policy.timeoutMs,
          agents: target.agents,
          responseLimit: policy.responseLimit,
        });
    const attempt = { attemptedAt, ...result };

    if (result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300) {
      await recordSuccess(db, delivery, attempt);
      return;
    }
    const outcome = await db.transaction().execute((trx) =>
      recordFailure(trx, delivery, attempt, {
        gone: result.statusCode === 410,
        delayMs: retryDelay(policy, delivery.cycle_failures + 1, result.retryAfterMs),
        retryWindowMs: policy.retryWindowMs,
        disableAfterMs: policy.disableAfterMs,
      }),
    );
    const log = { deliveryId: delivery.id, eventId: delivery.event_id, subscriptionId: delivery.subscription_id, status: result.statusCode };
    if (outcome.disabledReason) logger.warn({ ...log, reason: outcome.disabledReason }, 'webhook subscription disabled');
    else if (outcome.status === 'failed') logger.warn({ ...log, error: result.error }, 'webhook delivery gave up');
    else logger.debug({ ...log, error: result.error, nextAttemptAt: outcome.nextAttemptAt }, 'webhook delivery failed, will retry');
  }

  return {
    async deliverEvents(eventIds) {
      const deliveries = await firstAttempts(db, eventIds, dispatch.mode);
      // Every attempt finishes (and is recorded) before a database error fails the job.
      const results = await Promise.allSettled(deliveries.map(attemptDelivery));
      const failure = results.find((result) => result.status === 'rejected');
      if (failure) throw failure.reason;
    },

    async attempt(deliveryId) {
      const delivery = await loadDelivery(db, deliveryId);
      if (!delivery || delivery.status !== 'pending' || !delivery.due) return;
      await attemptDelivery(delivery);
    },

    close() {
      for (const agents of [subscriberAgents, hostAgents]) {
        agents.http.destroy();
        agents.https.destroy();
      }
    },
  };
}
