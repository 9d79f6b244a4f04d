import type { HeapInfo } from 'node:v8';
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { EVENT_BINARY } from '../../events/binary.js';
import { startWorkerWithYoungGeneration } from '../../runtime/thread-heap.js';
import { withTimeout } from '../../util/async.js';
import { IntMap } from '../../util/int-map.js';
import { CONTROL, CONTROL_BYTES, externalWrite, HEADER_BYTES, MESSAGE, WriterRing, type GroupToWrite, type Placed, type RingShape } from './writer-ring.js';

export type { GroupToWrite, LastReportRow } from './writer-ring.js';

/**
 * Runs the event log's group commits on a dedicated thread with its own SQLite connection, so
 * the fsync that `synchronous=FULL` pays per commit never blocks the event loop: the main thread
 * keeps parsing requests and filling the next group meanwhile (classic group commit). Groups reach
 * the thread through a shared ring of binary records (writer-ring.ts); only the small completion
 * reply is a message.
 */
export type EventRowValue = string | number | bigint | null;

export interface GroupWriter {
  /** Inserts the group's events and moves the last reports forward in one transaction; rejects if it failed. */
  write(group: GroupToWrite): Promise<void>;
  /** Commits the readiness probe row on the connection that commits events; rejects if it cannot. */
  probe(now: number, padBytes: number): Promise<void>;
  /** Gets ready to write before the first write comes (the writer thread starts). */
  open(): void;
  close(): Promise<void>;
}

/** The thread's code: a file of its own, plain CommonJS (see there why). */
const WRITER_MAIN = new URL('./writer-thread-main.cjs', import.meta.url);

/**
 * Rows per INSERT statement on the writer thread. One statement step per 16 rows instead of per row
 * lowered a ×100 batch's server CPU (bench/ab.ts; bench/LOG.md, 2026-11-26); chunks of 10, 25 and
 * 50 rows measured alike in isolation.
 */
export const INSERT_CHUNK_ROWS = 16;

/**
 * The thread's young generation, MB (V8's: both semi-spaces and the large-object space). It
 * allocates a few hundred bytes per event, dead once bound; the process's 64 MB semi-spaces would
 * hold 128 MB more resident for it. 8 MB against the process's flags, `bench/ab.ts`, 50
 * connections: RSS 0.766x, CPU per request 0.994x, req/s 0.997x (bench/LOG.md, 2026-11-29).
 */
const WRITER_YOUNG_GENERATION_MB = 8;

/** How long /metrics waits for the thread's heap statistics (see `heap`). */
const HEAP_ANSWER_MS = 200;

/** The last message number before they start again at 1. */
const MAX_SEQ = 2 ** 31 - 2;

/** Room for several groups of a thousand typical events (~300 bytes each); pages are touched only as used. */
const DEFAULT_RING_BYTES = 4 * 1024 * 1024;

/** The thread's answer: the messages one commit made durable, or one message that failed. */
type Reply = { seqs: number[]; ok: true } | { seq: number; ok: false; error: string };

interface WriterThreadOptions {
  file: string;
  synchronous: 'FULL' | 'NORMAL';
  /** The INSERT of n rows at index n − 1, for n = 1 … its length: a group is bound in chunks of the longest. */
  insertRowsSql: readonly string[];
  upsertSql: string;
  probeSql: string;
  /** Size of the shared ring (default DEFAULT_RING_BYTES); a group larger than it is transferred instead. */
  ringBytes?: number;
}

/** What the thread receives (workerData). */
export interface WriterThreadData extends WriterThreadOptions {
  ring: RingShape;
  /** Source of the record reader (binary.ts readerSource), compiled by the thread. */
  readerSource: string;
  layout: { message: typeof MESSAGE; control: typeof CONTROL; controlBytes: number; headerBytes: number };
  /** Where external message bodies arrive. */
  bodies: MessagePort;
}

