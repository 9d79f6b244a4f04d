/**
 * A request's deadline (APPEND_TIMEOUT_MS from the start of an insert), passed down to every call
 * the request makes so that their waits add up to it, not to one timeout each.
 *
 * A deadline is a time in milliseconds on `clockMs`: the thread's time origin plus its monotonic
 * clock. Monotonic within a thread (a wall-clock step moves no deadline), and comparable across the
 * threads of one process (a front-end thread's deadline means the same instant on the main thread)
 * up to a wall-clock step between their starts.
 */
export type Deadline = number;

export function clockMs(): number {
  return performance.timeOrigin + performance.now();
}

export function deadlineIn(ms: number): Deadline {
  return clockMs() + ms;
}

/** Milliseconds left before `deadline` (negative once it passed; Infinity without one). */
export function timeLeft(deadline: Deadline | undefined): number {
  return deadline === undefined ? Infinity : deadline - clockMs();
}
