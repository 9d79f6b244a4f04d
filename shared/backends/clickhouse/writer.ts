import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { ClickHouseSettings } from '@clickhouse/client';
import type { EventRecord } from '../types.js';
import type { ClickHouseClient } from './client.js';
import { FAMILY_ROWS, type FamilyRows, type SchemaFamily } from './family.js';
import type { EventRow } from './rows.js';
import { encodeRowBinary, ROW_BINARY } from './row-binary.js';
import { quoteIdentifier, quoteString } from './sql.js';
import { toTabSeparated } from './tsv.js';

/**
 * How rows travel to ClickHouse. RowBinary (the default) is written straight from the records
 * and costs the worker and the server the least per row (bench:worker); the two text formats stay
 * for comparison and for rows built by hand (insertRows).
 */
export type InsertFormat = 'RowBinary' | 'TabSeparated' | 'JSONEachRow';

/**
 * How a RowBinary body reaches the server: as the HTTP request's body, or as a file the INSERT
 * reads (`FROM INFILE`): chdb's in-process transport turns request bodies into text, which would
 * corrupt binary rows, but it reads files as they are.
 */
export type BinaryBodies = 'request' | 'file';

/**
 * Current releases refuse an INSERT block that touches more than `max_partitions_per_insert_block`
 * (default 100) partitions; 18.16 does not know the setting. Both schemas partition by the month
 * received, so a batch spans one or two; one that spans more (rows inserted by hand) is split into
 * several inserts.
 */
const MAX_PARTITIONS_PER_INSERT = 100;

interface InsertRow<T = EventRow> {
  row: T;
  /** The partition the row lands in (a yyyymm month). */
  partition: number;
}

/** Groups rows so no group spans more than `maxPartitions` partitions; one group when it fits. */
export function splitByPartition<T>(rows: readonly InsertRow<T>[], maxPartitions = MAX_PARTITIONS_PER_INSERT): T[][] {
  const byPartition = new Map<number, T[]>();
  for (const r of rows) {
    let list = byPartition.get(r.partition);
    if (list === undefined) byPartition.set(r.partition, (list = []));
    list.push(r.row);
  }
  if (byPartition.size <= maxPartitions) return rows.length === 0 ? [] : [rows.map((r) => r.row)];
  const keys = [...byPartition.keys()].sort((a, b) => a - b);
  const groups: T[][] = [];
  for (let i = 0; i < keys.length; i += maxPartitions) {
    groups.push(keys.slice(i, i + maxPartitions).flatMap((k) => byPartition.get(k)!));
  }
  return groups;
}

type SourceEvent = { id: bigint; event: EventRecord };

/** A batch encoded for insert: one body (RowBinary) or row list (text) per INSERT statement. */
type EncodedBatch = { rows: number } & ({ format: 'RowBinary'; groups: Buffer[] } | { format: 'TabSeparated' | 'JSONEachRow'; groups: EventRow[][] });

interface WriterOptions {
  /** The schema the database holds (family.ts). Default: 18.16's. */
  family?: SchemaFamily;
  /** The server deduplicates by insert token (24.8+): send async_insert=0 and each insert's token. */
  exactlyOnce?: boolean;
  /** Default RowBinary (measured cheapest: bench/RESULTS.md §The worker alone). */
  format?: InsertFormat;
  /** Default 'request'; 'file' for chdb's in-process connection (see BinaryBodies). */
  binaryBodies?: BinaryBodies;
}

/**
 * The settings of one insert on a current release: synchronous (since 26.2 `async_insert`
 * defaults to 1, which would buffer the rows server-side and answer before they are stored),
 * deduplicated by `token`, in the table and in the materialized views' tables it feeds, and
 * decimal texts parsed to the nearest double.
 */
function currentInsertSettings(token: string | null): ClickHouseSettings {
  return {
    async_insert: 0,
    insert_deduplicate: 1,
    deduplicate_blocks_in_dependent_materialized_views: 1,
    precise_float_parsing: 1,
    // An empty token means none (a session-keeping transport, like chdb's, would otherwise reuse the last one).
    insert_deduplication_token: token ?? '',
  };
}

/** Inserts event rows into `db`.`events`: RowBinary by default, or one of the text formats. */
export class ClickHouseEventWriter {
  private readonly table: string;
  readonly family: SchemaFamily;
  readonly exactlyOnce: boolean;
  readonly format: InsertFormat;
  readonly binaryBodies: BinaryBodies;
  private fileSeq = 0;

  constructor(
    private readonly client: ClickHouseClient,
    database: string,
    options: WriterOptions = {},
  ) {
    this.table = `${quoteIdentifier(database)}.events`;
    this.family = options.family ?? 'legacy';
    this.exactlyOnce = options.exactlyOnce ?? false;
    this.format = options.format ?? 'RowBinary';
    this.binaryBodies = options.binaryBodies ?? 'request';
  }