/** A message waiting for ring space, in order. */
interface Outgoing {
  seq: number;
  place: (ring: WriterRing) => Placed;
  /** A write larger than the whole ring: its message as a buffer of its own. */
  external?: () => ArrayBuffer;
}

/** One running thread and its ring; a crash replaces both. */
interface Running {
  worker: Worker;
  ring: WriterRing;
  bodies: MessagePort;
  backlog: Outgoing[];
  /** A waitAsync for ring space is armed; it pumps the backlog when it resolves. */
  waiting: boolean;
  /** Exited or crashed: nothing more is placed. */
  dead: boolean;
  /** Sent (queued or in the ring) and not yet answered, by seq (an IntMap, not a Map: see there why). */
  pending: IntMap<{ resolve: () => void; reject: (err: Error) => void }>;
}

/** How groups went over (since the WriterThread was made, across thread restarts). */
interface HandoffStats {
  /** Times the ring was full and a message waited for the thread to free space. */
  waitsForSpace: number;
  /** Groups larger than the whole ring, transferred as a buffer of their own. */
  transferred: number;
  /** Wrap markers placed in the ring. */
  wraps: number;
  /** Transactions the thread committed (the messages waiting when one starts share it). */
  commits: number;
}

export class WriterThread implements GroupWriter {
  private running: Running | null = null;
  /** A heap question the thread has not answered yet: asked once, however many scrapes wait for it. */
  private heapAsked: Promise<HeapInfo> | null = null;
  private seq = 0;
  private readonly counts = { waitsForSpace: 0, transferred: 0, wrapsBefore: 0, commits: 0 };

  constructor(private readonly options: WriterThreadOptions) {}

  /**
   * The thread's V8 heap, bytes (allocated and used), or null while none runs. V8 answers between
   * two pieces of the thread's JavaScript, so a thread held in a system call (an fsync on a stalled
   * disk) answers late: /metrics waits HEAP_ANSWER_MS at most and leaves the series out.
   */
  async heap(): Promise<{ total: number; used: number } | null> {
    const running = this.running;
    if (running === null || running.dead) return null;
    this.heapAsked ??= running.worker.getHeapStatistics().finally(() => (this.heapAsked = null));
    try {
      const stats = await withTimeout(this.heapAsked, HEAP_ANSWER_MS, 'the writer thread\'s heap statistics');
      return { total: stats.total_heap_size, used: stats.used_heap_size };
    } catch {
      return null;
    }
  }

  /** Starts the thread now rather than at the first write (a process launched warm: warm-start.cjs). */
  open(): void {
    if (this.running === null) this.start();
  }

  write(group: GroupToWrite): Promise<void> {
    return this.send(
      (ring, seq) => ring.placeWrite(seq, group),
      (seq) => externalWrite(EVENT_BINARY.encode, seq, group),
    );
  }

  probe(now: number, padBytes: number): Promise<void> {
    return this.send((ring, seq) => ring.placeProbe(seq, now, padBytes));
  }

  async close(): Promise<void> {
    const running = this.running;
    if (running === null) return;
    const exited = new Promise<void>((resolve) => running.worker.once('exit', () => resolve()));
    // Queued behind every write already sent: the thread drains them, then exits.
    const seq = this.nextSeq();
    running.backlog.push({ seq, place: (ring) => ring.placeMarker(MESSAGE.close, seq) });
    this.pump(running);
    this.running = null;
    await exited;
  }

  /** Stops the thread at once, as a crash would (tests): what it held fails, the next write starts a new one. */
  async kill(): Promise<void> {
    await this.running?.worker.terminate();
  }

  /** The durability the thread commits with (for tests and diagnostics). */
  get synchronous(): 'FULL' | 'NORMAL' {
    return this.options.synchronous;
  }

  get handoff(): HandoffStats {
    const { waitsForSpace, transferred, wrapsBefore, commits } = this.counts;
    return { waitsForSpace, transferred, wraps: wrapsBefore + (this.running?.ring.wraps ?? 0), commits };
  }

