import fs from 'node:fs';
import type { Config } from '../../config/index.js';
import type { Logger } from '../../runtime/logger.js';
import type { Metrics } from '../../runtime/metrics.js';
import { ArrivalCounter, LocalEventFeed } from './live-feed.js';
import type { Backends } from '../types.js';
import { createCommandStore } from './commands.js';
import { lockDataDir } from './data-dir-lock.js';
import { openDatabase, type SqliteDatabase } from './database.js';
import { SqliteEventLog, type EventLogStats } from './event-log.js';
import { createEventStore } from './event-store.js';
import { MemoryLockoutStore } from './lockouts.js';
import { createEmbeddedOperatorStores } from './operator-tokens.js';
import { createProviderStore } from './providers.js';
import { MemorySessionStore } from './sessions.js';
import { StoreAccess } from './store-access.js';
import { createTripStore } from './trips.js';

export { DATABASE_FILE, MIGRATIONS, SCHEMA_VERSION } from './database.js';
export { SqliteEventLog, type EventLogStats } from './event-log.js';

export interface EmbeddedOptions {
  dataDir: string;
  sqliteSynchronous: 'FULL' | 'NORMAL';
  dedupeWindowMs: number;
  /** Clock for stored_at, the dedupe window at open and the sweeps; defaults to Date.now. */
  now?: () => number;
  /** Cap of events per group commit (default 1000). */
  maxGroupEvents?: number;
  /** Commit event groups on a writer thread (default) or inline on the main connection. */
  offThreadCommits?: boolean;
  /** Dedupe keys held in memory at most (default 1,000,000). */
  maxDedupeKeys?: number;
  /** Live sessions held at most, least recently used dropped first (default 1,000,000). */
  maxSessions?: number;
  /** How often expired sessions and stale lockout entries are dropped (default one minute). */
  sweepIntervalMs?: number;
  /** Free bytes below which the store reports itself not ready (default 64 MiB; 0 disables). */
  minFreeBytes?: number;
  /** SystemUser+address pairs the lockout store tracks at most. */
  lockoutTrackedMax?: number;
  /** Told about each failed event commit; those events were answered 'unavailable'. */
  onCommitError?: (error: unknown, events: number) => void;
  /** Every event id issued is greater than this (ID_FLOOR). Default 0. */
  idFloor?: bigint;
  /** Told the size of each committed group (gateway_event_publish_batch_size). */
  onGroupCommitted?: (events: number) => void;
}

/** The embedded store's options from a configuration (what `npm start` opens). */
export function embeddedOptionsFromConfig(
  config: Pick<Config, 'embedded' | 'events' | 'sessions' | 'logins' | 'ids'>,
  deps: { logger: Logger; metrics: Metrics; now: () => number },
): EmbeddedOptions {
  return {
    dataDir: config.embedded.dataDir,
    sqliteSynchronous: config.embedded.sqliteSynchronous,
    dedupeWindowMs: config.events.dedupeWindowMs,
    maxDedupeKeys: config.events.dedupeMaxKeys,
    offThreadCommits: config.embedded.sqliteCommit === 'thread',
    maxSessions: config.sessions.max,
    minFreeBytes: config.embedded.minFreeBytes,
    lockoutTrackedMax: config.logins.lockoutTrackedMax,
    idFloor: config.ids.floor,
    now: deps.now,
    onCommitError: (err, events) => deps.logger.error({ err, events }, 'event commit failed; those events were answered -5'),
    onGroupCommitted: (events) => deps.metrics.publishBatchSize.observe(events),
  };
}

/** Backends plus what only the embedded mode has: event-log counters. */
export interface EmbeddedBackends extends Backends {
  eventLog: SqliteEventLog;
  /** Commit and dedupe counters of the event log (metrics, benchmarks, tests). */
  eventLogStats(): EventLogStats;
}

const DEFAULT_SWEEP_INTERVAL_MS = 60_000;
const DEFAULT_MIN_FREE_BYTES = 64 * 1024 * 1024;

async function freeBytes(dir: string): Promise<number> {
  try {
    const s = await fs.promises.statfs(dir);
    return s.bavail * s.bsize;
  } catch {
    return 0;
  }
}

