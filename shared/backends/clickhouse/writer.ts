import type { ClickHouseClient } from './client.js';
import { partitionMonth, type EventRow } from './rows.js';
import { quoteIdentifier } from './sql.js';

/**
 * Current releases refuse an INSERT block that touches more than `max_partitions_per_insert_block`
 * (default 100) partitions; 18.16 does not know the setting. A batch whose event times span more
 * months than this (devices with wrong clocks do that) is split, by month, into several inserts.
 */
export const MAX_PARTITIONS_PER_INSERT = 100;

export interface InsertRow {
  row: EventRow;
  /** The epoch ms the row is partitioned by (its event time). */
  eventTimeMs: number;
}

/** Groups rows so no group spans more than `maxPartitions` months; one group when it fits. */
export function splitByPartition(rows: readonly InsertRow[], maxPartitions = MAX_PARTITIONS_PER_INSERT): EventRow[][] {
  const byMonth = new Map<number, EventRow[]>();
  for (const r of rows) {
    const month = partitionMonth(r.eventTimeMs);
    let list = byMonth.get(month);
    if (list === undefined) byMonth.set(month, (list = []));
    list.push(r.row);
  }
  if (byMonth.size <= maxPartitions) return rows.length === 0 ? [] : [rows.map((r) => r.row)];
  const months = [...byMonth.keys()].sort((a, b) => a - b);
  const groups: EventRow[][] = [];
  for (let i = 0; i < months.length; i += maxPartitions) {
    groups.push(months.slice(i, i + maxPartitions).flatMap((m) => byMonth.get(m)!));
  }
  return groups;
}

/** Inserts event rows into `db`.`events` with JSONEachRow (the one JSON input format 18.16 has). */
export class ClickHouseEventWriter {
  private readonly table: string;

  constructor(
    private readonly client: ClickHouseClient,
    database: string,
  ) {
    this.table = `${quoteIdentifier(database)}.events`;
  }

  /**
   * Resolves once every row is stored. On failure some groups may be stored already: retrying the
   * whole batch is safe, the table collapses rows with the same id (ReplacingMergeTree).
   */
  async insert(rows: readonly InsertRow[]): Promise<void> {
    for (const group of splitByPartition(rows)) {
      await this.client.insert({ table: this.table, values: group, format: 'JSONEachRow' });
    }
  }
}
