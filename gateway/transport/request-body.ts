import { bodyDeadlines } from './body-deadline.js';
import type { Exchange } from './exchange.js';

/** Receives a request body as it streams in. `fail` gets anything `chunk` or `end` threw. */
export interface BodySink {
  chunk(data: Uint8Array, last: boolean): void;
  end(): void;
  tooLarge(): void;
  fail(err: unknown): void;
}

/**
 * Streams the request body into `sink`, enforcing `limit` while streaming (a declared
 * Content-Length over the limit is refused before any byte is read) and the pace it must arrive
 * at (body-deadline.ts). Never throws into uWS:
 * an exception escaping a native callback would take the process down.
 */
export function readBody(ex: Exchange, limit: number, sink: BodySink): void {
  const declared = Number(ex.header('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    sink.tooLarge();
    return;
  }
  let received = 0;
  let stopped = false;
  bodyDeadlines.start(ex);
  ex.res.onData((ab, isLast) => {
    if (stopped || ex.done) return;
    received += ab.byteLength;
    bodyDeadlines.progress(ex, ab.byteLength, isLast);
    if (received > limit) {
      stopped = true;
      sink.tooLarge();
      return;
    }
    try {
      sink.chunk(new Uint8Array(ab), isLast);
      if (isLast) sink.end();
    } catch (err) {
      stopped = true;
      sink.fail(err);
    }
  });
}
