import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { withFieldMigrations } from '../../events/migrations.js';
import type { EventField } from '../../events/schema.js';
import { addColumnSql } from './event-row.js';
import { OPERATOR_TABLES_MIGRATION } from './operator-schema.js';

export type SqliteDatabase = Database.Database;

export const DATABASE_FILE = 'gateway.sqlite';

/** A schema migration: the SQL that brings the database to `version` (kept in `PRAGMA user_version`). */
export interface SqliteMigration {
  readonly version: number;
  readonly sql: string;
}

/**
 * The hand-written schema migrations, by version. Never edit a shipped entry: append a new one,
 * with a version above every shipped one (the event fields' included: MIGRATIONS). An event field
 * added later needs none here: its migration is derived from its `since` (shared/events/migrations.ts).
 *
 * Tables are STRICT so a wrong type is an error instead of a silently coerced value. Texts use the
 * default BINARY collation: SystemUser and Dominio compare case-sensitively, as sent.
 */
const HAND_WRITTEN: readonly SqliteMigration[] = [
  {
    version: 1,
    sql: `
  CREATE TABLE providers (
    system_user                 TEXT PRIMARY KEY,
    password_hash               TEXT NOT NULL,
    enabled                     INTEGER NOT NULL,
    time_zone                   TEXT,
    require_registered_vehicles INTEGER NOT NULL,
    created_at                  INTEGER NOT NULL,
    updated_at                  INTEGER NOT NULL
  ) STRICT;

  -- AUTOINCREMENT so a NUMERO is never reused, even after the newest command is deleted.
  CREATE TABLE commands (
    numero            INTEGER PRIMARY KEY AUTOINCREMENT,
    system_user       TEXT NOT NULL,
    cmd               TEXT NOT NULL,
    unidad            TEXT NOT NULL,
    equipo            TEXT NOT NULL,
    state             TEXT NOT NULL CHECK (state IN ('pending', 'in_process', 'succeeded', 'failed', 'expired')),
    created_at        INTEGER NOT NULL,
    expires_at        INTEGER NOT NULL,
    deliveries        INTEGER NOT NULL DEFAULT 0,
    last_delivered_at INTEGER,
    finished_at       INTEGER
  ) STRICT;
  -- Polling looks only at unfinished commands; the partial index stays small as commands finish.
  CREATE INDEX commands_open ON commands (system_user, numero) WHERE state IN ('pending', 'in_process');
  CREATE INDEX commands_by_provider ON commands (system_user, numero);

  CREATE TABLE command_history (
    entry   INTEGER PRIMARY KEY,
    numero  INTEGER NOT NULL REFERENCES commands (numero),
    at      INTEGER NOT NULL,
    kind    TEXT NOT NULL CHECK (kind IN ('queued', 'delivered', 'status', 'finished')),
    message TEXT NOT NULL
  ) STRICT;
  CREATE INDEX command_history_by_command ON command_history (numero, entry);

  CREATE TABLE trip_vehicles (
    system_user   TEXT NOT NULL,
    dominio       TEXT NOT NULL,
    nro_serie     TEXT NOT NULL,
    registered_at INTEGER NOT NULL,
    PRIMARY KEY (system_user, dominio)
  ) STRICT, WITHOUT ROWID;

  -- Latest FechaHoraEvento per provider and Dominio, kept by the event log in its own commits.
  CREATE TABLE last_reports (
    system_user  TEXT NOT NULL,
    dominio      TEXT NOT NULL,
    epoch_ms     INTEGER NOT NULL,
    sub_ms_ticks INTEGER NOT NULL,
    PRIMARY KEY (system_user, dominio)
  ) STRICT, WITHOUT ROWID;

  -- id is the rowid: allocated by the gateway (64-bit), so no AUTOINCREMENT bookkeeping per insert.
  CREATE TABLE events (
    id                   INTEGER PRIMARY KEY,
    system_user          TEXT NOT NULL,
    dominio              TEXT NOT NULL,
    nro_serie            TEXT NOT NULL,
    codigo               TEXT NOT NULL,
    latitud              REAL NOT NULL,
    longitud             REAL NOT NULL,
    altitud              REAL NOT NULL,
    velocidad            REAL NOT NULL,
    rumbo                REAL,
    valid_position       INTEGER NOT NULL,
    valido               INTEGER,
    event_time_text      TEXT NOT NULL,
    event_time_ms        INTEGER NOT NULL,
    event_time_ticks     INTEGER NOT NULL,
    reception_time_text  TEXT,
    reception_time_ms    INTEGER,
    reception_time_ticks INTEGER,
    received_at          INTEGER NOT NULL,
    crudo                TEXT,
    sensors              TEXT NOT NULL,
    operation            TEXT NOT NULL,
    dedupe_key           TEXT NOT NULL,
    stored_at            INTEGER NOT NULL
  ) STRICT;
  -- Rebuilding the dedupe index at open reads the last window of events by received_at. Dedupe
  -- lookups themselves are in memory, so dedupe_key needs no index of its own (it would slow ingest).
  CREATE INDEX events_by_received_at ON events (received_at);
  -- recent({provider}) and recent({provider, dominio}), newest first.
  CREATE INDEX events_by_provider ON events (system_user, id);
  `,
  },
  {
    version: 2,
    sql: `
  -- Readiness writes here (a row with a padding blob, so the write needs fresh pages like an event
  -- group does): /readyz fails while the store cannot write (disk full, read-only storage).
  CREATE TABLE store_probe (
    id  INTEGER PRIMARY KEY CHECK (id = 1),
    at  INTEGER NOT NULL,
    pad BLOB NOT NULL
  ) STRICT;
  `,
  },
  {
    version: 3,
    sql: `
  -- An operator may cancel an unfinished command: 'cancelled' joins the states. SQLite cannot
  -- change a CHECK constraint in place, so the table is rebuilt (migrate() runs this with foreign
  -- keys off and checks them before committing). The AUTOINCREMENT sequence is carried over, so a
  -- NUMERO is still never reused.
  CREATE TABLE commands_new (
    numero            INTEGER PRIMARY KEY AUTOINCREMENT,
    system_user       TEXT NOT NULL,
    cmd               TEXT NOT NULL,
    unidad            TEXT NOT NULL,
    equipo            TEXT NOT NULL,
    state             TEXT NOT NULL CHECK (state IN ('pending', 'in_process', 'succeeded', 'failed', 'expired', 'cancelled')),
    created_at        INTEGER NOT NULL,
    expires_at        INTEGER NOT NULL,
    deliveries        INTEGER NOT NULL DEFAULT 0,
    last_delivered_at INTEGER,
    finished_at       INTEGER
  ) STRICT;
  INSERT INTO commands_new SELECT * FROM commands;
  DELETE FROM sqlite_sequence WHERE name = 'commands_new';
  INSERT INTO sqlite_sequence (name, seq) SELECT 'commands_new', seq FROM sqlite_sequence WHERE name = 'commands';
  DROP TABLE commands;
  ALTER TABLE commands_new RENAME TO commands;
  CREATE INDEX commands_open ON commands (system_user, numero) WHERE state IN ('pending', 'in_process');
  CREATE INDEX commands_by_provider ON commands (system_user, numero);
  `,
  },
  { version: 4, sql: OPERATOR_TABLES_MIGRATION },
];

