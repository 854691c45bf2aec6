import { sql } from 'kysely';
import { preparedAs, type Executor } from '../db/database.js';

/**
 * The worker's side of the delivery tables. An event's first attempts are made
 * by its fan-out job before any delivery row exists; the row is written with
 * the outcome, in the statement that logs the attempt. A failed delivery gets
 * its own keyed retry job (written in the same transaction), so retries are per
 * target. Should the fan-out job die mid-way, its rerun attempts exactly the
 * targets that have no row yet.
 */

export const DELIVER_ATTEMPT_TASK = 'deliver_attempt';

const jobKey = (deliveryId: number) => `delivery:${deliveryId}`;

/**
 * The targets of a job's events that have no delivery yet (builtin: every
 * enabled subscription that selected the event; forward: the host), ready to
 * attempt, in the order of the events. One statement per job: a job of one
 * event looks it up by key, which PostgreSQL plans once per connection; a job
 * of many (a batch) takes an array, planned per call but once for all of them.
 */
export async function firstAttempts(db: Executor, eventIds: string[], mode: 'builtin' | 'forward'): Promise<DeliveryToAttempt[]> {
  const one = eventIds.length === 1;
  const events = one ? sql`o.id = ${eventIds[0]}::uuid` : sql`o.id = any(${eventIds}::uuid[])`;
  const targets =
    mode === 'forward'
      ? sql`from event_outbox o left join webhook_subscriptions s on false
            where ${events}
              and not exists (select 1 from webhook_deliveries d where d.event_id = o.id and d.subscription_id is null)`
      : sql`from event_outbox o join webhook_subscriptions s on s.enabled and o.event = any (s.events)
            where ${events}
              and not exists (select 1 from webhook_deliveries d where d.event_id = o.id and d.subscription_id = s.id)`;
  const { rows } = await sql<DeliveryToAttempt>`${preparedAs(`outbound_first_attempts_${mode}_${one ? 'one' : 'many'}`)}
    select null::bigint as id, s.id as subscription_id, o.id as event_id, o.event, 'pending' as status,
           0 as cycle_failures, true as due, s.url, s.enabled, s.secret_encrypted,
           case when s.previous_secret_expires_at > now() then s.previous_secret_encrypted end as previous_secret_encrypted,
           o.payload
    ${targets}`.execute(db);
  const position = new Map(eventIds.map((id, i) => [id, i]));
  return rows.sort((a, b) => position.get(a.event_id)! - position.get(b.event_id)! || (a.subscription_id ?? 0) - (b.subscription_id ?? 0));
}

/** A delivery of one event to one subscription (the test event); queued at once. */
export async function insertDelivery(db: Executor, subscriptionId: number, eventId: string, event: string): Promise<number> {
  const row = await db
    .insertInto('webhook_deliveries')
    .values({ subscription_id: subscriptionId, event_id: eventId, event })
    .returning('id')
    .executeTakeFirstOrThrow();
  await scheduleAttempt(db, row.id, null);
  return row.id;
}

/** (Re)queues the delivery's job; a job already waiting for it is replaced. `runAt` null = now. */
export async function scheduleAttempt(db: Executor, deliveryId: number, runAt: Date | null): Promise<void> {
  await sql`select graphile_worker.add_job(${DELIVER_ATTEMPT_TASK}, json_build_object('deliveryId', ${deliveryId}::bigint),
    run_at => ${runAt}::timestamptz, job_key => ${jobKey(deliveryId)})`.execute(db);
}

export interface DeliveryToAttempt {
  /** null for a first attempt: the row is written with its outcome. */
  id: number | null;
  subscription_id: number | null;
  event_id: string;
  event: string;
  status: string;
  /** Failed attempts since the current retry cycle began (creation or a manual redelivery). */
  cycle_failures: number;
  due: boolean;
  url: string | null;
  enabled: boolean | null;
  secret_encrypted: string | null;
  previous_secret_encrypted: string | null;
  payload: Record<string, unknown>;
}

export async function loadDelivery(db: Executor, deliveryId: number): Promise<DeliveryToAttempt | undefined> {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('event_outbox as o', 'o.id', 'd.event_id')
    .leftJoin('webhook_subscriptions as s', 's.id', 'd.subscription_id')
    .select([
      'd.id',
      'd.subscription_id',
      'd.event_id',
      'd.event',
      'd.status',
      sql<number>`(select count(*)::int from webhook_attempts a
        where a.delivery_id = d.id and a.attempted_at >= d.cycle_started_at)`.as('cycle_failures'),
      // A job that outlived a reschedule (crash after commit) finds its delivery not yet due.
      sql<boolean>`coalesce(d.next_attempt_at <= now() + interval '1 second', false)`.as('due'),
      's.url',
      's.enabled',
      's.secret_encrypted',
      sql<string | null>`case when s.previous_secret_expires_at > now() then s.previous_secret_encrypted end`.as(
        'previous_secret_encrypted',
      ),
      'o.payload',
    ])
    .where('d.id', '=', deliveryId)
    .executeTakeFirst();
}

export interface AttemptRecord {
  attemptedAt: Date;
  statusCode: number | null;
  durationMs: number;
  responseBody: string | null;
  error: string | null;
}

const ms = (value: number) => sql`(${value}::double precision * interval '1 millisecond')`;

