import type { ClickHouseClient } from './client.js';
import { CURRENT_ROWS } from './current-rows.js';
import { EVENT_ROWS, partitionMonth, type EventRowCodec } from './rows.js';
import { applyRetention, CURRENT_MIGRATIONS } from './schema-current.js';
import { MIGRATIONS, migrate, type MigrationLog, type MigrationResult } from './schema.js';
import { quoteString } from './sql.js';
import { finishMove, FORMER_EVENTS } from './repartition.js';
import { errorMessage } from '../../util/error-message.js';

/**
 * Which of the two schemas a database holds, chosen by the server's version when the worker first
 * creates it:
 * - `legacy`: the 18.16 schema (MIGRATIONS, rows.ts), for servers before 24.8;
 * - `current`: the 24.8+ schema (CURRENT_MIGRATIONS, current-rows.ts).
 * A database already holding the 18.16 schema keeps it on a current server (upgrade path:
 * docs/analytics.md §Moving an 18.16 database to the current schema).
 */
export type SchemaFamily = 'legacy' | 'current';

interface ServerVersion {
  text: string;
  major: number;
  minor: number;
}

/** The first release the current schema is built for: DateTime64 over 0001..9999, insert tokens, TTL. */
const CURRENT_SCHEMA_SINCE = { major: 24, minor: 8 } as const;

export function parseServerVersion(text: string): ServerVersion {
  const m = /^(\d+)\.(\d+)/.exec(text);
  if (m === null) throw new Error(`cannot read ClickHouse version ${JSON.stringify(text)}`);
  return { text, major: Number(m[1]), minor: Number(m[2]) };
}

/** True from 24.8 on: the current schema, and exactly-once inserts. */
export function isCurrentRelease(v: ServerVersion): boolean {
  return v.major > CURRENT_SCHEMA_SINCE.major || (v.major === CURRENT_SCHEMA_SINCE.major && v.minor >= CURRENT_SCHEMA_SINCE.minor);
}

async function serverVersion(client: ClickHouseClient): Promise<ServerVersion> {
  const result = await client.query({ query: 'SELECT version() AS v', format: 'JSONEachRow' });
  const [row] = await result.json<{ v: string }>();
  return parseServerVersion(row?.v ?? '');
}

/** The schema a database holds (from `schema_migrations` and `events`), null when it has none yet. */
export async function existingFamily(client: ClickHouseClient, database: string): Promise<SchemaFamily | null> {
  // system.columns works on 18.16 and current releases alike, and needs no table to exist.
  const result = await client.query({
    query: `SELECT name FROM system.columns WHERE database = ${quoteString(database)} AND table = 'events' AND name IN ('event_time_ms', 'event_time')`,
    format: 'JSONEachRow',
  });
  const names = new Set((await result.json<{ name: string }>()).map((r) => r.name));
  if (names.has('event_time_ms')) return 'legacy';
  if (names.has('event_time')) return 'current';
  return null;
}

/** What a worker or store needs to know about the database it writes or reads. */
interface SchemaChoice {
  family: SchemaFamily;
  server: ServerVersion;
  /** The server deduplicates inserts by token (current releases), so the worker sends one. */
  exactlyOnce: boolean;
}

async function chooseFamily(client: ClickHouseClient, database: string): Promise<SchemaChoice> {
  const server = await serverVersion(client);
  const current = isCurrentRelease(server);
  const existing = await existingFamily(client, database);
  if (existing === 'current' && !current) throw new Error(`database ${database} holds the current schema, which ClickHouse ${server.text} cannot read (needs 24.8 or later)`);
  return { family: existing ?? (current ? 'current' : 'legacy'), server, exactlyOnce: current };
}

interface SchemaOptions {
  /** Days `events` and `arrivals` keep rows (by receipt time) in the current schema; 0 keeps all. */
  retentionDays: number;
  /** A client for migration statements that may outlast the request timeout (MigrationContext). */
  longStatements?: ClickHouseClient;
  /** Progress of a long migration. */
  log?: MigrationLog;
}

export interface EnsuredSchema extends SchemaChoice, MigrationResult {}

/** Chooses the schema, applies its migrations (and, current schema, the retention TTL). */
export async function ensureSchema(client: ClickHouseClient, database: string, options: SchemaOptions): Promise<EnsuredSchema> {
  const choice = await chooseFamily(client, database);
  const result = await migrate(client, database, choice.family === 'current' ? CURRENT_MIGRATIONS : MIGRATIONS, {
    ...(options.longStatements === undefined ? {} : { longStatements: options.longStatements }),
    ...(options.log === undefined ? {} : { log: options.log }),
  });
  if (choice.family === 'current') await applyRetention(client, database, options.retentionDays);
  else await finishMoveOrSay(client, database, options);
  return { ...choice, ...result };
}

/**
 * 18.16 schema: what migration 3 left to do (a move cut short, the former table's drop put off),
 * done at this start. A user without DDL (the worker's own, docs/security.md) cannot: it is said,
 * and the worker starts anyway (events go to the new table; the months not moved yet are missing
 * from `events` until the migrations user runs `npm run worker -- --migrate`).
 */
async function finishMoveOrSay(client: ClickHouseClient, database: string, options: SchemaOptions): Promise<void> {
  try {
    await finishMove(client, database, {
      ...(options.longStatements === undefined ? {} : { longStatements: options.longStatements }),
      onMoved: (moved) => options.log?.({ database, ...moved }, 'moved device months of events into the table partitioned by the month received'),
    });
  } catch (err) {
    options.log?.({ database, err: errorMessage(err) }, `${FORMER_EVENTS} still holds events not moved to events; run npm run worker -- --migrate as the migrations user`, 'warn');
  }
}

/** How a family's rows are encoded and partitioned. */
export interface FamilyRows {
  codec: EventRowCodec;
  /** The instant (epoch ms) an event's partition is the month of: its receipt (both schemas; 18.16 since migration 3). */
  partitionInstant: (event: { eventTime: { epochMs: number }; receivedAt: number }) => number;
  /** The partition (yyyymm) of that instant: inserts are split so no block spans too many. */
  partitionOfInstant: (epochMs: number) => number;
}

const utcMonth = (epochMs: number): number => {
  const d = new Date(epochMs);
  return d.getUTCFullYear() * 100 + d.getUTCMonth() + 1;
};

export const FAMILY_ROWS: Readonly<Record<SchemaFamily, FamilyRows>> = {
  legacy: { codec: EVENT_ROWS, partitionInstant: (e) => e.receivedAt, partitionOfInstant: partitionMonth },
  current: { codec: CURRENT_ROWS, partitionInstant: (e) => e.receivedAt, partitionOfInstant: utcMonth },
};

