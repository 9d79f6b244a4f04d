import type { MessagePort } from 'node:worker_threads';
import type { Config } from '../../shared/config/index.js';
import type { Refusal } from '../service/refusals.js';
import type { WireError } from './rpc.js';

/** What a front-end thread is started with (workerData). */
export interface FrontEndData {
  /** The module the bootstrap imports (front-end-thread.js, or front-end-thread.ts under tsx/vitest). */
  entry: string;
  /** URL of tsx's ESM register API, when the entry is TypeScript; null for the compiled build. */
  tsx: string | null;
  /** 1..GATEWAY_THREADS-1 (the main thread is front end 0). */
  index: number;
  config: Config;
  /** The port every front end listens on (SO_REUSEPORT). */
  port: number;
  /** The plain listener beside TLS (HTTP_PORT), shared the same way; null: none. */
  httpPort: number | null;
  /** Calls into the shared state (rpc.ts). */
  rpc: MessagePort;
  /** The test clock's cell (clock.ts); null: Date.now. */
  clock: BigInt64Array | null;
  /** BroadcastChannel name of this gateway's provider-cache invalidations. */
  invalidation: string;
  /** Scale-out, GATEWAY_THREAD_CLIENTS=own: the thread opens its own Redis and Kafka clients. */
  ownClients: boolean;
}

/** Main thread → front end. */
export type ToFrontEnd =
  | { type: 'metrics'; id: number }
  | { type: 'health'; id: number }
  /** The thread's latest refusals (of one SystemUser, of none: null, or of all: undefined). */
  | { type: 'refusals'; id: number; systemUser: string | null | undefined; limit: number }
  /** Read TLS_CERT_FILE / TLS_KEY_FILE again (SIGHUP). */
  | { type: 'reload-tls'; id: number }
  | { type: 'close'; graceMs: number };

/** Front end → main thread. */
export type FromFrontEnd =
  /** Listening; `native` is the uWS binary the thread loaded (null: the slow JS fallback). */
  | { type: 'ready'; native: string | null }
  | { type: 'log'; line: string }
  | { type: 'metrics'; id: number; json: object[] }
  /** Whether the thread's own backends answer (GATEWAY_THREAD_CLIENTS=own; otherwise always true). */
  | { type: 'health'; id: number; ok: boolean }
  | { type: 'refusals'; id: number; refusals: Refusal[] }
  /** The certificate was reloaded (error: null) or not (the old one is still served). */
  | { type: 'reloaded'; id: number; error: string | null }
  /** Uncaught: the thread stopped serving (the process shuts down, see pool.ts). */
  | { type: 'fatal'; error: WireError };

/** The thread's first code (bootstrap.cjs): registers tsx when the entry is TypeScript, then imports it. */
export const BOOTSTRAP = new URL('./bootstrap.cjs', import.meta.url);
