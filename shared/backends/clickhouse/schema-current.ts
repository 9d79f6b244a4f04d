import { withFieldMigrations } from '../../events/migrations.js';
import { EVENT_FIELD_LIST, FIRST_VERSION, firstRelease, type EventField } from '../../events/schema.js';
import type { ClickHouseClient } from './client.js';
import { addCurrentColumnSql, currentEventColumns } from './current-rows.js';
import type { Migration } from './schema.js';
import { quoteIdentifier, quoteString, sqlUInt } from './sql.js';

/**
 * The analysts' schema on ClickHouse 24.8 and later (the 18.16 one is MIGRATIONS in schema.ts).
 * Same tables and column names where the meaning is the same, so the admin API and most queries
 * read both; what differs is documented in docs/analytics.md.
 *
 * - `events` is partitioned by receipt month (`received_at`, the gateway's clock), not by the
 *   device's: a device with a wrong clock cannot spread a batch over many partitions, and retention
 *   drops whole months.
 * - Every table carries `non_replicated_deduplication_window`: the worker sends an
 *   `insert_deduplication_token` per insert, so a retried insert is dropped by ClickHouse at once,
 *   in `events` and, through the materialized views, in `latest_positions` and `arrivals`.
 * - Skip indexes serve the documented queries that do not filter by the sorting key's prefix:
 *   time ranges over all providers (event_time, received_at, stored_at), id lookups, invalid
 *   positions and sensor names.
 * - Retention is a TTL on receipt time set from CLICKHOUSE_RETENTION_DAYS (applyRetention below),
 *   not part of a migration, so it can change without a new schema version.
 *
 * Versions start at 101 so that schema_migrations tells the two schemas apart: 100 + the schema
 * version (shared/events/migrations.ts). Never edit a shipped migration: append one, with a version
 * above every shipped one. An event field added later needs none here: its migration (100 + its
 * `since`) is derived (addCurrentColumnSql in current-rows.ts writes its statements). The first
 * migration creates the first release's columns only, so it reads the same whatever is added.
 */

/** Inserts remembered per table for deduplication (each insert of the worker is one). */
const DEDUPLICATION_WINDOW = 1000;

/** What the current schema's versions add to the schema version; 18.16's are below 101. */
export const CURRENT_OFFSET = 100;
const FIRST_CURRENT_VERSION = CURRENT_OFFSET + FIRST_VERSION;

const TABLE_SETTINGS = `SETTINGS non_replicated_deduplication_window = ${DEDUPLICATION_WINDOW}`;

