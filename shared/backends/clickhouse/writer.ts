import { Readable } from 'node:stream';
import type { ClickHouseSettings } from '@clickhouse/client';
import type { EventRecord } from '../types.js';
import type { ClickHouseClient } from './client.js';
import { FAMILY_ROWS, type SchemaFamily } from './family.js';
import type { EventRow } from './rows.js';
import { quoteIdentifier } from './sql.js';
import { toTabSeparated } from './tsv.js';

/** How rows travel to ClickHouse; both are text every release reads (bench:worker compares them). */
export type InsertFormat = 'JSONEachRow' | 'TabSeparated';

/**
 * Current releases refuse an INSERT block that touches more than `max_partitions_per_insert_block`
 * (default 100) partitions; 18.16 does not know the setting. A batch whose rows span more
 * partitions than this (18.16 schema: devices with wrong clocks) is split into several inserts.
 */
export const MAX_PARTITIONS_PER_INSERT = 100;

export interface InsertRow {
  row: EventRow;
  /** The partition the row lands in (a yyyymm month). */
  partition: number;
}

/** Groups rows so no group spans more than `maxPartitions` partitions; one group when it fits. */
export function splitByPartition(rows: readonly InsertRow[], maxPartitions = MAX_PARTITIONS_PER_INSERT): EventRow[][] {
  const byPartition = new Map<number, EventRow[]>();
  for (const r of rows) {
    let list = byPartition.get(r.partition);
    if (list === undefined) byPartition.set(r.partition, (list = []));
    list.push(r.row);
  }
  if (byPartition.size <= maxPartitions) return rows.length === 0 ? [] : [rows.map((r) => r.row)];
  const keys = [...byPartition.keys()].sort((a, b) => a - b);
  const groups: EventRow[][] = [];
  for (let i = 0; i < keys.length; i += maxPartitions) {
    groups.push(keys.slice(i, i + maxPartitions).flatMap((k) => byPartition.get(k)!));
  }
  return groups;
}

export interface WriterOptions {
  /** The schema the database holds (family.ts). Default: 18.16's. */
  family?: SchemaFamily;
  /** The server deduplicates by insert token (24.8+): send async_insert=0 and each insert's token. */
  exactlyOnce?: boolean;
  /** Default TabSeparated (measured faster: bench/RESULTS.md §The analysts' ClickHouse schemas). */
  format?: InsertFormat;
}

/**
 * The settings of one insert on a current release: synchronous (since 26.2 `async_insert`
 * defaults to 1, which would buffer the rows server-side and answer before they are stored),
 * deduplicated by `token`, in the table and in the materialized views' tables it feeds, and
 * decimal texts parsed to the nearest double.
 */
export function currentInsertSettings(token: string | null): ClickHouseSettings {
  return {
    async_insert: 0,
    insert_deduplicate: 1,
    deduplicate_blocks_in_dependent_materialized_views: 1,
    precise_float_parsing: 1,
    // An empty token means none (a session-keeping transport, like chdb's, would otherwise reuse the last one).
    insert_deduplication_token: token ?? '',
  };
}

/** Inserts event rows into `db`.`events`, as TabSeparated (or JSONEachRow, the one JSON input format 18.16 has). */
export class ClickHouseEventWriter {
  private readonly table: string;
  readonly family: SchemaFamily;
  readonly exactlyOnce: boolean;
  readonly format: InsertFormat;

  constructor(
    private readonly client: ClickHouseClient,
    database: string,
    options: WriterOptions = {},
  ) {
    this.table = `${quoteIdentifier(database)}.events`;
    this.family = options.family ?? 'legacy';
    this.exactlyOnce = options.exactlyOnce ?? false;
    this.format = options.format ?? 'TabSeparated';
  }

  /** The rows of `events` in this writer's schema. */
  encode(events: readonly { id: bigint; event: EventRecord }[], storedAt: number): InsertRow[] {
    const { codec, partitionOf } = FAMILY_ROWS[this.family];
    return events.map(({ id, event }) => ({ row: codec.toRow(id, event, storedAt), partition: partitionOf(event) }));
  }

  /**
   * Resolves once every row is stored. `token` names this set of rows for good (the same rows
   * always get the same token, see worker/batch.ts): on a current release a retry of an insert
   * that was stored is dropped by ClickHouse. On 18.16 some groups may be stored already when it
   * fails: retrying the whole batch is still safe, the table collapses rows with the same id
   * (ReplacingMergeTree).
   */
  async insert(rows: readonly InsertRow[], token: string | null = null): Promise<void> {
    const groups = splitByPartition(rows);
    for (let i = 0; i < groups.length; i++) {
      const groupToken = token === null ? null : groups.length === 1 ? token : `${token}/${i}`;
      const group = groups[i]!;
      const settings = this.exactlyOnce ? { clickhouse_settings: currentInsertSettings(groupToken) } : {};
      if (this.format === 'JSONEachRow') {
        await this.client.insert({ table: this.table, values: group, format: 'JSONEachRow', ...settings });
      } else {
        // Named columns: a field added later sits after stored_at in an older table.
        const columns = Object.keys(group[0]!);
        const values = Readable.from([Buffer.from(toTabSeparated(group, columns))], { objectMode: false });
        await this.client.insert({ table: this.table, values, columns: columns as [string, ...string[]], format: 'TabSeparated', ...settings });
      }
    }
  }
}
