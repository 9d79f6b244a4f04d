import type { PoisonStore } from '../shared/backends/types.js';
import type { LastReportSink } from '../shared/backends/scale-out-types.js';
import type { BackoffOptions } from './backoff.js';
import type { WorkerLogger } from './log.js';

/* What the Loader (loader.ts) is given and what it reports, apart from its logic. */

/** Where poison messages are set aside (RedisPoisonStore). */
export type PoisonSink = Pick<PoisonStore, 'add'>;

export interface LoaderOptions {
  topic: string;
  batchRows: number;
  batchMs: number;
  maxBuffered: number;
  backoff: BackoffOptions;
  lastReports: LastReportSink;
  poison?: PoisonSink;
  lastReportTimeoutMs: number;
  logger: WorkerLogger;
  metrics?: {
    batchSize(rows: number): void;
    insertSeconds(seconds: number): void;
    poison(): void;
  };
  /** Commits offsets on the running consumer; throws when it cannot (retried with the next batch). */
  commit(offsets: { topic: string; partition: number; offset: string }[]): Promise<void>;
}

/** The loader's share of WorkerStats. */
export interface LoaderStats {
  /** Rows inserted into ClickHouse (replays included). */
  insertedRows: number;
  /** Successful inserts. */
  batches: number;
  lastBatchSize: number;
  maxBatchSize: number;
  /** Failed insert attempts (each retried). */
  insertRetries: number;
  /** Failed `lastReports.record` attempts (each retried). */
  lastReportRetries: number;
  /** Poison messages skipped. */
  poison: number;
  /** Successful offset commits. */
  commits: number;
  commitFailures: number;
  /** Messages in memory, not yet being inserted (all partitions). */
  buffered: number;
  /** Inserts in flight now (at most one per partition). */
  inFlight: number;
  /** True while fetching is paused because the buffer is full. */
  paused: boolean;
  /** The last offset this worker committed per partition (the next offset to read). */
  committed: Record<number, string>;
}
