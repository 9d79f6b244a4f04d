import { afterEach, describe, expect, it, vi } from 'vitest';
import { TimeoutError, DeadlineTimer, withTimeout } from '../../../../shared/util/async.js';

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

describe('DeadlineTimer', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('settles as each promise does when in time, and forgets settled calls', async () => {
    vi.useFakeTimers();
    const timeouts = new DeadlineTimer(1000, 'event append', Date.now);
    await expect(timeouts.race(Promise.resolve(7))).resolves.toBe(7);
    const failure = new Error('refused');
    await expect(timeouts.race(Promise.reject(failure))).rejects.toBe(failure);
    expect(timeouts.pending).toBe(0);
  });

  it('expires each call at its own deadline with one timer, oldest first', async () => {
    vi.useFakeTimers();
    const timeouts = new DeadlineTimer(250, 'event append', Date.now);
    const first = timeouts.race(new Promise<number>(() => {}));
    const firstOutcome = expect(first).rejects.toThrow(new TimeoutError('event append did not answer in time'));
    await vi.advanceTimersByTimeAsync(100);
    let resolveSecond: (v: number) => void = () => {};
    const second = timeouts.race(new Promise<number>((r) => (resolveSecond = r)));
    const third = timeouts.race(new Promise<number>(() => {}));
    const thirdOutcome = expect(third).rejects.toBeInstanceOf(TimeoutError);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(150);
    await firstOutcome;
    expect(timeouts.pending).toBe(2);
    resolveSecond(5);
    await expect(second).resolves.toBe(5);
    expect(timeouts.pending).toBe(1);
    await vi.advanceTimersByTimeAsync(99);
    expect(timeouts.pending).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await thirdOutcome;
    expect(timeouts.pending).toBe(0);
  });

  it('ignores a late answer once the call timed out', async () => {
    vi.useFakeTimers();
    const timeouts = new DeadlineTimer(50, 'event append', Date.now);
    let resolveLate: (v: number) => void = () => {};
    const call = timeouts.race(new Promise<number>((r) => (resolveLate = r)));
    const outcome = expect(call).rejects.toBeInstanceOf(TimeoutError);
    await vi.advanceTimersByTimeAsync(50);
    await outcome;
    resolveLate(1);
    await Promise.resolve();
    await expect(call).rejects.toBeInstanceOf(TimeoutError);
  });

  it('rejects at once when no time is allowed', async () => {
    await expect(new DeadlineTimer(0, 'event append').race(new Promise(() => {}))).rejects.toThrow('event append: no time left');
  });

  it('times a caller\'s own waiter: expires it once at its deadline, or never once settled', async () => {
    vi.useFakeTimers();
    const timeouts = new DeadlineTimer(100, 'event append', Date.now);
    const expired: string[] = [];
    const waiter = (name: string) => ({ deadline: 0, settled: false, expire: (err: TimeoutError) => void expired.push(`${name}: ${err.message}`) });
    const late = waiter('late');
    const prompt = waiter('prompt');
    timeouts.track(late);
    await vi.advanceTimersByTimeAsync(40);
    timeouts.track(prompt);
    expect(timeouts.settle(prompt)).toBe(true);
    await vi.advanceTimersByTimeAsync(60);
    expect(expired).toEqual(['late: event append did not answer in time']);
    expect(late.settled).toBe(true);
    // Settling after the deadline says so: the caller must not answer twice.
    expect(timeouts.settle(late)).toBe(false);
    await vi.advanceTimersByTimeAsync(1000);
    expect(expired).toHaveLength(1);
    expect(timeouts.pending).toBe(0);
    // No time at all: expired before track returns.
    const none = waiter('none');
    new DeadlineTimer(0, 'event append').track(none);
    expect(expired[1]).toBe('none: event append: no time left');
  });

  it('expires a waiter tracked out of order at its own, earlier deadline (a request that waited before its append)', async () => {
    vi.useFakeTimers();
    const timeouts = new DeadlineTimer(1000, 'event append', Date.now);
    const expired: string[] = [];
    const waiter = (name: string) => ({ deadline: 0, settled: false, expire: () => void expired.push(name) });
    const t0 = Date.now();
    timeouts.track(waiter('full time')); // t0 + 1000
    timeouts.trackUntil(waiter('earlier'), t0 + 300);
    timeouts.trackUntil(waiter('between'), t0 + 600);
    await vi.advanceTimersByTimeAsync(300);
    expect(expired).toEqual(['earlier']);
    await vi.advanceTimersByTimeAsync(300);
    expect(expired).toEqual(['earlier', 'between']);
    await vi.advanceTimersByTimeAsync(400);
    expect(expired).toEqual(['earlier', 'between', 'full time']);
    expect(timeouts.pending).toBe(0);
  });

  it('races a promise against a given deadline; one already past rejects at once', async () => {
    vi.useFakeTimers();
    const timeouts = new DeadlineTimer(60_000, 'redis call', Date.now);
    const late = timeouts.raceUntil(new Promise(() => {}), Date.now() + 50);
    const outcome = expect(late).rejects.toThrow('redis call did not answer in time');
    await vi.advanceTimersByTimeAsync(50);
    await outcome;
    await expect(timeouts.raceUntil(new Promise(() => {}), Date.now())).rejects.toThrow('redis call: no time left');
    await expect(timeouts.raceUntil(Promise.resolve(3), Date.now() + 10)).resolves.toBe(3);
  });

  it('holds no waiter the queue head has passed, though calls are always in flight', () => {
    const timeouts = new DeadlineTimer(60_000, 'event append');
    const waiters = Array.from({ length: 3000 }, () => ({ deadline: 0, settled: false, expire: () => {} }));
    // A sliding window: three calls in flight at any time, each settled in order.
    waiters.forEach((w, i) => {
      timeouts.track(w);
      if (i >= 3) timeouts.settle(waiters[i - 3]!);
    });
    const held = (timeouts as unknown as { waiting: unknown[] }).waiting;
    expect(timeouts.pending).toBe(3);
    expect(waiters.slice(0, -3).filter((w) => held.includes(w))).toEqual([]);
  });

  it('keeps memory bounded under a long stream of calls that answer in time', async () => {
    const timeouts = new DeadlineTimer(60_000, 'event append');
    for (let i = 0; i < 5000; i++) await timeouts.race(Promise.resolve(i));
    expect(timeouts.pending).toBe(0);
    expect((timeouts as unknown as { waiting: unknown[] }).waiting.length).toBe(0);
  });
});
