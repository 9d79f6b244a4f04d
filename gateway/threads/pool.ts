import { MessageChannel, Worker } from 'node:worker_threads';
import type { Config } from '../../shared/config/index.js';
import type { Logger } from '../../shared/runtime/logger.js';
import { launchFlagsInForce } from '../../shared/runtime/thread-heap.js';
import type { Refusal } from '../service/refusals.js';
import { BOOTSTRAP, type FromFrontEnd, type FrontEndData, type ToFrontEnd } from './protocol.js';
import { decodeError, serveCalls } from './rpc.js';
import { stateHandlers, type SharedState } from './shared-state.js';

/**
 * The front-end threads beside the main thread's own (GATEWAY_THREADS - 1 of them): each runs
 * front-end-thread.ts on the shared port and calls the main thread for the shared state. Their log lines
 * arrive here and are written by the main thread's logger; their metrics are collected on demand.
 *
 * A thread that fails is fatal for the gateway: `failed` resolves, and the process shuts down
 * gracefully and exits non-zero (shared/runtime/process.ts), for the supervisor to restart it. An escaped
 * exception in a front end is a bug that a restarted thread would meet again, and the shared state
 * it used lives on, so restarting the thread alone would hide it.
 */
interface FrontEndPoolOptions {
  config: Config;
  logger: Logger;
  state: SharedState;
  /** Threads to start, each listening on `port` (and `httpPort`). */
  threads: number;
  port: number;
  httpPort: number | null;
  clock: BigInt64Array | null;
  invalidation: string;
  /** The threads open their own Redis and Kafka clients (protocol.ts). */
  ownClients: boolean;
  /** The front end's module; default front-end-thread.ts beside this file (tests start others). */
  entry?: URL;
}

const LEVELS: Readonly<Record<number, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'>> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/** How long a closing thread may take beyond the requests' grace before it is terminated. */
const EXIT_SLACK_MS = 5_000;

/** A front end's answer to a question of the pool's (it carries the question's id). */
type Reply = Extract<FromFrontEnd, { id: number }>;

class FrontEndThread {
  private nextId = 1;
  /** Questions sent and not answered yet, by id; called with null when the thread ends first. */
  private readonly waiting = new Map<number, (reply: Reply | null) => void>();
  readonly exited: Promise<number>;
  private ended = false;

  constructor(
    readonly index: number,
    readonly worker: Worker,
    private readonly logger: Logger,
    onFatal: (err: Error) => void,
    onReady: (native: string | null) => void,
  ) {
    this.exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.on('message', (message: FromFrontEnd) => {
      if (message.type === 'log') this.relay(message.line);
      else if ('id' in message) {
        const answer = this.waiting.get(message.id);
        this.waiting.delete(message.id);
        answer?.(message);
      } else if (message.type === 'ready') onReady(message.native);
      else onFatal(decodeError(message.error));
    });
    worker.on('error', onFatal);
    void this.exited.then((code) => {
      this.ended = true;
      for (const answer of this.waiting.values()) answer(null);
      this.waiting.clear();
      if (code !== 0) onFatal(new Error(`front-end thread ${index} exited with code ${code}`));
    });
  }

  send(message: ToFrontEnd): void {
    this.worker.postMessage(message);
  }

  /** This thread's metrics as prom-client JSON; nothing once it has ended. */
  metrics(): Promise<object[]> {
    return this.ask((id) => ({ type: 'metrics', id }), (reply) => (reply?.type === 'metrics' ? reply.json : []), []);
  }

  /** Whether the thread serves and its own backends (if any) answer; false once it has ended. */
  healthy(): Promise<boolean> {
    return this.ask((id) => ({ type: 'health', id }), (reply) => reply?.type === 'health' && reply.ok, false);
  }

  /** Has the thread serve the certificate files as they are now; resolves with its error, or null (also when it had ended: nothing to reload). */
  reloadTls(): Promise<string | null> {
    return this.ask((id) => ({ type: 'reload-tls', id }), (reply) => (reply?.type === 'reloaded' ? reply.error : 'the thread ended'), null);
  }

  /** Sends the question `request(id)`; `read` turns its reply (null: the thread ended first) into the answer; `ifEnded` when it had ended already. */
  /** This thread's latest refusals; none once it has ended. */
  refusals(systemUser: string | null | undefined, limit: number): Promise<Refusal[]> {
    return this.ask((id) => ({ type: 'refusals', id, systemUser, limit }), (reply) => (reply?.type === 'refusals' ? reply.refusals : []), []);
  }