const HAND_WRITTEN: readonly Migration[] = [
  {
    version: FIRST_CURRENT_VERSION,
    name: 'events, latest positions and arrivals (ClickHouse 24.8+)',
    statements: [
      `CREATE TABLE IF NOT EXISTS {db}.events (
        ${currentEventColumns(firstRelease(EVENT_FIELD_LIST))
          .map((c) => `${c.name} ${c.type}`)
          .join(',\n        ')},
        INDEX idx_id id TYPE minmax GRANULARITY 1,
        INDEX idx_event_time event_time TYPE minmax GRANULARITY 1,
        INDEX idx_received_at received_at TYPE minmax GRANULARITY 1,
        INDEX idx_stored_at stored_at TYPE minmax GRANULARITY 1,
        INDEX idx_valid_position valid_position TYPE set(2) GRANULARITY 1,
        INDEX idx_sensor_keys sensor_keys TYPE bloom_filter(0.01) GRANULARITY 1
      ) ENGINE = ReplacingMergeTree
      PARTITION BY toYYYYMM(received_at)
      ORDER BY (system_user, dominio, event_time, id)
      ${TABLE_SETTINGS}, ttl_only_drop_parts = 1`,
      // The latest event per provider+Dominio: the row with the latest event_time wins a merge or FINAL.
      `CREATE TABLE IF NOT EXISTS {db}.latest_positions (
        system_user LowCardinality(String),
        dominio String,
        id UInt64,
        nro_serie String,
        codigo LowCardinality(String),
        latitud Float64,
        longitud Float64,
        altitud Float64,
        velocidad Float64,
        rumbo Nullable(Float64),
        valid_position Bool,
        event_time_text String,
        event_time DateTime64(7, 'UTC'),
        received_at DateTime64(3, 'UTC')
      ) ENGINE = ReplacingMergeTree(event_time)
      ORDER BY (system_user, dominio)
      ${TABLE_SETTINGS}`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.latest_positions_mv TO {db}.latest_positions AS
      SELECT system_user, dominio, id, nro_serie, codigo, latitud, longitud, altitud, velocidad, rumbo,
        valid_position, event_time_text, event_time, received_at
      FROM {db}.events`,
      // Events received per provider and 10 s (bucket: epoch seconds), as on 18.16.
      `CREATE TABLE IF NOT EXISTS {db}.arrivals (
        bucket UInt32 CODEC(Delta, ZSTD(1)),
        system_user LowCardinality(String),
        events UInt64
      ) ENGINE = SummingMergeTree
      PARTITION BY toYYYYMM(toDateTime(bucket, 'UTC'))
      ORDER BY (bucket, system_user)
      ${TABLE_SETTINGS}, ttl_only_drop_parts = 1`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.arrivals_mv TO {db}.arrivals AS
      SELECT toUInt32(intDiv(toUnixTimestamp64Milli(received_at), 10000) * 10) AS bucket, system_user, count() AS events
      FROM {db}.events
      GROUP BY bucket, system_user`,
    ],
  },
];

/** The migration adding event fields at `version` (100 + their `since`). */
export function currentFieldMigration(version: number, fields: readonly EventField[]): Migration {
  return { version, name: `event fields ${fields.map((f) => f.name).join(', ')}`, statements: fields.flatMap(addCurrentColumnSql) };
}

/** Every migration in version order: the hand-written ones and those of the event fields added later. */
export const CURRENT_MIGRATIONS: readonly Migration[] = withFieldMigrations('ClickHouse 24.8+', HAND_WRITTEN, currentFieldMigration, { offset: CURRENT_OFFSET });

/** The tables retention applies to, and the DateTime expression each one ages by. */
const RETENTION: readonly { table: string; age: string }[] = [
  { table: 'events', age: 'toDateTime(received_at)' },
  { table: 'arrivals', age: "toDateTime(bucket, 'UTC')" },
];

/** The retention days a table's TTL states (`engine_full`), null without a TTL. */
export function retentionOf(engineFull: string): number | null {
  const m = /\bTTL\b.*?toIntervalDay\((\d+)\)/.exec(engineFull);
  return m === null ? null : Number(m[1]);
}

/**
 * Makes the TTL of `events` and `arrivals` say `days` (0: keep everything), altering only a table
 * whose TTL differs, so a restart with the same setting costs one read of system.tables. Rows age
 * by receipt time; with ttl_only_drop_parts whole parts are dropped, never rewritten.
 */
export async function applyRetention(client: ClickHouseClient, database: string, days: number): Promise<void> {
  const db = quoteIdentifier(database);
  const result = await client.query({
    query: `SELECT name, engine_full FROM system.tables WHERE database = ${quoteString(database)} AND name IN ('events', 'arrivals')`,
    format: 'JSONEachRow',
  });
  const tables = new Map((await result.json<{ name: string; engine_full: string }>()).map((t) => [t.name, t.engine_full]));
  for (const { table, age } of RETENTION) {
    const engine = tables.get(table);
    if (engine === undefined) continue;
    const now = retentionOf(engine);
    if ((now ?? 0) === days) continue;
    const change = days === 0 ? 'REMOVE TTL' : `MODIFY TTL ${age} + toIntervalDay(${sqlUInt(days)})`;
    await client.command({ query: `ALTER TABLE ${db}.${quoteIdentifier(table)} ${change}` });
  }
}
