import { BackendUnavailableError } from '../types.js';

/**
 * How the embedded stores touch SQLite from the event loop.
 *
 * Two connections write to one database file: the writer thread commits event groups, the main
 * connection commits state changes (command polls, providers, trips). SQLite lets one writer in at
 * a time; a main-thread write that meets the writer thread's lock would either fail
 * (SQLITE_BUSY_SNAPSHOT for a read-then-write transaction) or block the whole event loop in
 * SQLite's busy handler. Both connections belong to this process, so the writes are serialised
 * here instead: a state change waits (asynchronously) for the event commit in flight and then runs
 * in the gap before the next one starts. Reads never wait: WAL readers see the last commit.
 *
 * SQLite errors that mean "cannot write now" (disk full, read-only or failing storage, a lock held
 * by another process past the busy timeout) become BackendUnavailableError, which the operation
 * layer answers as "retry later" and the admin API as 503: never a 500, never a dropped connection.
 */
const UNAVAILABLE = /^SQLITE_(FULL|IOERR|READONLY|BUSY|LOCKED|CANTOPEN|NOMEM|PROTOCOL|NOLFS)/;

/** The store-level meaning of a SQLite error, or the error itself when it is a bug. */
export function translateStoreError(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNAVAILABLE.test(code)) {
    return new BackendUnavailableError(`The local store cannot be written (${code}).`, { cause: err });
  }
  return err;
}

export class StoreAccess {
  /** The writer thread's commit in flight, if any. */
  private commit: Promise<unknown> | null = null;

  /** The event log announces each commit it hands to the writer thread. */
  committing(done: Promise<unknown>): void {
    this.commit = done;
    const clear = (): void => {
      if (this.commit === done) this.commit = null;
    };
    done.then(clear, clear);
  }

  /** Runs a synchronous write transaction on the main connection once no event commit holds the lock. */
  async write<T>(transaction: () => T): Promise<T> {
    while (this.commit !== null) await this.commit.catch(() => undefined);
    return this.read(transaction);
  }

  /** Runs a synchronous read (or an unconditional write) and translates storage failures. */
  read<T>(statement: () => T): T {
    try {
      return statement();
    } catch (err) {
      throw translateStoreError(err);
    }
  }
}
