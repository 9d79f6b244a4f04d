import { afterEach, describe, expect, it, vi } from 'vitest';
import { TimeoutError, withTimeout } from '../shared/async.js';

describe('withTimeout', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("settles as the promise does when it is in time, and leaves no timer behind", async () => {
    vi.useFakeTimers();
    await expect(withTimeout(Promise.resolve(7), 1000, 'x')).resolves.toBe(7);
    const failure = new Error('refused');
    await expect(withTimeout(Promise.reject(failure), 1000, 'x')).rejects.toBe(failure);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects with a TimeoutError naming the operation once the time is up', async () => {
    vi.useFakeTimers();
    const never = new Promise<number>(() => {});
    const result = withTimeout(never, 250, 'dedupe claim');
    const outcome = expect(result).rejects.toThrow(new TimeoutError('dedupe claim did not answer within 250 ms'));
    await vi.advanceTimersByTimeAsync(249);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await outcome;
    await expect(result).rejects.toBeInstanceOf(TimeoutError);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects at once when no time is left', async () => {
    vi.useFakeTimers();
    await expect(withTimeout(new Promise(() => {}), 0, 'kafka send')).rejects.toThrow('kafka send: no time left');
    await expect(withTimeout(new Promise(() => {}), -5, 'kafka send')).rejects.toBeInstanceOf(TimeoutError);
    expect(vi.getTimerCount()).toBe(0);
  });
});
