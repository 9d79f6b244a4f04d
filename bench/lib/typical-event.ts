import { exampleEventRecord, type EventRecord } from '../../shared/events/schema.js';

/**
 * A typical LoginYInsertarEvento2 event (a raw NMEA line, two sensors), the i-th of a run: 20
 * providers, 5,000 vehicles, distinct times. The codec and hand-off benches measure on it;
 * `overrides` for what a bench varies besides.
 */
export function typicalEvent(i: number, overrides: Partial<EventRecord> = {}): EventRecord {
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
