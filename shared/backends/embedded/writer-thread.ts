import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * Runs the event log's group commits on a dedicated thread with its own SQLite connection, so
 * the fsync that `synchronous=FULL` pays per commit never blocks the event loop: the main thread
 * keeps parsing requests and filling the next group meanwhile (classic group commit).
 *
 * The thread's code is a small CommonJS script started with `eval`, so it loads the same way
 * under tsx, vitest and the compiled build (a .ts worker file would need a loader in each).
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

const WRITER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = ' + workerData.synchronous);
db.pragma('busy_timeout = 5000');
const insert = db.prepare(workerData.insertSql);
const upsert = db.prepare(workerData.upsertSql);
const probe = db.prepare(workerData.probeSql);
const write = db.transaction((rows, reports) => {
  for (const row of rows) insert.run(...row);
  for (const report of reports) upsert.run(...report);
});
parentPort.on('message', (message) => {
  if (message.type === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    if (message.type === 'probe') probe.run(message.now, message.padBytes);
    else write(message.rows, message.reports);
    parentPort.postMessage({ seq: message.seq, ok: true });
  } catch (error) {
    parentPort.postMessage({ seq: message.seq, ok: false, error: error && error.message ? error.message : String(error) });
  }
});
`;

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
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WRITER_SOURCE, { eval: true, workerData: { ...this.options, driver } });
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
