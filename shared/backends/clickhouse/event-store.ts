import type { EventQuery, EventStore, StoredEvent } from '../types.js';
import type { ClickHouseClient } from './client.js';
import { fromRow, STORED_COLUMNS, type StoredRow } from './rows.js';
import { quoteIdentifier, quoteString, sqlUInt } from './sql.js';

/**
 * Read side of the analysts' store: the latest events by id, one row per id.
 *
 * A replayed Kafka message can be stored twice until ClickHouse merges the parts
 * (ReplacingMergeTree), so reads deduplicate with `LIMIT 1 BY id`. The newest ids are chosen
 * first reading only the `id` column, then only those rows are read whole.
 */
export class ClickHouseEventStore implements EventStore {
  private readonly table: string;

  constructor(
    private readonly client: ClickHouseClient,
    database: string,
  ) {
    this.table = `${quoteIdentifier(database)}.events`;
  }

  /** The SQL `recent(query)` runs; null when the query asks for nothing (limit 0). */
  static sql(table: string, query: EventQuery): string | null {
    const unlimited = query.limit === Infinity;
    const limit = unlimited ? 0 : Math.floor(query.limit);
    if (!unlimited && !(limit > 0)) return null;
    const conditions: string[] = [];
    if (query.provider !== undefined) conditions.push(`system_user = ${quoteString(query.provider)}`);
    if (query.dominio !== undefined) conditions.push(`dominio = ${quoteString(query.dominio)}`);
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    const columns = STORED_COLUMNS.join(', ');
    if (unlimited) return `SELECT ${columns} FROM ${table} ${where} ORDER BY id DESC LIMIT 1 BY id`;
    const n = sqlUInt(limit);
    const inner = `SELECT DISTINCT id FROM ${table} ${where} ORDER BY id DESC LIMIT ${n}`;
    const filter = conditions.length === 0 ? `WHERE id IN (${inner})` : `${where} AND id IN (${inner})`;
    return `SELECT ${columns} FROM ${table} ${filter} ORDER BY id DESC LIMIT 1 BY id LIMIT ${n}`;
  }

  async recent(query: EventQuery): Promise<StoredEvent[]> {
    const sql = ClickHouseEventStore.sql(this.table, query);
    if (sql === null) return [];
    const result = await this.client.query({
      query: sql,
      format: 'JSONEachRow',
      clickhouse_settings: { output_format_json_quote_64bit_integers: 1 },
    });
    const rows = await result.json<StoredRow>();
    return rows.map(fromRow);
  }
}
