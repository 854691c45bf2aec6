import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, retryDelay } from '../src/events/retry-policy.js';

const SECOND = 1000;
const noJitter = () => 0.5; // the middle of the jitter range: no change

describe('retry schedule (contract section 5: backoff with jitter for about three days)', () => {
  it('doubles from 10 s up to 8 h, with ±20 % jitter', () => {
    expect([1, 2, 3, 4].map((n) => retryDelay(DEFAULT_RETRY_POLICY, n, null, noJitter))).toEqual([10, 20, 40, 80].map((s) => s * SECOND));
    expect(retryDelay(DEFAULT_RETRY_POLICY, 30, null, noJitter)).toBe(8 * 3600 * SECOND);
    expect(retryDelay(DEFAULT_RETRY_POLICY, 1, null, () => 0)).toBe(8 * SECOND);
    expect(retryDelay(DEFAULT_RETRY_POLICY, 1, null, () => 1)).toBe(12 * SECOND);
    expect(DEFAULT_RETRY_POLICY.retryWindowMs).toBe(3 * 24 * 3600 * SECOND);
    expect(DEFAULT_RETRY_POLICY.timeoutMs).toBe(10 * SECOND);
  });

  it('honours Retry-After as a floor: longer waits are kept (capped at a day), shorter ones never speed retries up', () => {
    expect(retryDelay(DEFAULT_RETRY_POLICY, 1, 120 * SECOND, noJitter)).toBe(120 * SECOND);
    expect(retryDelay(DEFAULT_RETRY_POLICY, 1, 0, noJitter)).toBe(10 * SECOND);
    expect(retryDelay(DEFAULT_RETRY_POLICY, 3, 1 * SECOND, noJitter)).toBe(40 * SECOND);
    expect(retryDelay(DEFAULT_RETRY_POLICY, 1, 10 * 24 * 3600 * SECOND, noJitter)).toBe(24 * 3600 * SECOND);
  });
});
