import { randomBytes } from 'node:crypto';
import type { ClickHouseClient } from './client.js';
import { quoteIdentifier, quoteString, sqlUInt } from './sql.js';

/**
 * Migration 3 of the 18.16 schema: `events` partitioned by the month the gateway received an event
 * instead of the month its device's clock gave. A few devices with wrong clocks spread a table over
 * hundreds of device months; every insert then writes a part in each month it touches, and on
 * 18.16 a batch spanning a thousand active parts took longer than the insert timeout. By receipt,
 * a batch lands in one or two partitions whatever the devices say.
 *
 * 18.16 cannot change a table's partition key, so the rows move to a new table, in two steps that
 * are each safe to repeat, interrupt or run from two processes at once:
 *
 * 1. The swap, at once: an empty table with the new key takes the name `events` in one RENAME, and
 *    the former table becomes `events_by_event_month`. Materialized views on 18.16 follow the name
 *    (tested), so from then on every insert, by this release's workers or the previous one's
 *    (same columns), goes to the new table and feeds `latest_positions` and `arrivals` as before.
 * 2. The move, a few months of the former table at a time (up to 2 million rows, or one month
 *    when it holds more): their rows are copied into a staging table of this run (same structure
 *    and key as `events`, no views on it), whose partitions are then attached to `events` (ATTACH
 *    PARTITION FROM: no view fires again, so `arrivals` does not count them twice), and only then
 *    are those months dropped from the former table. A run cut short leaves them in place, and the
 *    next run copies them again (ReplacingMergeTree collapses a row attached twice: same id, same
 *    key, same partition). The former table is dropped once empty. Until then its months not yet
 *    moved are missing from `events`.
 *
 * A step's copy is one INSERT ... SELECT, which 18.16 finishes even when the client gave up on it:
 * `longStatements` is a client whose requests may last as long as the largest month takes.
 */

/** The partition key `events` has after this migration, as system.tables writes it. */
export const RECEIVED_MONTH_KEY = 'toYYYYMM(received_at)';
/** What the former table is called until its rows have moved. */
export const FORMER_EVENTS = 'events_by_event_month';
const NEW_EVENTS = 'events_by_received';
/** Staging tables of a move: this prefix and a random suffix, one per run. */
const STAGING_PREFIX = 'events_moving_';

async function rows<T>(client: ClickHouseClient, query: string): Promise<T[]> {
  return (await client.query({ query, format: 'JSONEachRow' })).json<T>();
}

/** The partition key of `db`.`table` as system.tables writes it, null when the table does not exist. */
export async function partitionKey(client: ClickHouseClient, database: string, table: string): Promise<string | null> {
  const found = await rows<{ partition_key: string }>(client, `SELECT partition_key FROM system.tables WHERE database = ${quoteString(database)} AND name = ${quoteString(table)}`);
  return found[0]?.partition_key ?? null;
}

/** The active partitions of a table (their yyyymm values, ascending), and its rows in them. */
async function activePartitions(client: ClickHouseClient, database: string, table: string): Promise<{ partition: number; rows: number }[]> {
  const found = await rows<{ partition: string; rows: string }>(
    client,
    `SELECT partition, sum(rows) AS rows FROM system.parts WHERE database = ${quoteString(database)} AND table = ${quoteString(table)} AND active GROUP BY partition ORDER BY partition`,
  );
  return found.map((r) => ({ partition: Number(r.partition), rows: Number(r.rows) }));
}

async function tables(client: ClickHouseClient, database: string): Promise<string[]> {
  return (await rows<{ name: string }>(client, `SELECT name FROM system.tables WHERE database = ${quoteString(database)}`)).map((r) => r.name);
}

/** Progress of the move, for the caller's log: the months of a step, their rows, and the months left. */
export type MoveProgress = (moved: { months: number[]; rows: number; monthsLeft: number }) => void;

export interface RepartitionOptions {
  /** Runs the copies (a step of months each); default the same client. */
  longStatements?: ClickHouseClient;
  onMoved?: MoveProgress;
}

/** Rows a step of the move copies at most, unless a single month holds more; and months per step at most. */
const MOVE_ROWS_PER_STEP = 2_000_000;
const MOVE_MONTHS_PER_STEP = 64;

