import { bufferSink, writeText, type BinarySink, type RecordEncoder } from '../../events/binary.js';
import type { EventRecord } from '../../events/schema.js';

/**
 * The hand-off from the event log to its writer thread: a ring of messages in a SharedArrayBuffer.
 * The main thread encodes each group's events once, straight into the ring (the binary record of
 * shared/events/binary.ts), and wakes the thread with Atomics.notify; the thread decodes and binds
 * (writer-thread-main.cjs). Nothing per event is structured-cloned, and the main thread never waits
 * on a lock: when the ring is full a message waits in a queue (Atomics.waitAsync on the thread's
 * consumed count), and a message larger than the whole ring travels as a transferred buffer.
 *
 * Only the main thread writes messages and the thread reads them, in order. Messages start at
 * multiples of 8 and never wrap: one that does not fit before the end is preceded by a `wrap`
 * marker filling the rest, and starts again at 0. Space is counted in `used` (the main thread adds
 * a message's size before publishing it; the thread subtracts it once it is done with it).
 *
 * A message: u32 size (whole message, multiple of 8), u32 type, u32 seq, u32 count, then its body:
 *   write:    f64 storedAt, `count` records, u32 reports, reports × (text, text, f64 ms, u16 ticks)
 *   probe:    f64 now, u32 padBytes
 *   external: none; the body of a write message arrives on the control port (transferred)
 *   wrap, close: none
 */
export const MESSAGE = { write: 1, probe: 2, wrap: 3, external: 4, close: 5 } as const;
/** Indexes of the control words (Int32) at the start of the shared buffer. */
export const CONTROL = { published: 0, consumed: 1, used: 2, sleeping: 3 } as const;
export const CONTROL_BYTES = 64;
export const HEADER_BYTES = 16;

/** [systemUser, dominio, epochMs, subMsTicks] */
export type LastReportRow = [string, string, number, number];

/** One commit group as the event log hands it over. */
export interface GroupToWrite {
  ids: readonly bigint[];
  events: readonly EventRecord[];
  storedAt: number;
  reports: readonly LastReportRow[];
}

/** What the thread needs to read the ring (part of its workerData). */
export interface RingShape {
  buffer: SharedArrayBuffer;
  capacity: number;
}

export type Placed = 'placed' | 'full' | 'too-big';

const align8 = (n: number): number => (n + 7) & ~7;

/** Writes the body of a message at sink.pos; false when it does not fit before sink.limit. */
type Body = (sink: BinarySink) => boolean;

export class WriterRing {
  readonly shape: RingShape;
  private readonly control: Int32Array;
  private readonly sink: BinarySink;
  private writePos = 0;
  /** Wrap markers placed (diagnostics, tests). */
  wraps = 0;

  constructor(
    capacity: number,
    private readonly encode: RecordEncoder,
  ) {
    const bytes = Math.max(64, align8(capacity));
    const buffer = new SharedArrayBuffer(CONTROL_BYTES + bytes);
    this.shape = { buffer, capacity: bytes };
    this.control = new Int32Array(buffer, 0, CONTROL_BYTES / 4);
    const buf = Buffer.from(buffer, CONTROL_BYTES, bytes);
    this.sink = { buf, view: new DataView(buffer, CONTROL_BYTES, bytes), pos: 0, limit: 0 };
  }

  /** Messages the thread has finished with (it notifies this word after each). */
  get consumed(): number {
    return Atomics.load(this.control, CONTROL.consumed);
  }

  /** Resolves once the consumed count moves from `seen` (at once if it already has). */
  consumedSince(seen: number): Promise<unknown> {
    const waited = waitAsync(this.control, CONTROL.consumed, seen);
    return waited.async ? waited.value : Promise.resolve();
  }

  /** Wakes every waitAsync on the consumed count (the thread is gone: nothing will be consumed). */
  abandon(): void {
    Atomics.notify(this.control, CONTROL.consumed);
  }

  placeWrite(seq: number, group: GroupToWrite): Placed {
    return this.place(MESSAGE.write, seq, group.ids.length, writeBody(this.encode, group));
  }

  placeProbe(seq: number, now: number, padBytes: number): Placed {
    return this.place(MESSAGE.probe, seq, 0, (sink) => {
      if (sink.pos + 12 > sink.limit) return false;
      sink.view.setFloat64(sink.pos, now, true);
      sink.view.setUint32(sink.pos + 8, padBytes, true);
      sink.pos += 12;
      return true;
    });
  }