  /**
   * Message numbers identify a reply, nothing else: they wrap within what both the ring's u32 and
   * IntMap's keys hold (a count that never wrapped stopped matching its replies after 2^32
   * messages, some 50 days at a thousand commits a second).
   */
  private nextSeq(): number {
    this.seq = this.seq >= MAX_SEQ ? 1 : this.seq + 1;
    return this.seq;
  }

  private send(place: (ring: WriterRing, seq: number) => Placed, external?: (seq: number) => ArrayBuffer): Promise<void> {
    const running = this.running ?? this.start();
    const seq = this.nextSeq();
    return new Promise<void>((resolve, reject) => {
      running.pending.set(seq, { resolve, reject });
      running.backlog.push({ seq, place: (ring) => place(ring, seq), external: external && (() => external(seq)) });
      this.pump(running);
    });
  }

  /** Places queued messages in order until the ring is full; then waits (asynchronously) for the thread to free space. */
  private pump(running: Running): void {
    while (!running.waiting && !running.dead && running.backlog.length > 0) {
      const next = running.backlog[0]!;
      const seen = running.ring.consumed;
      const placed = next.place(running.ring);
      if (placed === 'full') {
        this.counts.waitsForSpace++;
        running.waiting = true;
        void running.ring.consumedSince(seen).then(() => {
          running.waiting = false;
          this.pump(running);
        });
        return;
      }
      running.backlog.shift();
      if (placed === 'too-big') this.sendExternal(running, next);
    }
  }

  /** A write the whole ring cannot hold: its bytes first on the bodies port, then a marker in the ring where its turn is. */
  private sendExternal(running: Running, message: Outgoing): void {
    if (message.external === undefined) {
      this.settle(running, { seq: message.seq, ok: false, error: 'message larger than the writer ring' });
      return;
    }
    const body = message.external();
    this.counts.transferred++;
    running.bodies.postMessage(body, [body]);
    // The ring was empty a moment ago and only this thread adds to it: the marker fits.
    running.ring.placeMarker(MESSAGE.external, message.seq);
  }

  private settle(running: Running, reply: Reply): void {
    if (reply.ok) {
      this.counts.commits++;
      for (const seq of reply.seqs) this.take(running, seq)?.resolve();
    } else this.take(running, reply.seq)?.reject(new Error(reply.error));
  }

  private take(running: Running, seq: number): { resolve(): void; reject(err: Error): void } | undefined {
    const waiter = running.pending.get(seq);
    if (waiter !== undefined) running.pending.delete(seq);
    return waiter;
  }

  private start(): Running {
    const ring = new WriterRing(this.options.ringBytes ?? DEFAULT_RING_BYTES, EVENT_BINARY.encode);
    const { port1: bodies, port2: threadBodies } = new MessageChannel();
    const data: WriterThreadData = {
      ...this.options,
      ring: ring.shape,
      readerSource: EVENT_BINARY.readerSource,
      layout: { message: MESSAGE, control: CONTROL, controlBytes: CONTROL_BYTES, headerBytes: HEADER_BYTES },
      bodies: threadBodies,
    };
    const worker = startWorkerWithYoungGeneration(WRITER_MAIN, { workerData: data, transferList: [threadBodies] }, WRITER_YOUNG_GENERATION_MB);
    const running: Running = { worker, ring, bodies, backlog: [], waiting: false, dead: false, pending: new IntMap() };
    worker.on('message', (reply: Reply) => this.settle(running, reply));
    // A crashed thread fails what it held, queued or in the ring; the next write starts a new one.
    const fail = (err: Error): void => {
      if (running.dead) return;
      running.dead = true;
      this.counts.wrapsBefore += ring.wraps;
      if (this.running === running) this.running = null;
      running.backlog.length = 0;
      running.pending.forEach((waiter) => waiter.reject(err));
      running.pending.clear();
      ring.abandon();
      bodies.close();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`event writer thread exited (${code})`)));
    this.running = running;
    return running;
  }
}
