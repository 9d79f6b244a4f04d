import type { ClickHouseClient } from './client.js';
import { quoteIdentifier, quoteString, sqlUInt } from './sql.js';

/**
 * Migration 3 of the 18.16 schema: `events` partitioned by the month the gateway received an event
 * instead of the month its device's clock gave. A few devices with wrong clocks spread a table over
 * hundreds of device months, every insert writes a part in each month it touches, and on 18.16 a
 * batch over a hundred of them took longer than the insert timeout. By receipt, a batch lands in
 * one or two partitions whatever the devices say.
 *
 * 18.16 cannot change a table's partition key, so the rows move to a new table, by one process at
 * a time (a lock table: two swaps at once hung 18.16 for good here, one's CREATE TABLE AS, the
 * other's RENAME and an insert waiting on each other until the server was restarted):
 *
 * 1. The swap, at once: an empty table with the new key takes the name `events` in one RENAME, and
 *    the former table becomes `events_by_event_month`. RENAME waits for the inserts writing into
 *    the former table, and materialized views on 18.16 follow the name (both tested), so from then
 *    on every insert, by this release's workers or the previous one's (same columns), goes to the
 *    new table and feeds `latest_positions` and `arrivals` as before. An insert that had found the
 *    former table but not yet locked it can still write there after the RENAME: the move waits
 *    for every insert begun before the swap first. Other processes running the migration wait
 *    for the swap, then go on; the one that swapped moves the rows.
 * 2. The move, a few months of the former table at a time (up to 2 million rows, or one month
 *    when it holds more): their rows are copied into a staging table (same structure and key as
 *    `events`, no views on it), whose partitions are then attached to `events` (ATTACH PARTITION
 *    FROM: no view fires again, so `arrivals` does not count them twice), and only then are those
 *    months dropped from the former table. A run cut short leaves them in place, and the next run
 *    copies them again (ReplacingMergeTree collapses a row attached twice: same id, same key, same
 *    partition). Until the move ends, the months not moved yet are missing from `events`.
 * 3. The emptied former table is dropped once no insert begun before the run is still running
 *    (one that had found the table before the swap would be dropped with it), after a last pass
 *    for rows such an insert left. After 60 s of waiting the drop is put off: every start of a
 *    worker on the 18.16 schema finishes whatever is left (finishMove, from ensureSchema).
 *
 * A step's copy is one INSERT ... SELECT, which 18.16 finishes even when the client gave up on it:
 * `longStatements` is a client whose requests may last as long as the largest month takes.
 */

/** The partition key `events` has after this migration, as system.tables writes it. */
export const RECEIVED_MONTH_KEY = 'toYYYYMM(received_at)';
/** What the former table is called until its rows have moved. */
export const FORMER_EVENTS = 'events_by_event_month';
const NEW_EVENTS = 'events_by_received';
/** Exists while a process swaps or moves; a row per step it took (its heartbeat). */
const LOCK = 'events_repartition_lock';
/** The staging table of a move (one mover at a time). */
const STAGING = 'events_moving';

/** A lock without a step for this long (seconds) belongs to a process that died before the swap. */
const LOCK_SILENT_BEFORE_SWAP_S = 120;
/** ... and without one for this long, to a process that died while moving (a step may take an hour). */
const LOCK_SILENT_WHILE_MOVING_S = 3900;

/** Rows a step of the move copies at most, unless a single month holds more; and months per step at most. */
const MOVE_ROWS_PER_STEP = 2_000_000;
const MOVE_MONTHS_PER_STEP = 64;

/** Progress of the move, for the caller's log: the months of a step, their rows, and the months left. */
export type MoveProgress = (moved: { months: number[]; rows: number; monthsLeft: number }) => void;

export interface RepartitionOptions {
  /** Runs the copies (a step of months each); default the same client. */
  longStatements?: ClickHouseClient;
  onMoved?: MoveProgress;
  /** How long the drop of the emptied former table waits for inserts older than the run; default 60 s, then it is put off. */
  waitForInsertsMs?: number;
  /** How long a process waits for another's swap; default 10 min. */
  swapWaitMs?: number;
}

async function rows<T>(client: ClickHouseClient, query: string): Promise<T[]> {
  return (await client.query({ query, format: 'JSONEachRow' })).json<T>();
}

const tableIn =
  (database: string) =>
  (name: string): string =>
    `${quoteIdentifier(database)}.${quoteIdentifier(name)}`;

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

async function exists(client: ClickHouseClient, database: string, table: string): Promise<boolean> {
  return (await rows<{ n: string }>(client, `SELECT count() AS n FROM system.tables WHERE database = ${quoteString(database)} AND name = ${quoteString(table)}`))[0]?.n === '1';
}

// ---- the lock ----------------------------------------------------------------------------------

