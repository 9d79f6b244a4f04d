import type { EventRecord } from '../../shared/backends/types.js';
import { exampleEventRecord } from '../../shared/events/schema.js';

export interface RecordSeries {
  /** eventTime of the n-th record is eventTimeBase + n * stepMs. */
  eventTimeBase: number;
  stepMs: number;
  receivedAt: number;
  /** dedupeKey of the n-th record is `${dedupePrefix}${n}`. */
  dedupePrefix: string;
}

/**
 * A factory of valid, distinct EventRecords for store-level tests: every field's example
 * (shared/events/schema.ts), times and dedupeKey from the series; overrides win.
 */
export function eventRecords(series: RecordSeries): (overrides?: Partial<EventRecord>) => EventRecord {
  let serial = 0;
  return (overrides = {}) => {
    serial++;
    return {
      ...exampleEventRecord(),
      eventTime: { epochMs: series.eventTimeBase + serial * series.stepMs, subMsTicks: 0 },
      receivedAt: series.receivedAt,
      dedupeKey: `${series.dedupePrefix}${serial}`,
      ...overrides,
    };
  };
}