/** The first months of `months` (ascending) that make a step: at least one, then up to the limits. */
function stepOf(months: readonly { partition: number; rows: number }[]): { partition: number; rows: number }[] {
  let rows = 0;
  let n = 0;
  while (n < months.length && n < MOVE_MONTHS_PER_STEP && (n === 0 || rows + months[n]!.rows <= MOVE_ROWS_PER_STEP)) rows += months[n++]!.rows;
  return months.slice(0, n);
}

/** Migration 3 (see above): the swap unless done, then the move of whatever the former table still holds. */
export async function partitionEventsByReceivedMonth(client: ClickHouseClient, database: string, options: RepartitionOptions = {}): Promise<void> {
  const db = quoteIdentifier(database);
  const table = (name: string): string => `${db}.${quoteIdentifier(name)}`;
  if ((await partitionKey(client, database, 'events')) !== RECEIVED_MONTH_KEY) {
    await client.command({
      query: `CREATE TABLE IF NOT EXISTS ${table(NEW_EVENTS)} AS ${table('events')}
        ENGINE = ReplacingMergeTree PARTITION BY toYYYYMM(received_at) ORDER BY (system_user, dominio, event_time, id)`,
    });
    // Both names at once: no moment without an `events` table for an insert to fail on.
    await client.command({ query: `RENAME TABLE ${table('events')} TO ${table(FORMER_EVENTS)}, ${table(NEW_EVENTS)} TO ${table('events')}` });
  }
  await moveFormerRows(client, database, options);
}

async function moveFormerRows(client: ClickHouseClient, database: string, options: RepartitionOptions): Promise<void> {
  const db = quoteIdentifier(database);
  const table = (name: string): string => `${db}.${quoteIdentifier(name)}`;
  const present = await tables(client, database);
  // A swap that lost a race to another process's leaves its empty new table behind.
  if (present.includes(NEW_EVENTS) && (await activePartitions(client, database, NEW_EVENTS)).length === 0) {
    await client.command({ query: `DROP TABLE IF EXISTS ${table(NEW_EVENTS)}` });
  }
  if (!present.includes(FORMER_EVENTS)) return;
  const staging = `${STAGING_PREFIX}${randomBytes(6).toString('hex')}`;
  await client.command({ query: `CREATE TABLE ${table(staging)} AS ${table('events')}` });
  try {
    const moved = new Set<number>();
    for (let months = await activePartitions(client, database, FORMER_EVENTS); months.length > 0; months = await activePartitions(client, database, FORMER_EVENTS)) {
      // Months in steps of about MOVE_ROWS_PER_STEP rows: devices with wrong clocks leave hundreds
      // of months of a few rows each, and each step costs a handful of statements.
      const step = stepOf(months);
      // A month dropped but still there would be copied for ever: stop instead, the migration fails and says why.
      const again = step.find((m) => moved.has(m.partition));
      if (again !== undefined) throw new Error(`month ${again.partition} of ${database}.${FORMER_EVENTS} is still there after it was moved and dropped`);
      const list = step.map((m) => sqlUInt(m.partition)).join(', ');
      await (options.longStatements ?? client).command({
        query: `INSERT INTO ${table(staging)} SELECT * FROM ${table(FORMER_EVENTS)} WHERE toYYYYMM(event_time) IN (${list})`,
      });
      for (const { partition } of await activePartitions(client, database, staging)) {
        await client.command({ query: `ALTER TABLE ${table('events')} ATTACH PARTITION ${sqlUInt(partition)} FROM ${table(staging)}` });
        await client.command({ query: `ALTER TABLE ${table(staging)} DROP PARTITION ${sqlUInt(partition)}` });
      }
      // Only now, every row of these months being in `events`, do they leave the former table.
      for (const { partition } of step) {
        moved.add(partition);
        await client.command({ query: `ALTER TABLE ${table(FORMER_EVENTS)} DROP PARTITION ${sqlUInt(partition)}` });
      }
      options.onMoved?.({ months: step.map((m) => m.partition), rows: step.reduce((n, m) => n + m.rows, 0), monthsLeft: months.length - step.length });
    }
    await client.command({ query: `DROP TABLE IF EXISTS ${table(FORMER_EVENTS)}` });
    // Staging tables of runs cut short (or of a concurrent run, whose months are all in `events` now).
    for (const name of await tables(client, database)) {
      if (name.startsWith(STAGING_PREFIX) && name !== staging) await client.command({ query: `DROP TABLE IF EXISTS ${table(name)}` });
    }
  } finally {
    await client.command({ query: `DROP TABLE IF EXISTS ${table(staging)}` }).catch(() => undefined);
  }
}
