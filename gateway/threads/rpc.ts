import type { MessagePort } from 'node:worker_threads';
import { BackendUnavailableError } from '../../shared/backends/types.js';
import { IntMap } from '../../shared/util/int-map.js';

/**
 * Request/response between a front-end thread and the main thread over a MessagePort.
 *
 * Messages are batched per event-loop turn: calls made while a turn runs (every request uWS
 * handed over in it) leave in one postMessage on the next setImmediate, and so do the replies
 * that settle in one turn on the other side (a committed event group answers all its callers at
 * once). A postMessage costs a few microseconds whatever it carries, so under load the cost per
 * call falls with the batch (bench/thread-rpc.ts measures both).
 *
 * Values pass by structured clone: plain objects, arrays, strings, numbers, BigInt ids and Dates
 * survive; class instances arrive as plain objects, which is all the backend interfaces exchange.
 */

/** [call id, operation index, arguments] */
export type Call = [id: number, op: number, args: unknown[]];
/** [call id, 1, value] or [call id, 0, error] */
type Reply = [id: number, ok: 1, value: unknown] | [id: number, ok: 0, error: WireError];

/** An error as it crosses threads: BackendUnavailableError keeps its meaning ("retry later"). */
export interface WireError {
  unavailable: boolean;
  name: string;
  message: string;
}

export function encodeError(err: unknown): WireError {
  if (err instanceof Error) return { unavailable: err instanceof BackendUnavailableError, name: err.name, message: err.message };
  return { unavailable: false, name: 'Error', message: String(err) };
}

export function decodeError(wire: WireError): Error {
  if (wire.unavailable) return new BackendUnavailableError(wire.message);
  const err = new Error(wire.message);
  err.name = wire.name;
  return err;
}

/** Collects items during a turn and hands them over together on the next setImmediate. */
class TurnBatch<T> {
  private items: T[] = [];
  private scheduled = false;

  constructor(private readonly send: (items: T[]) => void) {}

  push(item: T): void {
    this.items.push(item);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }

  readonly flush = (): void => {
    this.scheduled = false;
    if (this.items.length === 0) return;
    const items = this.items;
    this.items = [];
    this.send(items);
  };
}

const MAX_CALL_ID = 2 ** 31 - 2;

/** The calling side: `call` resolves with the other side's result or rejects with its error. */
export class RpcClient {
  private nextId = 1;
  /** By call id: an IntMap, not a Map, since every call adds and removes one (shared/util/int-map.ts says why). */
  private readonly pending = new IntMap<{ resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  private readonly outbox: TurnBatch<Call>;
  private closed = false;

  constructor(private readonly port: MessagePort) {
    this.outbox = new TurnBatch((calls) => port.postMessage(calls));
    port.on('message', (replies: Reply[]) => {
      for (const reply of replies) this.settle(reply);
    });
  }

  call(op: number, args: unknown[]): Promise<unknown> {
    if (this.closed) return Promise.reject(new BackendUnavailableError('This front-end thread is shutting down.'));
    const id = this.nextId;
    // Ids wrap within IntMap's key range; the calls waiting at once are a few thousand at most.
    this.nextId = id === MAX_CALL_ID ? 1 : id + 1;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.outbox.push([id, op, args]);
    });
  }

  /** Calls still waiting for their reply. */
  get waiting(): number {
    return this.pending.size;
  }

  /** Fails what is still waiting and lets the thread exit. */
  close(): void {
    this.closed = true;
    const gone = new BackendUnavailableError('The main thread closed the backends.');
    this.pending.forEach((waiter) => waiter.reject(gone));
    this.pending.clear();
    this.port.close();
  }

  private settle(reply: Reply): void {
    const waiter = this.pending.get(reply[0]);
    if (waiter === undefined) return;
    this.pending.delete(reply[0]);
    if (reply[1] === 1) waiter.resolve(reply[2]);
    else waiter.reject(decodeError(reply[2]));
  }
}

/**
 * The serving side: runs each call on `handlers[op]` and replies, batched per turn. A handler
 * that throws (or an unknown op) answers with the error; nothing a front end sends can take the
 * main thread down.
 */
export function serveCalls(port: MessagePort, handlers: readonly ((args: unknown[]) => Promise<unknown>)[]): void {
  const outbox = new TurnBatch<Reply>((replies) => port.postMessage(replies));
  const run = async (op: number, args: unknown[]): Promise<unknown> => {
    const handler = handlers[op];
    if (handler === undefined) throw new Error(`Unknown backend operation ${op}.`);
    return handler(args);
  };
  port.on('message', (calls: Call[]) => {
    for (const [id, op, args] of calls) {
      run(op, args).then(
        (value) => outbox.push([id, 1, value]),
        (err: unknown) => outbox.push([id, 0, encodeError(err)]),
      );
    }
  });
}
