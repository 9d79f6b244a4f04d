import { Worker } from 'node:worker_threads';

/**
 * Runs the event log's group commits on a dedicated thread with its own SQLite connection, so
 * the fsync that `synchronous=FULL` pays per commit never blocks the event loop: the main thread
 * keeps parsing requests and filling the next group meanwhile (classic group commit).
 */
export type EventRowValue = string | number | bigint | null;
/** [systemUser, dominio, epochMs, subMsTicks] */
export type LastReportRow = [string, string, number, number];

export interface GroupWriter {
  /** Inserts the rows and moves the last reports forward in one transaction; rejects if it failed. */
  write(rows: readonly (readonly EventRowValue[])[], reports: readonly LastReportRow[]): Promise<void>;
  /** Commits the readiness probe row on the connection that commits events; rejects if it cannot. */
  probe(now: number, padBytes: number): Promise<void>;
  close(): Promise<void>;
}

/** The thread's code: a file of its own, plain CommonJS (see there why). */
const WRITER_MAIN = new URL('./writer-thread-main.cjs', import.meta.url);

interface Reply {
  seq: number;
  ok: boolean;
  error?: string;
}

export interface WriterThreadOptions {
  file: string;
  synchronous: 'FULL' | 'NORMAL';
  insertSql: string;
  upsertSql: string;
  probeSql: string;
}

export class WriterThread implements GroupWriter {
  private worker: Worker | null = null;
  private seq = 0;
  private readonly pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();

  constructor(private readonly options: WriterThreadOptions) {}

  write(rows: readonly (readonly EventRowValue[])[], reports: readonly LastReportRow[]): Promise<void> {
    return this.send({ type: 'write', rows, reports });
  }

  probe(now: number, padBytes: number): Promise<void> {
    return this.send({ type: 'probe', now, padBytes });
  }

  private send(message: Record<string, unknown>): Promise<void> {
    const worker = this.worker ?? this.start();
    const seq = ++this.seq;
    return new Promise<void>((resolve, reject) => {
      this.pending.set(seq, { resolve, reject });
      worker.postMessage({ ...message, seq });
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    if (worker === null) return;
    this.worker = null;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'close' });
    await exited;
  }

  /** The durability the thread commits with (for tests and diagnostics). */
  get synchronous(): 'FULL' | 'NORMAL' {
    return this.options.synchronous;
  }

  private start(): Worker {
    const worker = new Worker(WRITER_MAIN, { workerData: this.options });
    worker.on('message', (reply: Reply) => {
      const waiter = this.pending.get(reply.seq);
      if (waiter === undefined) return;
      this.pending.delete(reply.seq);
      if (reply.ok) waiter.resolve();
      else waiter.reject(new Error(reply.error ?? 'commit failed'));
    });
    // A crashed thread fails what it held; the next write starts a new one.
    const fail = (err: Error): void => {
      if (this.worker === worker) this.worker = null;
      for (const waiter of this.pending.values()) waiter.reject(err);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (this.pending.size > 0) fail(new Error(`event writer thread exited (${code})`));
      if (this.worker === worker) this.worker = null;
    });
    this.worker = worker;
    return worker;
  }
}
