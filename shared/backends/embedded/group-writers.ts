import { EVENT_ROWS } from './event-row.js';
import { STORE_PROBE_SQL, type SqliteDatabase } from './database.js';
import { UPSERT_LAST_REPORT_SQL } from './trips.js';
import { INSERT_CHUNK_ROWS, WriterThread, type GroupToWrite, type GroupWriter } from './writer-thread.js';

/** The two ways SqliteEventLog commits a group (EventLogOptions.offThread chooses). */

/**
 * Commits on the caller's own connection (blocks the event loop for the commit). Rows are built
 * from the records directly (EVENT_ROWS.toRow): the reference the writer thread's binary path is
 * compared with (test/unit/shared/backends/embedded/writer-ring.unit.test.ts).
 */
export function inlineWriter(db: SqliteDatabase): GroupWriter {
  const insert = db.prepare(EVENT_ROWS.insertSql);
  const upsert = db.prepare(UPSERT_LAST_REPORT_SQL);
  const probe = db.prepare(STORE_PROBE_SQL);
  const write = db.transaction(({ ids, events, storedAt, reports }: GroupToWrite) => {
    for (let i = 0; i < ids.length; i++) insert.run(...EVENT_ROWS.toRow(ids[i]!, events[i]!, storedAt));
    for (const report of reports) upsert.run(...report);
  });
  return {
    write: async (group) => {
      write(group);
    },
    probe: async (now, padBytes) => {
      probe.run(now, padBytes);
    },
    open: () => undefined,
    close: async () => {},
  };
}

/** Commits on a writer thread with its own connection to the same file, same durability. */
export function threadWriter(db: SqliteDatabase, configured: 'FULL' | 'NORMAL' | undefined, ringBytes: number | undefined): GroupWriter {
  // PRAGMA synchronous reads back as a number: 2 = FULL, 1 = NORMAL.
  const synchronous = configured ?? (Number(db.pragma('synchronous', { simple: true })) >= 2 ? 'FULL' : 'NORMAL');
  return new WriterThread({
    file: db.name,
    synchronous,
    insertRowsSql: Array.from({ length: INSERT_CHUNK_ROWS }, (_, i) => EVENT_ROWS.insertRowsSql(i + 1)),
    upsertSql: UPSERT_LAST_REPORT_SQL,
    probeSql: STORE_PROBE_SQL,
    ringBytes,
  });
}
