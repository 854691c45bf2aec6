/**
 * Per-source rate limit: a token bucket in process memory. A source may send
 * INBOUND_RATE_LIMIT requests per second sustained and bursts of twice that,
 * to the whole service: with several processes on one database each takes an
 * equal share (`share()`, the number of live processes), so behind a
 * load balancer that spreads requests the pair admits what the limit says and
 * never more.
 */

interface Bucket {
  tokens: number;
  at: number;
}

const MAX_BUCKETS = 10_000;

export class SourceRateLimiter {
  private buckets = new Map<string, Bucket>();

  constructor(
    private readonly limit: number,
    private readonly now: () => number = () => Date.now(),
    private readonly share: () => number = () => 1,
  ) {}

  /** Takes one token; returns 0 when allowed, else the whole seconds to wait (for Retry-After). */
  take(key: string): number {
    const perSecond = this.limit / Math.max(1, this.share());
    const burst = perSecond * 2;
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * perSecond);
    bucket.at = now;
    // Re-insert so the Map's order is least-recently-used first.
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    // A forgotten bucket is a full one, so dropping the stalest only ever errs towards allowing.
    if (this.buckets.size > MAX_BUCKETS) this.buckets.delete(this.buckets.keys().next().value!);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
  }
}
