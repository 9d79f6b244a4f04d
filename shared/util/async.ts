import { clockMs } from './deadline.js';

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

/** A call `DeadlineTimer` times: `track` sets its deadline, `settle` or the timer ends it. */
export interface TimedWaiter {
  deadline: number;
  settled: boolean;
  /** Called once if the deadline passes first (the waiter is settled by then). */
  expire(err: TimeoutError): void;
}

/**
 * What the queue holds where a waiter the head has passed was: a waiter is a caller's object
 * (EventIngest's holds the call's records), so a passed one must not stay reachable until the
 * array is compacted (that kept answered calls' records alive for every scavenge to copy;
 * bench/allocations.ts measures the scavenges).
 */
const PASSED: TimedWaiter = Object.freeze({ deadline: 0, settled: true, expire: () => {} });

/** Settled waiters dropped from the front before the queue array is compacted. */
const COMPACT_AFTER = 1024;

/**
 * `withTimeout` for many calls at once (every insert's APPEND_TIMEOUT_MS, every Redis call's
 * share of its request's deadline). The waiters are kept in deadline order and one timer, armed
 * for the earliest one still waiting, serves them all: no timer to insert and remove and no extra
 * race promises per call, which withTimeout costs on every insert. Deadlines mostly come in order
 * (each is its request's start plus the same time), so a waiter is nearly always appended; one
 * that arrives out of order (a request that waited for its credentials first) is put in its place
 * from the back. The timer is not cleared when the queue empties (it fires once, finds nothing and
 * is not re-armed), so a steady trickle of calls arms it about once per `ms`, not once per call;
 * it is unref'd and never keeps the process alive.
 */
export class DeadlineTimer {
  private waiting: TimedWaiter[] = [];
  private head = 0;
  private timer: NodeJS.Timeout | null = null;
  /** When the armed timer fires (on `now`'s clock). */
  private armedFor = Infinity;

  constructor(
    /** What `track` and `race` allow a call. */
    private readonly ms: number,
    private readonly what: string,
    /** Monotonic by default (shared/util/deadline.ts): a wall-clock step must not expire or stall every waiter at once. */
    private readonly now: () => number = clockMs,
  ) {}

  /** Calls still waiting (for tests and diagnostics). */
  get pending(): number {
    let n = 0;
    for (let i = this.head; i < this.waiting.length; i++) if (!this.waiting[i]!.settled) n++;
    return n;
  }

  /**
   * Starts timing `waiter` for `ms` (a caller's own object: no promise or closure per call); the
   * caller calls `settle` when its call ends. With no time at all it expires before this returns.
   */
  track(waiter: TimedWaiter): void {
    this.trackUntil(waiter, this.now() + this.ms);
  }

  /** `track` until a given instant on this timer's clock (a request's deadline). */
  trackUntil(waiter: TimedWaiter, deadline: number): void {
    waiter.settled = false;
    waiter.deadline = deadline;
    if (!(deadline > this.now())) {
      waiter.settled = true;
      waiter.expire(new TimeoutError(`${this.what}: no time left`));
      return;
    }
    const waiting = this.waiting;
    let at = waiting.length;
    while (at > this.head && waiting[at - 1]!.deadline > deadline) at--;
    if (at === waiting.length) waiting.push(waiter);
    else waiting.splice(at, 0, waiter);
    if (deadline < this.armedFor) this.arm(deadline);
  }

  race<T>(promise: Promise<T>): Promise<T> {
    return this.raceUntil(promise, this.now() + this.ms);
  }

  /** The promise's outcome, or a TimeoutError at `deadline`. The promise itself goes on. */
  raceUntil<T>(promise: Promise<T>, deadline: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const waiter: TimedWaiter = { deadline: 0, expire: reject, settled: false };
      this.trackUntil(waiter, deadline);
      promise.then(
        (value) => {
          if (this.settle(waiter)) resolve(value);
        },
        (err: unknown) => {
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passes on the promise's own reason, as Promise.race would
          if (this.settle(waiter)) reject(err);
        },
      );
    });
  }

  /** Ends a tracked call; false when it had timed out already (its `expire` was called). */
  settle(waiter: TimedWaiter): boolean {
    if (waiter.settled) return false;
    waiter.settled = true;
    this.dropSettled();
    return true;
  }

  private dropSettled(): void {
    const waiting = this.waiting;
    while (this.head < waiting.length && waiting[this.head]!.settled) waiting[this.head++] = PASSED;
    if (this.head === waiting.length) {
      waiting.length = 0;
      this.head = 0;
    } else if (this.head >= COMPACT_AFTER && this.head * 2 >= waiting.length) {
      this.waiting = waiting.slice(this.head);
      this.head = 0;
    }
  }

  private arm(deadline: number): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.armedFor = deadline;
    this.timer = setTimeout(() => this.expireDue(), Math.max(0, deadline - this.now()));
    this.timer.unref();
  }

  private expireDue(): void {
    this.timer = null;
    this.armedFor = Infinity;
    const now = this.now();
    const waiting = this.waiting;
    while (this.head < waiting.length) {
      const waiter = waiting[this.head]!;
      if (!waiter.settled) {
        if (waiter.deadline > now) break;
        waiter.settled = true;
        waiter.expire(new TimeoutError(`${this.what} did not answer in time`));
      }
      waiting[this.head++] = PASSED;
    }
    this.dropSettled();
    if (this.head < this.waiting.length) this.arm(this.waiting[this.head]!.deadline);
  }
}