/** True when this call created the lock table (CREATE without IF NOT EXISTS fails when it exists). */
async function takeLock(client: ClickHouseClient, database: string): Promise<boolean> {
  try {
    await client.command({ query: `CREATE TABLE ${tableIn(database)(LOCK)} (step DateTime) ENGINE = Memory` });
    return true;
  } catch (err) {
    if (err instanceof Error && /already exists/i.test(err.message)) return false;
    throw err;
  }
}

/** The holder's heartbeat: a row per step. */
async function heartbeat(client: ClickHouseClient, database: string): Promise<void> {
  await client.command({ query: `INSERT INTO ${tableIn(database)(LOCK)} VALUES (now())` });
}

async function releaseLock(client: ClickHouseClient, database: string): Promise<void> {
  await client.command({ query: `DROP TABLE IF EXISTS ${tableIn(database)(LOCK)}` }).catch(() => undefined);
}

/** Drops a lock whose holder is gone (silent past its limit; a server restart empties it too); true when it did. */
async function breakDeadLock(client: ClickHouseClient, database: string): Promise<boolean> {
  const t = tableIn(database);
  const [lock] = await rows<{ age: string }>(client, `SELECT toUInt64(greatest(0, now() - metadata_modification_time)) AS age FROM system.tables WHERE database = ${quoteString(database)} AND name = ${quoteString(LOCK)}`);
  if (lock === undefined) return true;
  // The holder may drop it meanwhile: then it is free.
  const beats = await rows<{ steps: string; silent: string }>(client, `SELECT count() AS steps, toUInt64(greatest(0, now() - max(step))) AS silent FROM ${t(LOCK)}`).catch((err: unknown) => {
    if (err instanceof Error && /doesn't exist|does not exist|UNKNOWN_TABLE/i.test(err.message)) return null;
    throw err;
  });
  if (beats === null) return true;
  const [beat] = beats;
  const silent = beat === undefined || beat.steps === '0' ? Number(lock.age) : Number(beat.silent);
  const limit = (await partitionKey(client, database, 'events')) === RECEIVED_MONTH_KEY ? LOCK_SILENT_WHILE_MOVING_S : LOCK_SILENT_BEFORE_SWAP_S;
  if (silent <= limit) return false;
  await releaseLock(client, database);
  return true;
}

// ---- the migration -----------------------------------------------------------------------------

/** Migration 3 (see above): the swap unless done, then, by the process that holds the lock, the move. */
export async function partitionEventsByReceivedMonth(client: ClickHouseClient, database: string, options: RepartitionOptions = {}): Promise<void> {
  const began = Date.now();
  const deadline = began + (options.swapWaitMs ?? 600_000);
  const table = tableIn(database);
  for (;;) {
    if (await takeLock(client, database)) {
      try {
        await heartbeat(client, database);
        if ((await partitionKey(client, database, 'events')) !== RECEIVED_MONTH_KEY) {
          await client.command({
            query: `CREATE TABLE IF NOT EXISTS ${table(NEW_EVENTS)} AS ${table('events')}
              ENGINE = ReplacingMergeTree PARTITION BY toYYYYMM(received_at) ORDER BY (system_user, dominio, event_time, id)`,
          });
          // Both names at once: no moment without an `events` table for an insert to fail on.
          await client.command({ query: `RENAME TABLE ${table('events')} TO ${table(FORMER_EVENTS)}, ${table(NEW_EVENTS)} TO ${table('events')}` });
          // An INSERT that found `events` before the RENAME but took its lock after it writes into the
          // former table: a part it lands in a month between that month's copy and its drop would be
          // dropped uncopied (the concurrent-insert test lost 2 rows of a 5-row block so, once in many
          // runs). So the move first waits for every INSERT begun before the swap; past the wait it
          // moves anyway, and the last pass before the drop waits again (and puts the drop off).
          await insertsOlderThan(client, Date.now(), options.waitForInsertsMs ?? 60_000);
        }
        await moveAndDrop(client, database, { ...options, began });
      } finally {
        await releaseLock(client, database);
      }
      return;
    }
    // Another process swaps, or has swapped and moves: once swapped, this one is done.
    if ((await partitionKey(client, database, 'events')) === RECEIVED_MONTH_KEY) return;
    if (await breakDeadLock(client, database)) continue;
    if (Date.now() > deadline) throw new Error(`another process holds ${database}.${LOCK} and has not swapped within ${Math.round((deadline - began) / 1000)} s`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * What migration 3 left to do (a move cut short, the former table's drop put off), at a worker's
 * start: nothing, in one query, once `events_by_event_month` is gone; skipped while another
 * process holds the lock.
 */
export async function finishMove(client: ClickHouseClient, database: string, options: RepartitionOptions = {}): Promise<void> {
  if (!(await exists(client, database, FORMER_EVENTS))) return;
  if (!(await takeLock(client, database)) && !((await breakDeadLock(client, database)) && (await takeLock(client, database)))) return;
  try {
    await heartbeat(client, database);
    await moveAndDrop(client, database, { ...options, began: Date.now() });
  } finally {
    await releaseLock(client, database);
  }
}

/** Steps 2 and 3, holding the lock. */
async function moveAndDrop(client: ClickHouseClient, database: string, options: RepartitionOptions & { began: number }): Promise<void> {
  const table = tableIn(database);
  // A staging table or a new table left by a run that died (nobody else uses them: we hold the lock).
  await client.command({ query: `DROP TABLE IF EXISTS ${table(STAGING)}` });
  await client.command({ query: `DROP TABLE IF EXISTS ${table(NEW_EVENTS)}` });
  if (!(await exists(client, database, FORMER_EVENTS))) return;
  await client.command({ query: `CREATE TABLE ${table(STAGING)} AS ${table('events')}` });
  try {
    await moveMonths(client, database, options);
    if (!(await insertsOlderThan(client, options.began, options.waitForInsertsMs ?? 60_000))) return;
    await moveMonths(client, database, options);
    await client.command({ query: `DROP TABLE IF EXISTS ${table(FORMER_EVENTS)}` });
  } finally {
    await client.command({ query: `DROP TABLE IF EXISTS ${table(STAGING)}` }).catch(() => undefined);
  }
}

/** Moves the former table's months into `events` through the staging table until it holds none. */
async function moveMonths(client: ClickHouseClient, database: string, options: RepartitionOptions): Promise<void> {
  const table = tableIn(database);
  const moves = new Map<number, number>();
  for (let months = await activePartitions(client, database, FORMER_EVENTS); months.length > 0; months = await activePartitions(client, database, FORMER_EVENTS)) {
    const step = stepOf(months);
    // A month comes back when an insert that began before the swap lands in it late; one that
    // keeps coming back would be copied for ever: stop instead, the migration fails and says why.
    const stuck = step.find((m) => (moves.get(m.partition) ?? 0) >= 3);
    if (stuck !== undefined) throw new Error(`month ${stuck.partition} of ${database}.${FORMER_EVENTS} is still there after being moved and dropped 3 times`);
    await heartbeat(client, database);
    const list = step.map((m) => sqlUInt(m.partition)).join(', ');
    // By name: a column a later migration added to `events` while a move was unfinished takes its default.
    const columns = (await rows<{ name: string }>(client, `SELECT name FROM system.columns WHERE database = ${quoteString(database)} AND table = ${quoteString(FORMER_EVENTS)}`))
      .map((c) => quoteIdentifier(c.name))
      .join(', ');
    await (options.longStatements ?? client).command({
      query: `INSERT INTO ${table(STAGING)} (${columns}) SELECT ${columns} FROM ${table(FORMER_EVENTS)} WHERE toYYYYMM(event_time) IN (${list})`,
    });
    for (const { partition } of await activePartitions(client, database, STAGING)) {
      await client.command({ query: `ALTER TABLE ${table('events')} ATTACH PARTITION ${sqlUInt(partition)} FROM ${table(STAGING)}` });
      await client.command({ query: `ALTER TABLE ${table(STAGING)} DROP PARTITION ${sqlUInt(partition)}` });
    }
    // Only now, every row of these months being in `events`, do they leave the former table.
    for (const { partition } of step) {
      moves.set(partition, (moves.get(partition) ?? 0) + 1);
      await client.command({ query: `ALTER TABLE ${table(FORMER_EVENTS)} DROP PARTITION ${sqlUInt(partition)}` });
    }
    options.onMoved?.({ months: step.map((m) => m.partition), rows: step.reduce((n, m) => n + m.rows, 0), monthsLeft: months.length - step.length });
  }
}

/**
 * The first months of `months` (ascending) that make a step: at least one, then up to the limits.
 * Devices with wrong clocks leave hundreds of months of a few rows each, and each step costs a
 * handful of statements.
 */
function stepOf(months: readonly { partition: number; rows: number }[]): { partition: number; rows: number }[] {
  let rows = 0;
  let n = 0;
  while (n < months.length && n < MOVE_MONTHS_PER_STEP && (n === 0 || rows + months[n]!.rows <= MOVE_ROWS_PER_STEP)) rows += months[n++]!.rows;
  return months.slice(0, n);
}

/**
 * Waits (up to `waitMs`) until no INSERT that began before `since` (epoch ms, this machine's clock)
 * is running on the server; false when some still is. Any INSERT counts, whatever its table: the
 * query text does not tell the former table from the new one, and waiting longer is harmless.
 */
async function insertsOlderThan(client: ClickHouseClient, since: number, waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const seconds = Math.max(0, Math.floor((Date.now() - since) / 1000) - 1);
    const [row] = await rows<{ n: string }>(client, `SELECT count() AS n FROM system.processes WHERE elapsed >= ${sqlUInt(seconds)} AND lower(substring(query, 1, 6)) = 'insert'`);
    if (Number(row?.n ?? 0) === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
