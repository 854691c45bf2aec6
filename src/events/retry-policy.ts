/**
 * When to try a failed delivery again. Exponential backoff with jitter for
 * about three days; a receiver's Retry-After (429/503) wins when it asks for a
 * wait. Every duration is a field so that tests can run the same schedule in
 * milliseconds.
 */
export interface RetryPolicy {
  /** Per attempt: connect, send, response (the contract's 10 s). */
  timeoutMs: number;
  /** First retry delay; doubles per failure up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Each delay is scaled by a random factor in [1 - jitter, 1 + jitter]. */
  jitter: number;
  /** A delivery gives up when its next attempt would fall past this window. */
  retryWindowMs: number;
  /** The longest Retry-After that is honoured as is. */
  maxRetryAfterMs: number;
  /** A subscription failing without a single success for this long is disabled. */
  disableAfterMs: number;
  /** How much of each response body the delivery log keeps. */
  responseLimit: number;
}

const SECOND = 1000;
const HOUR = 3600 * SECOND;
const DAY = 24 * HOUR;

/** 10 s, 20 s, 40 s, ... 8 h, then every 8 h: about 20 attempts in 3 days. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  timeoutMs: 10 * SECOND,
  baseDelayMs: 10 * SECOND,
  maxDelayMs: 8 * HOUR,
  jitter: 0.2,
  retryWindowMs: 3 * DAY,
  maxRetryAfterMs: DAY,
  disableAfterMs: 5 * DAY,
  responseLimit: 2048,
};

/**
 * Delay before the next attempt, after `failures` failed attempts in this cycle
 * (1 = the first failure). A Retry-After (429/503) is honoured as a floor: it
 * can make the wait longer than the backoff (up to maxRetryAfterMs), never
 * shorter, so `Retry-After: 0` cannot turn retries into a tight loop.
 */
export function retryDelay(policy: RetryPolicy, failures: number, retryAfterMs: number | null, random = Math.random): number {
  const exponential = Math.min(policy.baseDelayMs * 2 ** Math.min(failures - 1, 40), policy.maxDelayMs);
  const backoff = Math.round(exponential * (1 - policy.jitter + 2 * policy.jitter * random()));
  return retryAfterMs === null ? backoff : Math.max(backoff, Math.min(retryAfterMs, policy.maxRetryAfterMs));
}
