import { withFieldMigrations } from '../../events/migrations.js';
import type { EventField } from '../../events/schema.js';
import type { ClickHouseClient } from './client.js';
import { partitionEventsByReceivedMonth } from './repartition.js';
import { addColumnSql } from './rows.js';
import { quoteIdentifier, quoteString, sqlUInt } from './sql.js';

/**
 * The analysts' schema, as an ordered list of migrations applied when the worker starts.
 *
 * Syntax is limited to what ClickHouse 18.16 AND current releases both accept: no DateTime64,
 * LowCardinality, Bool, Map, TTL or query parameters; MergeTree family with PARTITION BY/ORDER BY;
 * materialized views with `TO`. Every statement is idempotent (`IF NOT EXISTS`), so a migration
 * interrupted half way is simply run again, and two workers starting at once do no harm; so is a
 * migration's `run` (version 3, repartition.ts).
 *
 * Never edit a migration that has shipped: append a new one, with a version above every shipped
 * one (the event fields' included). An event field added later needs none here: its migration is
 * derived from its `since` (shared/events/migrations.ts; addColumnSql() in rows.ts writes its
 * statements). 18.16 has no `ADD COLUMN IF NOT EXISTS`: such a statement adds one column, and
 * migrate() takes "column already exists" as done. `{db}` in a statement is replaced by the
 * quoted database name.
 */
export interface Migration {
  version: number;
  name: string;
  statements: readonly string[];
  /** Work no statement list can do (18.16 has no IF for a RENAME), run after them; safe to repeat. */
  run?: (context: MigrationContext) => Promise<void>;
}

export interface MigrationContext {
  client: ClickHouseClient;
  database: string;
  /** For statements that may run longer than the client's request timeout (a month of events copied). */
  longStatements: ClickHouseClient;
  log: MigrationLog;
}

/** Where a long migration reports its progress, and what it could not do (the worker's logger). */
export type MigrationLog = (fields: Record<string, unknown>, message: string, level?: 'info' | 'warn') => void;

/** .NET DateTime.Ticks of the Unix epoch divided by 10,000: ms from 0001-01-01 to 1970-01-01. */
const NET_EPOCH_OFFSET_MS = 62_135_596_800_000;

const HAND_WRITTEN: readonly Migration[] = [
  {
    version: 1,
    name: 'events and latest positions',
    statements: [
      `CREATE TABLE IF NOT EXISTS {db}.events (
        id UInt64,
        system_user String,
        dominio String,
        nro_serie String,
        codigo String,
        latitud Float64,
        longitud Float64,
        altitud Float64,
        velocidad Float64,
        rumbo Nullable(Float64),
        valid_position UInt8,
        valido Nullable(UInt8),
        event_time_text String,
        event_time DateTime('UTC'),
        event_time_ms Int64,
        event_time_ticks UInt16,
        reception_time_text Nullable(String),
        reception_time Nullable(DateTime('UTC')),
        reception_time_ms Nullable(Int64),
        reception_time_ticks Nullable(UInt16),
        received_at DateTime('UTC'),
        received_at_ms Int64,
        crudo Nullable(String),
        sensor_keys Array(String),
        sensor_values Array(String),
        operation String,
        dedupe_key String,
        stored_at DateTime('UTC')
      ) ENGINE = ReplacingMergeTree
      PARTITION BY toYYYYMM(event_time)
      ORDER BY (system_user, dominio, event_time, id)`,
      // Latest position per provider+Dominio: `version` is the event instant in .NET ticks (100 ns
      // since 0001-01-01), so the row with the latest FechaHoraEvento wins a merge or FINAL.
      `CREATE TABLE IF NOT EXISTS {db}.latest_positions (
        system_user String,
        dominio String,
        version UInt64,
        id UInt64,
        nro_serie String,
        codigo String,
        latitud Float64,
        longitud Float64,
        altitud Float64,
        velocidad Float64,
        rumbo Nullable(Float64),
        valid_position UInt8,
        event_time_text String,
        event_time DateTime('UTC'),
        event_time_ms Int64,
        event_time_ticks UInt16,
        received_at DateTime('UTC')
      ) ENGINE = ReplacingMergeTree(version)
      ORDER BY (system_user, dominio)`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.latest_positions_mv TO {db}.latest_positions AS
      SELECT
        system_user,
        dominio,
        toUInt64(greatest(event_time_ms + ${NET_EPOCH_OFFSET_MS}, 0)) * 10000 + event_time_ticks AS version,
        id,
        nro_serie,
        codigo,
        latitud,
        longitud,
        altitud,
        velocidad,
        rumbo,
        valid_position,
        event_time_text,
        event_time,
        event_time_ms,
        event_time_ticks,
        received_at
      FROM {db}.events`,
    ],
  },
  {
    version: 2,
    name: 'arrivals per 10 seconds',
    statements: [
      // Events received per provider and 10 s (bucket: epoch seconds), for the operators' overview:
      // reading this is cheap where counting a time range of `events` reads a whole column. A replayed
      // message counts again (the overview is a rate, not a ledger). Partitioned by day (days since
      // the epoch), so old days can be dropped with ALTER TABLE ... DROP PARTITION.
      `CREATE TABLE IF NOT EXISTS {db}.arrivals (
        bucket UInt32,
        system_user String,
        events UInt64
      ) ENGINE = SummingMergeTree
      PARTITION BY intDiv(bucket, 86400)
      ORDER BY (bucket, system_user)`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.arrivals_mv TO {db}.arrivals AS
      SELECT toUInt32(intDiv(received_at_ms, 10000) * 10) AS bucket, system_user, count() AS events
      FROM {db}.events
      GROUP BY bucket, system_user`,
    ],
  },
  {
    version: 3,
    name: 'events partitioned by the month received',
    statements: [],
    run: ({ client, database, longStatements, log }) =>
      partitionEventsByReceivedMonth(client, database, {
        longStatements,
        onMoved: (moved) => log({ database, ...moved }, 'moved device months of events into the table partitioned by the month received'),
      }),
  },
];