  /** A message without a body (close, external). */
  placeMarker(type: number, seq: number): Placed {
    return this.place(type, seq, 0, () => true);
  }

  private place(type: number, seq: number, count: number, body: Body): Placed {
    const { capacity } = this.shape;
    for (;;) {
      const free = capacity - Atomics.load(this.control, CONTROL.used);
      const contiguous = capacity - this.writePos;
      const room = Math.min(free, contiguous);
      const start = this.writePos;
      this.sink.pos = start + HEADER_BYTES;
      this.sink.limit = start + room;
      if (room >= HEADER_BYTES && body(this.sink)) {
        this.publish(start, align8(this.sink.pos - start), type, seq, count);
        return 'placed';
      }
      if (room === capacity) return 'too-big';
      if (free <= contiguous) return 'full';
      // More room after the end: fill the rest with a wrap marker and try again from 0.
      this.publish(start, contiguous, MESSAGE.wrap, 0, 0);
      this.wraps++;
    }
  }

  private publish(start: number, size: number, type: number, seq: number, count: number): void {
    const view = this.sink.view;
    view.setUint32(start, size, true);
    view.setUint32(start + 4, type, true);
    if (type !== MESSAGE.wrap) {
      // A wrap marker may be as short as 8 bytes: it has no seq or count.
      view.setUint32(start + 8, seq, true);
      view.setUint32(start + 12, count, true);
    }
    Atomics.add(this.control, CONTROL.used, size);
    this.writePos = start + size === this.shape.capacity ? 0 : start + size;
    Atomics.add(this.control, CONTROL.published, 1);
    // Wake the thread only when it sleeps: a busy thread reads every published message before it
    // sleeps again, and a notify is a futex call through V8's waiter list (it was a fifth of the
    // main thread's time at 30k inserts/s: bench/profile.ts). Safe in this order: the count is
    // raised before `sleeping` is read, and the thread sets `sleeping` before Atomics.wait, which
    // returns at once when the count moved.
    if (Atomics.load(this.control, CONTROL.sleeping) !== 0) Atomics.notify(this.control, CONTROL.published);
  }
}

/** A write message's whole bytes (header included) in a buffer of its own, to be transferred. */
export function externalWrite(encode: RecordEncoder, seq: number, group: GroupToWrite): ArrayBuffer {
  const body = writeBody(encode, group);
  for (let size = 64 * 1024; ; size *= 2) {
    const sink = bufferSink(size);
    sink.pos = HEADER_BYTES;
    if (!body(sink)) continue;
    sink.view.setUint32(0, align8(sink.pos), true);
    sink.view.setUint32(4, MESSAGE.write, true);
    sink.view.setUint32(8, seq, true);
    sink.view.setUint32(12, group.ids.length, true);
    return sink.buf.buffer as ArrayBuffer;
  }
}

function writeBody(encode: RecordEncoder, group: GroupToWrite): Body {
  return (sink) => {
    if (sink.pos + 8 > sink.limit) return false;
    sink.view.setFloat64(sink.pos, group.storedAt, true);
    sink.pos += 8;
    const { ids, events } = group;
    for (let i = 0; i < ids.length; i++) {
      const end = encode(sink, ids[i]!, events[i]!);
      if (end < 0) return false;
      sink.pos = end;
    }
    const { buf, view, limit } = sink;
    let p = sink.pos;
    if (p + 4 > limit) return false;
    view.setUint32(p, group.reports.length, true);
    p += 4;
    for (const [systemUser, dominio, ms, ticks] of group.reports) {
      if (p + 18 + 3 * (systemUser.length + dominio.length) > limit) return false;
      p = writeText(buf, view, p, systemUser);
      p = writeText(buf, view, p, dominio);
      view.setFloat64(p, ms, true);
      view.setUint16(p + 8, ticks, true);
      p += 10;
    }
    sink.pos = p;
    return true;
  };
}

type WaitAsync = (array: Int32Array, index: number, value: number) => { async: false; value: string } | { async: true; value: Promise<string> };
/** Atomics.waitAsync (Node 16+; not yet in TypeScript's ES2023 lib). */
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;
