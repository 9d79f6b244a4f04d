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

/** A request whose body is arriving: its current window, whether it ended, and how to drop it. */
export interface ArrivingBody {
  bodyWindowStart: number;
  bodyWindowBytes: number;
  readonly done: boolean;
  /** Closes the connection without an answer. */
  drop(): void;
}

export class BodyDeadlines {
  private readonly arriving = new Set<ArrivingBody>();
  private timer: NodeJS.Timeout | null = null;
  /** Told of each body dropped (the gateway counts it in gateway_rejected_requests_total{reason="slow_body"}). */
  onDrop: () => void = () => undefined;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** The body of `request` starts to arrive. */
  start(request: ArrivingBody): void {
    request.bodyWindowStart = this.now();
    request.bodyWindowBytes = 0;
    this.arriving.add(request);
    this.timer ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
  }

  /** `bytes` more arrived; `last`: the body is complete. */
  progress(request: ArrivingBody, bytes: number, last: boolean): void {
    if (last) {
      this.arriving.delete(request);
      return;
    }
    request.bodyWindowBytes += bytes;
  }

  /** Drops the bodies whose window ended short of BODY_WINDOW_BYTES; starts a new window for the others. */
  sweep(): void {
    const now = this.now();
    for (const request of this.arriving) {
      if (request.done) {
        this.arriving.delete(request);
      } else if (now - request.bodyWindowStart >= BODY_WINDOW_MS) {
        if (request.bodyWindowBytes < BODY_WINDOW_BYTES) {
          this.arriving.delete(request);
          request.drop();
          this.onDrop();
        } else {
          request.bodyWindowStart = now;
          request.bodyWindowBytes = 0;
        }
      }
    }
    if (this.arriving.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  get size(): number {
    return this.arriving.size;
  }
}

/** This thread's bodies (each front-end thread has its own uWS app and its own sweep). */
export const bodyDeadlines = new BodyDeadlines();
