/**
 * How long a request body may take to arrive: every 10 s window of it must bring 160 KB (16 KB/s)
 * until its last byte, or the connection is closed without an answer. uWebSockets.js 20.30 did
 * this itself; the build in use (20.57) enforces no timeout at all, its timers never run
 * (docs/dependencies.md §uWebSockets.js on Debian 12), so without this a client could hold a
 * partial body, and the buffers it fills, open for ever. One sweep a second over the bodies still
 * arriving (usually none), not a timer per request; the request itself carries its window.
 */

export const BODY_WINDOW_MS = 10_000;
export const BODY_WINDOW_BYTES = 16 * 1024 * 10;
const SWEEP_MS = 1_000;

/**
 * A request whose body is arriving: its current window, whether it ended, how to drop it, and
 * the two links BodyDeadlines keeps it by (its own fields, null when it is not listed).
 */
export interface ArrivingBody {
  bodyWindowStart: number;
  bodyWindowBytes: number;
  bodyPrev: ArrivingBody | null;
  bodyNext: ArrivingBody | null;
  readonly done: boolean;
  /** Closes the connection without an answer. */
  drop(): void;
}

/**
 * The bodies arriving, as a list linked through the requests themselves: listing and unlisting a
 * request writes four fields and allocates nothing. A Set did both per request and, emptying and
 * filling up again all the time, rebuilt its table on shrink: the main thread's largest source of
 * page faults and a runtime call per request (bench/perf.ts PERF_EVENT=page-faults, 2026-11-29).
 */
export class BodyDeadlines {
  private head: ArrivingBody | null = null;
  private count = 0;
  private timer: NodeJS.Timeout | null = null;
  /** Told of each body dropped (the gateway counts it in gateway_rejected_requests_total{reason="slow_body"}). */
  onDrop: () => void = () => undefined;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** The body of `request` starts to arrive. */
  start(request: ArrivingBody): void {
    request.bodyWindowStart = this.now();
    request.bodyWindowBytes = 0;
    if (!this.listed(request)) {
      request.bodyPrev = null;
      request.bodyNext = this.head;
      if (this.head !== null) this.head.bodyPrev = request;
      this.head = request;
      this.count++;
    }
    this.timer ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
  }

  /** `bytes` more arrived; `last`: the body is complete. */
  progress(request: ArrivingBody, bytes: number, last: boolean): void {
    if (last) {
      this.unlist(request);
      return;
    }
    request.bodyWindowBytes += bytes;
  }

  /** Drops the bodies whose window ended short of BODY_WINDOW_BYTES; starts a new window for the others. */
  sweep(): void {
    const now = this.now();
    for (let request = this.head; request !== null; ) {
      // Read before `request` may be unlisted (its links cleared).
      const next: ArrivingBody | null = request.bodyNext;
      if (request.done) {
        this.unlist(request);
      } else if (now - request.bodyWindowStart >= BODY_WINDOW_MS) {
        if (request.bodyWindowBytes < BODY_WINDOW_BYTES) {
          this.unlist(request);
          request.drop();
          this.onDrop();
        } else {
          request.bodyWindowStart = now;
          request.bodyWindowBytes = 0;
        }
      }
      request = next;
    }
    if (this.count === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  get size(): number {
    return this.count;
  }

  private listed(request: ArrivingBody): boolean {
    return request.bodyPrev !== null || this.head === request;
  }

  private unlist(request: ArrivingBody): void {
    if (!this.listed(request)) return;
    const { bodyPrev: prev, bodyNext: next } = request;
    if (prev === null) this.head = next;
    else prev.bodyNext = next;
    if (next !== null) next.bodyPrev = prev;
    request.bodyPrev = null;
    request.bodyNext = null;
    this.count--;
  }
}

/** This thread's bodies (each front-end thread has its own uWS app and its own sweep). */
export const bodyDeadlines = new BodyDeadlines();
