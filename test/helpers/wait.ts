/** Waiting in tests: a pause, and polling a condition with a bound. */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `fn` every `intervalMs` until it returns something other than undefined/false; throws after
 * `timeoutMs`, naming `what` and the last error `fn` threw. The one way tests wait for a condition.
 */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: string | undefined;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = String(err);
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last !== undefined ? `: ${last}` : ''}`);
    await sleep(intervalMs);
  }
}
