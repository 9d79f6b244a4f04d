/** Exponential backoff: 100 ms, 200 ms, ... capped (5 s by default), with ±20 % jitter. */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 100, maxMs: 5_000 };

export function backoffDelay(attempt: number, options: BackoffOptions = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const base = Math.min(options.maxMs, options.initialMs * 2 ** Math.min(attempt, 30));
  return Math.round(base * (0.8 + 0.4 * random()));
}

export class RetryAborted extends Error {
  constructor(readonly lastError: unknown) {
    super('retry abandoned');
  }
}

interface RetryOptions {
  backoff?: BackoffOptions;
  /** Checked before each attempt and after each wait: true abandons with RetryAborted. */
  shouldStop: () => boolean;
  /** Told about each failed attempt (1-based) and the wait before the next one. */
  onFailure?: (error: unknown, attempt: number, delayMs: number) => void;
  /** Wakes a pending wait early (e.g. on shutdown); resolves the sleep, then shouldStop decides. */
  wake?: { promise: Promise<void> };
}

/** Runs `fn` until it succeeds or `shouldStop()` says to give up. */
export async function retry<T>(fn: () => Promise<T>, options: RetryOptions): Promise<T> {
  let lastError: unknown = null;
  for (let attempt = 0; ; attempt++) {
    if (options.shouldStop()) throw new RetryAborted(lastError);
    try {
      return await fn();
    } catch (err) {
      lastError = err;
      const delay = backoffDelay(attempt, options.backoff);
      options.onFailure?.(err, attempt + 1, delay);
      await sleep(delay, options.wake?.promise);
    }
  }
}

export function sleep(ms: number, wake?: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void wake?.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