/** The migration adding event fields at `version` (derived from their `since`). */
export function eventFieldMigration(version: number, fields: readonly EventField[]): SqliteMigration {
  return { version, sql: [`-- Event fields ${fields.map((f) => f.name).join(', ')}; rows stored before them read as their zero.`, ...fields.flatMap(addColumnSql)].join('\n') };
}

/** Every migration in version order: the hand-written ones and those of the event fields added later. */
export const MIGRATIONS: readonly SqliteMigration[] = withFieldMigrations('SQLite', HAND_WRITTEN, eventFieldMigration);

/** The schema version this build brings a database to. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** Upsert of the readiness probe: ?1 = now, ?2 = padding bytes. */
export const STORE_PROBE_SQL = `INSERT INTO store_probe (id, at, pad) VALUES (1, ?, zeroblob(?))
  ON CONFLICT (id) DO UPDATE SET at = excluded.at, pad = excluded.pad`;

/**
 * DATA_DIR holds events and password hashes: it is created 0700 and the database file 0600 before
 * SQLite opens it (SQLite gives its -wal and -shm files the database file's mode). An existing
 * directory or file is tightened the same way; the umask can only take bits away.
 */
export function privateDataFile(dataDir: string, name: string): string {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dataDir, 0o700);
  const file = path.join(dataDir, name);
  fs.closeSync(fs.openSync(file, 'a', 0o600));
  fs.chmodSync(file, 0o600);
  for (const companion of [`${file}-wal`, `${file}-shm`]) {
    try {
      fs.chmodSync(companion, 0o600);
    } catch {
      // Not there yet: SQLite creates it with the database file's mode.
    }
  }
  return file;
}

/** Opens (creating if needed) DATA_DIR/gateway.sqlite and brings its schema up to date. */
export function openDatabase(dataDir: string, synchronous: 'FULL' | 'NORMAL'): SqliteDatabase {
  // The value goes into a PRAGMA statement, which takes no bound parameters.
  // Checked at run time too: the value may come from an untyped caller (a test, a script).
  if ((synchronous as string) !== 'FULL' && synchronous !== 'NORMAL') {
    throw new Error(`sqliteSynchronous must be FULL or NORMAL, got "${synchronous}".`);
  }
  const file = privateDataFile(dataDir, DATABASE_FILE);
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${synchronous}`);
    // Waits for the lock instead of failing at once when another connection (CLI, backup) writes.
    db.pragma('busy_timeout = 5000');
    db.pragma('foreign_keys = ON');
    migrate(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

function userVersion(db: SqliteDatabase): number {
  return Number(db.pragma('user_version', { simple: true }));
}

/** Brings `db` to the last version of `migrations` (this build's, unless a test gives others). */
export function migrate(db: SqliteDatabase, migrations: readonly SqliteMigration[] = MIGRATIONS): void {
  // A migration that rebuilds a table drops the original, which foreign keys would refuse (or
  // cascade). SQLite's own procedure: foreign keys off (only possible outside a transaction), then
  // foreign_key_check before committing, so the result is exactly as consistent as before.
  const foreignKeys = Number(db.pragma('foreign_keys', { simple: true })) === 1;
  db.pragma('foreign_keys = OFF');
  try {
    migrateInTransaction(db, migrations);
  } finally {
    if (foreignKeys) db.pragma('foreign_keys = ON');
  }
}

function migrateInTransaction(db: SqliteDatabase, migrations: readonly SqliteMigration[]): void {
  const last = migrations[migrations.length - 1]?.version ?? 0;
  // IMMEDIATE takes the write lock before reading the version, so two processes opening the same
  // fresh directory cannot both apply the same migration.
  db.transaction(() => {
    const current = userVersion(db);
    if (current > last) {
      throw new Error(`Database schema version ${current} is newer than this build knows (${last}); refusing to open it.`);
    }
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    }
    if (current === last) return;
    const broken = db.pragma('foreign_key_check') as unknown[];
    if (broken.length > 0) throw new Error(`Schema migration left ${broken.length} rows with a dangling reference; nothing was changed.`);
  }).immediate();
}
