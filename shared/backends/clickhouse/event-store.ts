import { ClickHouseError } from '@clickhouse/client';
import { ACTIVITY_BUCKET_MS, BackendUnavailableError, type EventActivity, type EventQuery, type EventStore, type StoredEvent } from '../types.js';
import type { ClickHouseClient } from './client.js';
import { FAMILY_ROWS, existingFamily, type SchemaFamily } from './family.js';
import { EVENT_ROWS, type EventRowCodec, type StoredRow } from './rows.js';
import { quoteIdentifier, quoteString, sqlUInt } from './sql.js';
import { errorMessage } from '../../util/error-message.js';

/**
 * Read side of the analysts' store: the latest events by id, one row per id.
 *
 * A replayed Kafka message can be stored twice until ClickHouse merges the parts
 * (ReplacingMergeTree), so reads deduplicate with `LIMIT 1 BY id`. The newest ids are chosen
 * first reading only the `id` column, then only those rows are read whole. Which schema the
 * database holds (18.16's or the current one, family.ts) is read once from its columns.
 */
export class ClickHouseEventStore implements EventStore {
  private readonly table: string;
  private readonly db: string;
  private family: SchemaFamily | null = null;

  constructor(
    private readonly client: ClickHouseClient,
    private readonly database: string,
  ) {
    this.db = quoteIdentifier(database);
    this.table = `${this.db}.events`;
  }

  /** The SQL `recent(query)` runs; null when the query asks for nothing (limit 0). */
  static sql(table: string, query: EventQuery, codec: EventRowCodec = EVENT_ROWS): string | null {
    const unlimited = query.limit === Infinity;
    const limit = unlimited ? 0 : Math.floor(query.limit);
    if (!unlimited && !(limit > 0)) return null;
    const conditions: string[] = [];
    if (query.provider !== undefined) conditions.push(`system_user = ${quoteString(query.provider)}`);
    if (query.dominio !== undefined) conditions.push(`dominio = ${quoteString(query.dominio)}`);
    if (query.beforeId !== undefined) conditions.push(`id < ${sqlUInt(query.beforeId)}`);
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    const columns = codec.storedColumns.join(', ');
    if (unlimited) return `SELECT ${columns} FROM ${table} ${where} ORDER BY id DESC LIMIT 1 BY id`;
    const n = sqlUInt(limit);
    const inner = `SELECT DISTINCT id FROM ${table} ${where} ORDER BY id DESC LIMIT ${n}`;
    const filter = conditions.length === 0 ? `WHERE id IN (${inner})` : `${where} AND id IN (${inner})`;
    return `SELECT ${columns} FROM ${table} ${filter} ORDER BY id DESC LIMIT 1 BY id LIMIT ${n}`;
  }

  /** From the `arrivals` aggregate and `latest_positions`, both small: never a scan of `events`. */
  async activity(since: number): Promise<EventActivity> {
    const from = sqlUInt(Math.floor(Math.max(0, since) / ACTIVITY_BUCKET_MS) * (ACTIVITY_BUCKET_MS / 1000));
    const [buckets, counts, latest] = await Promise.all([
      this.rows<{ bucket: number; events: string }>(
        `SELECT bucket, sum(events) AS events FROM ${this.db}.arrivals WHERE bucket >= ${from} GROUP BY bucket ORDER BY bucket`,
      ),
      this.rows<{ system_user: string; events: string; last_bucket: number }>(
        `SELECT system_user, sum(events) AS events, max(bucket) AS last_bucket FROM ${this.db}.arrivals WHERE bucket >= ${from} GROUP BY system_user`,
      ),
      this.rows<{ system_user: string; last: number }>(
        `SELECT system_user, toUInt32(max(received_at)) AS last FROM ${this.db}.latest_positions GROUP BY system_user`,
      ),
    ]);
    const last = new Map(latest.map((r) => [r.system_user, r.last * 1000]));
    const providers = new Map<string, EventActivity['providers'][number]>();
    for (const r of counts) {
      const lastEventAt = Math.max(last.get(r.system_user) ?? 0, r.last_bucket * 1000);
      providers.set(r.system_user, { systemUser: r.system_user, events: Number(r.events), lastEventAt });
    }
    for (const [systemUser, at] of last) if (!providers.has(systemUser)) providers.set(systemUser, { systemUser, events: 0, lastEventAt: at });
    return { buckets: buckets.map((b) => ({ at: b.bucket * 1000, events: Number(b.events) })), providers: [...providers.values()] };
  }

  private async rows<T>(query: string): Promise<T[]> {
    const result = await this.client.query({ query, format: 'JSONEachRow' }).catch(unreachable);
    return result.json<T>();
  }

  /** The row codec of the database's schema; 18.16's until `events` exists (then nothing is read). */
  private async codec(): Promise<EventRowCodec> {
    this.family ??= await existingFamily(this.client, this.database).catch(unreachable);
    return FAMILY_ROWS[this.family ?? 'legacy'].codec;
  }

  async recent(query: EventQuery): Promise<StoredEvent[]> {
    const codec = await this.codec();
    const sql = ClickHouseEventStore.sql(this.table, query, codec);
    if (sql === null) return [];
    const result = await this.client
      .query({
        query: sql,
        format: 'JSONEachRow',
        clickhouse_settings: { output_format_json_quote_64bit_integers: 1 },
      })
      .catch(unreachable);
    const rows = await result.json<StoredRow>();
    return rows.map((row) => codec.fromRow(row));
  }
}

/**
 * ClickHouse answered with an error: a bug in the query, passed on. Anything else (refused,
 * timed out, reset) means it cannot be reached: the admin API answers 503, retry later.
 */
function unreachable(err: unknown): never {
  if (err instanceof ClickHouseError) throw err;
  throw new BackendUnavailableError(`ClickHouse cannot be reached: ${errorMessage(err)}`, { cause: err });
}