/**
 * Single-process deployment: everything durable in DATA_DIR/gateway.sqlite, sessions and lockouts in
 * memory (as ASMX InProc state was). One process per data directory, held by a lock
 * (data-dir-lock.ts) until `close`.
 */
export async function openEmbeddedBackends(options: EmbeddedOptions): Promise<EmbeddedBackends> {
  const now = options.now ?? Date.now;
  const lock = lockDataDir(options.dataDir);
  let db: SqliteDatabase;
  try {
    db = openDatabase(options.dataDir, options.sqliteSynchronous);
  } catch (err) {
    lock.release();
    throw err;
  }
  if (options.offThreadCommits !== false) {
    // Events commit on the writer thread's own connection with the configured durability. This
    // connection carries state changes (command deliveries on every poll, status, providers,
    // trips): NORMAL keeps them across any process crash or restart without an fsync on the event
    // loop per poll, and the writer thread's next FULL commit syncs the shared WAL they are in.
    db.pragma('synchronous = NORMAL');
  }

  const access = new StoreAccess();
  const feed = new LocalEventFeed();
  const arrivals = new ArrivalCounter();
  let eventLog: SqliteEventLog;
  try {
    eventLog = new SqliteEventLog(db, {
      access,
      dedupeWindowMs: options.dedupeWindowMs,
      now,
      ...(options.maxGroupEvents === undefined ? {} : { maxGroupEvents: options.maxGroupEvents }),
      ...(options.maxDedupeKeys === undefined ? {} : { maxDedupeKeys: options.maxDedupeKeys }),
      ...(options.offThreadCommits === undefined ? {} : { offThread: options.offThreadCommits }),
      synchronous: options.sqliteSynchronous,
      ...(options.idFloor === undefined ? {} : { idFloor: options.idFloor }),
      onCommitted: (events, ids, storedAt) => {
        options.onGroupCommitted?.(events.length);
        arrivals.record(events);
        feed.publish(events, ids, storedAt);
      },
      // Never silent by default: those events were refused with 'unavailable'.
      onCommitError:
        options.onCommitError ??
        ((error, events) => console.error(`Event commit of ${events} events failed:`, error)),
    });
  } catch (err) {
    db.close();
    lock.release();
    throw err;
  }

  const sessions = new MemorySessionStore(options.maxSessions);
  const lockouts = new MemoryLockoutStore(options.lockoutTrackedMax);
  const sweeper = setInterval(() => {
    const t = now();
    sessions.sweep(t);
    lockouts.sweep(t);
  }, options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS);
  // The sweep must never be what keeps the process alive.
  sweeper.unref();

  let closing: Promise<void> | null = null;

  return {
    providers: createProviderStore(db, access),
    lockouts,
    sessions,
    commands: createCommandStore(db, access),
    trips: createTripStore(db, access),
    eventLog,
    events: createEventStore(db, access, arrivals),
    feed,
    poison: null,
    operators: createEmbeddedOperatorStores(db, access),
    eventLogStats: () => eventLog.stats,
    // Ready only while the store can write: enough free disk (a write that still fits in the WAL
    // succeeds on a full disk, so a probe alone would say ready until the WAL runs out), and a
    // probe commit on the events' own connection (read-only or failing storage).
    async healthy() {
      if (closing !== null || !db.open) return false;
      if ((await freeBytes(options.dataDir)) < (options.minFreeBytes ?? DEFAULT_MIN_FREE_BYTES)) return false;
      return eventLog.writable();
    },
    async status() {
      const minFree = options.minFreeBytes ?? DEFAULT_MIN_FREE_BYTES;
      const problem =
        closing !== null || !db.open
          ? 'the store is closed'
          : (await freeBytes(options.dataDir)) < minFree
            ? `less than ${Math.round(minFree / 1048576)} MB of free disk in DATA_DIR`
            : eventLog.failing
              ? 'the latest commit failed; the store cannot write'
              : null;
      return { checks: [{ name: 'sqlite', ok: problem === null, ...(problem === null ? {} : { detail: problem }) }], workerLag: null };
    },
    close() {
      closing ??= (async () => {
        clearInterval(sweeper);
        await eventLog.close();
        db.close();
        lock.release();
      })();
      return closing;
    },
  };
}