/** Success: one statement writes the outcome and the attempt, and the subscription's failing streak ends. */
export async function recordSuccess(db: Executor, delivery: DeliveryToAttempt, attempt: AttemptRecord): Promise<void> {
  const outcome =
    delivery.id === null
      ? sql`insert into webhook_deliveries (subscription_id, event_id, event, status, attempt_count, next_attempt_at,
              last_status_code, delivered_at)
            values (${delivery.subscription_id}::integer, ${delivery.event_id}::uuid, ${delivery.event}, 'succeeded', 1, null,
              ${attempt.statusCode}, ${attempt.attemptedAt})
            on conflict do nothing
            returning id`
      : sql`update webhook_deliveries
            set status = 'succeeded', attempt_count = attempt_count + 1, last_status_code = ${attempt.statusCode},
                last_error = null, next_attempt_at = null, delivered_at = ${attempt.attemptedAt}, updated_at = now()
            where id = ${delivery.id}
            returning id`;
  await sql`${preparedAs(delivery.id === null ? 'outbound_first_success' : 'outbound_retry_success')}
    with delivery as (${outcome}), attempt as (
      insert into webhook_attempts (delivery_id, attempted_at, status_code, duration_ms, response_body, error)
      select id, ${attempt.attemptedAt}, ${attempt.statusCode}, ${attempt.durationMs}, ${attempt.responseBody}, null from delivery
    )
    update webhook_subscriptions set failing_since = null
    where id = ${delivery.subscription_id}::integer and failing_since is not null`.execute(db);
}

export interface FailureOutcome {
  status: 'pending' | 'failed';
  nextAttemptAt: Date | null;
  disabledReason: string | null;
}

/**
 * Failure: log the attempt, extend the subscription's failing streak (disabling
 * it on 410 or after `disableAfterMs` without a success), then either schedule
 * the next attempt or give up when it would fall outside the retry window.
 * Run inside a transaction.
 */
export async function recordFailure(
  trx: Executor,
  delivery: DeliveryToAttempt,
  attempt: AttemptRecord,
  options: { gone: boolean; delayMs: number; retryWindowMs: number; disableAfterMs: number },
): Promise<FailureOutcome> {
  const deliveryId = delivery.id ?? (await insertPending(trx, delivery, attempt.attemptedAt));
  if (deliveryId === null) return { status: 'pending', nextAttemptAt: null, disabledReason: null };
  await trx
    .insertInto('webhook_attempts')
    .values({
      delivery_id: deliveryId,
      attempted_at: attempt.attemptedAt,
      status_code: attempt.statusCode,
      duration_ms: attempt.durationMs,
      response_body: attempt.responseBody,
      error: attempt.error,
    })
    .execute();

  let disabledReason: string | null = null;
  if (delivery.subscription_id !== null) {
    const tooLong = sql`coalesce(failing_since, now()) <= now() - ${ms(options.disableAfterMs)}`;
    const subscription = await sql<{ enabled: boolean; disabled_reason: string | null }>`
      update webhook_subscriptions
      set failing_since = coalesce(failing_since, now()),
          enabled = enabled and not (${options.gone}::boolean or ${tooLong}),
          disabled_at = case when enabled and (${options.gone}::boolean or ${tooLong}) then now() else disabled_at end,
          disabled_reason = case
            when not enabled then disabled_reason
            when ${options.gone}::boolean then 'The receiver answered 410 Gone'
            when ${tooLong} then 'No successful delivery since ' || to_char(failing_since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
              || ': disabled after ' || ${Math.round(options.disableAfterMs / 86_400_000)} || ' days of failures'
            else disabled_reason end
      where id = ${delivery.subscription_id}
      returning enabled, disabled_reason`.execute(trx);
    const row = subscription.rows[0];
    if (row && !row.enabled) disabledReason = row.disabled_reason ?? 'Subscription disabled';
  }

  const stop = options.gone || disabledReason !== null;
  const lastError = attempt.error ?? (attempt.statusCode !== null ? `HTTP ${attempt.statusCode}` : null);
  const { rows } = await sql<{ status: 'pending' | 'failed'; next_attempt_at: Date | null }>`
    update webhook_deliveries
    set attempt_count = attempt_count + 1, last_status_code = ${attempt.statusCode}, updated_at = now(),
        status = case when ${stop}::boolean or now() + ${ms(options.delayMs)} > cycle_started_at + ${ms(options.retryWindowMs)}
                      then 'failed' else 'pending' end,
        next_attempt_at = case when ${stop}::boolean or now() + ${ms(options.delayMs)} > cycle_started_at + ${ms(options.retryWindowMs)}
                      then null else now() + ${ms(options.delayMs)} end,
        last_error = ${disabledReason !== null && !options.gone ? sql`${lastError} || '; ' || ${disabledReason}` : lastError}
    where id = ${deliveryId}
    returning status, next_attempt_at`.execute(trx);
  const outcome = rows[0] ?? { status: 'failed' as const, next_attempt_at: null };
  if (outcome.status === 'pending') await scheduleAttempt(trx, deliveryId, outcome.next_attempt_at);
  return { status: outcome.status, nextAttemptAt: outcome.next_attempt_at, disabledReason };
}

/**
 * The row of a first attempt that failed; null when another run already wrote it.
 * Its retry cycle starts at that attempt (the app's clock, like attempted_at), so
 * the attempt counts towards the backoff.
 */
async function insertPending(trx: Executor, delivery: DeliveryToAttempt, cycleStartedAt: Date): Promise<number | null> {
  const { rows } = await sql<{ id: number }>`
    insert into webhook_deliveries (subscription_id, event_id, event, cycle_started_at)
    values (${delivery.subscription_id}::integer, ${delivery.event_id}::uuid, ${delivery.event}, ${cycleStartedAt})
    on conflict do nothing
    returning id`.execute(trx);
  return rows[0]?.id ?? null;
}

/** The delivery cannot be attempted (subscription disabled, forward target gone): it fails without an attempt. */
export async function abandon(db: Executor, deliveryId: number, reason: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', next_attempt_at: null, last_error: reason, updated_at: new Date() })
    .where('id', '=', deliveryId)
    .where('status', '=', 'pending')
    .execute();
}