/** The migration adding event fields at `version` (derived from their `since`). */
export function eventFieldMigration(version: number, fields: readonly EventField[]): Migration {
  return { version, name: `event fields ${fields.map((f) => f.name).join(', ')}`, statements: fields.flatMap(addColumnSql) };
}

/** Every migration in version order: the hand-written ones and those of the event fields added later. */
export const MIGRATIONS: readonly Migration[] = withFieldMigrations('ClickHouse 18.16', HAND_WRITTEN, eventFieldMigration);

function render(statement: string, database: string): string {
  return statement.replaceAll('{db}', quoteIdentifier(database));
}

const ADD_COLUMN = /^\s*ALTER\s+TABLE\s[^;]*\bADD\s+COLUMN\s/i;

/** Runs one statement; an ADD COLUMN of a column that exists (a migration run again) is done. */
async function runStatement(client: ClickHouseClient, query: string): Promise<void> {
  try {
    await client.command({ query });
  } catch (err) {
    // 18.16's error text is not parsed into a ClickHouseError by the client: match the message.
    if (err instanceof Error && ADD_COLUMN.test(query) && /column with this name already exists/i.test(err.message)) return;
    throw err;
  }
}

export interface MigrationResult {
  /** Versions applied by this call (empty when the schema was already current). */
  applied: number[];
  /** The highest version now applied. */
  current: number;
}

/**
 * Creates the database and `schema_migrations` if missing, then applies, in order, each migration
 * not recorded there, recording it after all its statements succeeded.
 */
export async function migrate(
  client: ClickHouseClient,
  database: string,
  migrations: readonly Migration[] = MIGRATIONS,
  options: { longStatements?: ClickHouseClient; log?: MigrationLog } = {},
): Promise<MigrationResult> {
  const db = quoteIdentifier(database);
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i]!.version <= migrations[i - 1]!.version) throw new Error('migrations must have increasing versions');
  }
  // Everything applied already (by this process earlier, or by the migrations user): no DDL at all,
  // so a worker whose user may only insert and read starts (docs/security.md §ClickHouse).
  const before = await appliedVersions(client, database).catch(() => null);
  if (before !== null && migrations.every((m) => before.includes(m.version))) {
    return { applied: [], current: before.length === 0 ? 0 : Math.max(...before) };
  }
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${db}` });
  await client.command({
    query: `CREATE TABLE IF NOT EXISTS ${db}.schema_migrations (
      version UInt32,
      name String,
      applied_at DateTime('UTC')
    ) ENGINE = ReplacingMergeTree ORDER BY version`,
  });
  const done = new Set(await appliedVersions(client, database));
  const applied: number[] = [];
  for (const migration of migrations) {
    if (done.has(migration.version)) continue;
    for (const statement of migration.statements) await runStatement(client, render(statement, database));
    await migration.run?.({ client, database, longStatements: options.longStatements ?? client, log: options.log ?? (() => undefined) });
    const now = Math.floor(Date.now() / 1000);
    await client.command({
      query: `INSERT INTO ${db}.schema_migrations (version, name, applied_at)
        VALUES (${sqlUInt(migration.version)}, ${quoteString(migration.name)}, toDateTime(${sqlUInt(now)}, 'UTC'))`,
    });
    applied.push(migration.version);
  }
  const all = [...done, ...applied];
  return { applied, current: all.length === 0 ? 0 : Math.max(...all) };
}

export async function appliedVersions(client: ClickHouseClient, database: string): Promise<number[]> {
  const result = await client.query({
    query: `SELECT DISTINCT version FROM ${quoteIdentifier(database)}.schema_migrations ORDER BY version`,
    format: 'JSONEachRow',
  });
  const rows = await result.json<{ version: number }>();
  return rows.map((r) => r.version);
}