  private ask<T>(request: (id: number) => ToFrontEnd, read: (reply: Reply | null) => T, ifEnded: T): Promise<T> {
    if (this.ended) return Promise.resolve(ifEnded);
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, (reply) => resolve(read(reply)));
      this.send(request(id));
    });
  }

  /** Writes a front end's pino line through the main logger, keeping its fields and level. */
  private relay(line: string): void {
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      this.logger.warn({ line }, 'unreadable log line from a front-end thread');
      return;
    }
    const { level, msg, time: _time, pid: _pid, hostname: _hostname, name: _name, ...fields } = entry;
    const method = LEVELS[typeof level === 'number' ? level : 30] ?? 'info';
    this.logger[method](fields, typeof msg === 'string' ? msg : '');
  }
}

export class FrontEndPool {
  private constructor(
    private readonly threads: FrontEndThread[],
    /** Resolves with the first thread failure (never rejects). */
    readonly failed: Promise<Error>,
    /** The uWS binary each thread loaded, in thread order (null: the slow JS fallback). */
    readonly nativeBinaries: readonly (string | null)[],
  ) {}

  /** Starts the threads and resolves once each is listening; a thread that cannot start stops them all. */
  static async start(options: FrontEndPoolOptions): Promise<FrontEndPool> {
    const handlers = stateHandlers(options.state);
    const entry = options.entry ?? new URL(`./front-end-thread${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
    const tsx = entry.pathname.endsWith('.ts') ? import.meta.resolve('tsx/esm/api') : null;
    let reportFailure: (err: Error) => void = () => {};
    const failed = new Promise<Error>((resolve) => (reportFailure = resolve));
    let failure: Error | null = null;
    const onFatal = (err: Error): void => {
      if (failure !== null) return;
      failure = err;
      options.logger.fatal({ err }, 'a front-end thread failed; the gateway stops');
      reportFailure(err);
    };

    // A thread started now takes the process's young-generation flags: none may be cleared for another's start.
    await launchFlagsInForce();
    const threads: FrontEndThread[] = [];
    const ready: Promise<string | null>[] = [];
    for (let index = 1; index <= options.threads; index++) {
      const channel = new MessageChannel();
      serveCalls(channel.port1, handlers);
      const data: FrontEndData = {
        entry: entry.href,
        tsx,
        index,
        config: options.config,
        port: options.port,
        httpPort: options.httpPort,
        rpc: channel.port2,
        clock: options.clock,
        invalidation: options.invalidation,
        ownClients: options.ownClients,
      };
      const worker = new Worker(BOOTSTRAP, { workerData: data, transferList: [channel.port2] });
      let markReady: (native: string | null) => void = () => {};
      ready.push(new Promise<string | null>((resolve) => (markReady = resolve)));
      const thread = new FrontEndThread(index, worker, options.logger.child({ thread: index }), onFatal, (native) => markReady(native));
      threads.push(thread);
      // The main thread's end of the channel lives as long as the thread.
      void thread.exited.then(() => channel.port1.close());
    }
    const started = await Promise.race([Promise.all(ready), failed]);
    const pool = new FrontEndPool(threads, failed, Array.isArray(started) ? started : []);
    if (started instanceof Error) {
      await pool.close(0);
      throw started;
    }
    return pool;
  }

  get size(): number {
    return this.threads.length;
  }

  /** Every thread's latest refusals, each thread's newest first. */
  async refusals(systemUser: string | null | undefined, limit: number): Promise<Refusal[]> {
    return (await Promise.all(this.threads.map((t) => t.refusals(systemUser, limit)))).flat();
  }

  /** Each thread's metrics (prom-client JSON), for the main thread to aggregate. */
  metrics(): Promise<object[][]> {
    return Promise.all(this.threads.map((t) => t.metrics()));
  }

  /** Every thread serves and its own backends answer (readiness). */
  async healthy(): Promise<boolean> {
    return (await Promise.all(this.threads.map((t) => t.healthy()))).every(Boolean);
  }

  /** Reloads the certificate on every thread; rejects with the first thread's error. */
  async reloadTls(): Promise<void> {
    const errors = (await Promise.all(this.threads.map((t) => t.reloadTls()))).filter((e) => e !== null);
    if (errors.length > 0) throw new Error(errors[0]);
  }

  /** Stops every thread: no new connections, in-flight requests finish (up to graceMs), then they end. */
  async close(graceMs = 10_000): Promise<void> {
    await Promise.all(
      this.threads.map(async (thread) => {
        thread.send({ type: 'close', graceMs });
        const timer = setTimeout(() => void thread.worker.terminate(), graceMs + EXIT_SLACK_MS);
        await thread.exited;
        clearTimeout(timer);
      }),
    );
  }
}
