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

/**
 * The sample event of tests and benches: a typical LoginYInsertarEvento2 event (a raw NMEA line,
 * two sensors), the i-th of a run: 20 providers, 5,000 vehicles, distinct times. Every field not
 * set here is the table's example (shared/events/schema.ts), so a field added to EVENT_FIELDS
 * needs no edit here or in its users; `overrides` for what a test or bench varies besides.
 */
export function sampleEvent(i: number, overrides: Partial<EventRecord> = {}): EventRecord {
  return {
    ...exampleEventRecord(),
    systemUser: `provider${i % 20}`,
    dominio: `AB${String(i % 5000).padStart(3, '0')}CD`,
    nroSerie: `SN-${i % 5000}`,
    rumbo: 180,
    valido: true,
    eventTimeText: '2024-05-01T09:00:00.123',
    eventTime: { epochMs: 1_714_554_000_000 + i, subMsTicks: i % 10_000 },
    receptionTimeText: '2024-05-01T09:00:01',
    receptionTime: { epochMs: 1_714_554_001_000 + i, subMsTicks: 0 },
    crudo: '$GPRMC,123519,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W*6A',
    sensors: [
      { clave: 'ign', valor: '1' },
      { clave: 'temp', valor: '21.5' },
    ],
    operation: 'LoginYInsertarEvento2',
    dedupeKey: `bench-${i}`,
    ...overrides,
  };
}