  /** `events` encoded for insert in this writer's schema and format, split so no insert spans too many partitions. */
  encode(events: readonly SourceEvent[], storedAt: number): EncodedBatch {
    const { codec } = FAMILY_ROWS[this.family];
    const groups = partitionGroups(events, FAMILY_ROWS[this.family]);
    if (this.format === 'RowBinary') {
      const binary = ROW_BINARY[this.family];
      return { format: 'RowBinary', rows: events.length, groups: groups.map((g) => encodeRowBinary(binary, g, storedAt)) };
    }
    return { format: this.format, rows: events.length, groups: groups.map((g) => g.map(({ id, event }) => codec.toRow(id, event, storedAt))) };
  }

  /** Rows built elsewhere (a codec's toRow), inserted in this writer's text format (TabSeparated when it is RowBinary). */
  async insertRows(rows: readonly InsertRow[], token: string | null = null): Promise<void> {
    const format = this.format === 'RowBinary' ? 'TabSeparated' : this.format;
    await this.insert({ format, rows: rows.length, groups: splitByPartition(rows) }, token);
  }

  /**
   * Resolves once every row is stored. `token` names this set of rows for good (the same rows
   * always get the same token, see worker/batch.ts): on a current release a retry of an insert
   * that was stored is dropped by ClickHouse. On 18.16 some groups may be stored already when it
   * fails: retrying the whole batch is still safe, the table collapses rows with the same id
   * (ReplacingMergeTree).
   */
  async insert(batch: EncodedBatch, token: string | null = null): Promise<void> {
    const count = batch.groups.length;
    for (let i = 0; i < count; i++) {
      const groupToken = token === null ? null : count === 1 ? token : `${token}/${i}`;
      const settings = this.exactlyOnce ? { clickhouse_settings: currentInsertSettings(groupToken) } : {};
      if (batch.format === 'RowBinary') {
        await this.insertBinary(batch.groups[i]!, settings);
        continue;
      }
      const group = batch.groups[i]!;
      if (batch.format === 'JSONEachRow') {
        await this.client.insert({ table: this.table, values: group, format: 'JSONEachRow', ...settings });
      } else {
        // Named columns: a field added later sits after stored_at in an older table.
        const columns = Object.keys(group[0]!);
        const values = Readable.from([Buffer.from(toTabSeparated(group, columns))], { objectMode: false });
        await this.client.insert({ table: this.table, values, columns: columns as [string, ...string[]], format: 'TabSeparated', ...settings });
      }
    }
  }

  private async insertBinary(body: Buffer, settings: { clickhouse_settings?: ClickHouseSettings }): Promise<void> {
    // Named columns, as for text: a field added later sits after stored_at in an older table.
    const target = `${this.table} (${ROW_BINARY[this.family].columns.join(', ')})`;
    if (this.binaryBodies === 'file') {
      const file = path.join(os.tmpdir(), `clickhouse-rows-${process.pid}-${++this.fileSeq}.bin`);
      await writeFile(file, body);
      try {
        await this.client.command({ query: `INSERT INTO ${target} FROM INFILE ${quoteString(file)} FORMAT RowBinary`, ...settings });
      } finally {
        await rm(file, { force: true });
      }
      return;
    }
    const result = await this.client.exec({ query: `INSERT INTO ${target} FORMAT RowBinary`, values: Readable.from([body], { objectMode: false }), ...settings });
    // Read the (empty) answer to its end so the keep-alive socket goes back to the pool.
    result.stream.resume();
    await finished(result.stream);
  }
}

/** The events in groups of at most MAX_PARTITIONS_PER_INSERT partitions: one group, as they are, when they fit. */
function partitionGroups(events: readonly SourceEvent[], rows: Pick<FamilyRows, 'partitionInstant' | 'partitionOfInstant'>): (readonly SourceEvent[])[] {
  if (events.length === 0) return [];
  // Months are monotonic in time: when the earliest and latest instants are at most 100 months
  // apart, so are all of them (the usual batch, which this tells with a comparison per event).
  let min = Infinity;
  let max = -Infinity;
  for (const { event } of events) {
    const ms = rows.partitionInstant(event);
    if (ms < min) min = ms;
    if (ms > max) max = ms;
  }
  const monthIndex = (ms: number): number => {
    const yyyymm = rows.partitionOfInstant(ms);
    return Math.floor(yyyymm / 100) * 12 + (yyyymm % 100);
  };
  if (monthIndex(max) - monthIndex(min) < MAX_PARTITIONS_PER_INSERT) return [events];
  const partitionOf = (e: SourceEvent): number => rows.partitionOfInstant(rows.partitionInstant(e.event));
  const partitions = new Set(events.map(partitionOf));
  if (partitions.size <= MAX_PARTITIONS_PER_INSERT) return [events];
  return splitByPartition(events.map((e) => ({ row: e, partition: partitionOf(e) })));
}
