import type { EventRecord } from '../../shared/backends/types.js';

export interface RecordSeries {
  /** eventTime of the n-th record is eventTimeBase + n * stepMs. */
  eventTimeBase: number;
  stepMs: number;
  receivedAt: number;
  /** dedupeKey of the n-th record is `${dedupePrefix}${n}`. */
  dedupePrefix: string;
}

/** A factory of valid, distinct EventRecords for store-level tests; overrides win. */
export function eventRecords(series: RecordSeries): (overrides?: Partial<EventRecord>) => EventRecord {
  let serial = 0;
  return (overrides = {}) => {
    serial++;
    return {
      systemUser: 'acme',
      dominio: 'AB123CD',
      nroSerie: 'SN-1',
      codigo: '1',
      latitud: -34.6,
      longitud: -58.4,
      altitud: 25,
      velocidad: 60.5,
      rumbo: 90,
      validPosition: true,
      valido: null,
      eventTimeText: '2024-05-01T09:00:00',
      eventTime: { epochMs: series.eventTimeBase + serial * series.stepMs, subMsTicks: 0 },
      receptionTimeText: null,
      receptionTime: null,
      receivedAt: series.receivedAt,
      crudo: null,
      sensors: [],
      operation: 'LoginYInsertarEvento',
      dedupeKey: `${series.dedupePrefix}${serial}`,
      ...overrides,
    };
  };
}
