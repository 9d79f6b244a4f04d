import type { EventRecord } from '../shared/backends/types.js';

/**
 * What `decodeEvent` (shared/events/wire.ts) does not check but a ClickHouse row needs: a message
 * that fails here would be refused by the INSERT on every retry and block the partition, so it is
 * treated like an undecodable (poison) message. Returns the reason, or null when the record is fine.
 */
export function recordProblem(e: EventRecord): string | null {
  const rec = e as unknown as Record<string, unknown>;
  const isInstant = (v: unknown): boolean => {
    if (typeof v !== 'object' || v === null) return false;
    const { epochMs, subMsTicks } = v as Record<string, unknown>;
    return (
      typeof epochMs === 'number' &&
      Number.isSafeInteger(epochMs) &&
      typeof subMsTicks === 'number' &&
      Number.isInteger(subMsTicks) &&
      subMsTicks >= 0 &&
      subMsTicks <= 9999
    );
  };
  const nullable = (v: unknown, check: (x: unknown) => boolean): boolean => v === null || check(v);
  const finite = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
  const str = (v: unknown): boolean => typeof v === 'string';

  if (!nullable(rec.rumbo, finite)) return 'rumbo is not a number or null';
  if (typeof rec.validPosition !== 'boolean') return 'validPosition is not a boolean';
  if (!nullable(rec.valido, (v) => typeof v === 'boolean')) return 'valido is not a boolean or null';
  if (!isInstant(rec.eventTime)) return 'eventTime is not an instant';
  if (!nullable(rec.receptionTime, isInstant)) return 'receptionTime is not an instant or null';
  if (!nullable(rec.receptionTimeText, str)) return 'receptionTimeText is not a string or null';
  if (!nullable(rec.crudo, str)) return 'crudo is not a string or null';
  if (!Number.isSafeInteger(rec.receivedAt)) return 'receivedAt is not whole epoch ms';
  const sensors = rec.sensors;
  if (!Array.isArray(sensors)) return 'sensors is not a list';
  for (const s of sensors as unknown[]) {
    if (typeof s !== 'object' || s === null) return 'a sensor is not an object';
    const { clave, valor } = s as Record<string, unknown>;
    if (!str(clave) || !str(valor)) return 'a sensor has a non-string clave or valor';
  }
  return null;
}
