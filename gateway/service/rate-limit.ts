/**
 * Per-provider event rate (RATE_LIMIT_EVENTS_PER_SECOND): a token bucket with one second of burst.
 * Behind an interface so every front-end thread of a gateway draws from the same buckets (the
 * main thread's, gateway/threads/), as one process did before threads.
 */
export interface RateLimiter {
  /** Takes up to `count` tokens of the provider's bucket at `now`; how many it got (the first ones of a batch go ahead). */
  take(systemUser: string, count: number, now: number): Promise<number>;
  /** `take` answered at once, for limiters whose buckets are in this thread; absent otherwise. */
  takeNow?(systemUser: string, count: number, now: number): number;
}

export class TokenBucketLimiter implements RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly eventsPerSecond: number) {}

  take(systemUser: string, count: number, now: number): Promise<number> {
    return Promise.resolve(this.takeNow(systemUser, count, now));
  }

  takeNow(systemUser: string, count: number, now: number): number {
    const rate = this.eventsPerSecond;
    let bucket = this.buckets.get(systemUser);
    if (bucket === undefined) {
      bucket = { tokens: rate, at: now };
      this.buckets.set(systemUser, bucket);
    }
    bucket.tokens = Math.min(rate, bucket.tokens + ((now - bucket.at) / 1000) * rate);
    bucket.at = now;
    const granted = Math.max(0, Math.min(count, Math.floor(bucket.tokens)));
    bucket.tokens -= granted;
    return granted;
  }
}
