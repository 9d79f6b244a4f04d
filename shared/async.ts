/** A promise that did not settle in time (see withTimeout). */
export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/**
 * The promise's outcome, or a TimeoutError after `ms` (at once when `ms` <= 0, e.g. a deadline
 * already past). The timer never outlives the promise. The promise itself goes on: a caller that
 * stops waiting must expect it to settle later.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  if (ms <= 0) return Promise.reject(new TimeoutError(`${what}: no time left`));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} did not answer within ${Math.round(ms)} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
