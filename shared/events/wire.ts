import type { EventRecord } from '../backends/types.js';

/**
 * The event as it travels on the Kafka topic: the accepted record plus its id. JSON, one
 * message per event, keyed by provider and Dominio so one vehicle's events stay in order.
 * `v` versions the format; readers refuse versions they do not know.
 */
export const WIRE_VERSION = 1;

export interface EventMessage {
  v: number;
  /** The 64-bit id, as decimal text (JSON numbers lose precision past 2^53). */
  id: string;
  event: EventRecord;
}

export function messageKey(record: Pick<EventRecord, 'systemUser' | 'dominio'>): string {
  return `${record.systemUser}|${record.dominio}`;
}

export function encodeEvent(id: bigint, event: EventRecord): Buffer {
  const message: EventMessage = { v: WIRE_VERSION, id: id.toString(), event };
  return Buffer.from(JSON.stringify(message));
}

export class WireFormatError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses and checks a message; throws WireFormatError with a clear reason for anything else. */
export function decodeEvent(data: Buffer | string): { id: bigint; event: EventRecord } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof data === 'string' ? data : data.toString('utf8'));
  } catch {
    throw new WireFormatError('event message is not JSON');
  }
  if (!isObject(parsed)) throw new WireFormatError('event message is not an object');
  if (parsed.v !== WIRE_VERSION) throw new WireFormatError(`unknown event message version ${String(parsed.v)}`);
  if (typeof parsed.id !== 'string' || !/^[1-9]\d{0,19}$/.test(parsed.id)) throw new WireFormatError('event message has no valid id');
  const e = parsed.event;
  if (!isObject(e)) throw new WireFormatError('event message has no event');
  const strings = ['systemUser', 'dominio', 'nroSerie', 'codigo', 'eventTimeText', 'operation', 'dedupeKey'] as const;
  for (const k of strings) if (typeof e[k] !== 'string') throw new WireFormatError(`event field ${k} is not a string`);
  const numbers = ['latitud', 'longitud', 'altitud', 'velocidad', 'receivedAt'] as const;
  for (const k of numbers) if (typeof e[k] !== 'number' || !Number.isFinite(e[k])) throw new WireFormatError(`event field ${k} is not a number`);
  const instant = e.eventTime;
  if (!isObject(instant) || typeof instant.epochMs !== 'number' || typeof instant.subMsTicks !== 'number') {
    throw new WireFormatError('event field eventTime is not an instant');
  }
  if (!Array.isArray(e.sensors)) throw new WireFormatError('event field sensors is not a list');
  return { id: BigInt(parsed.id), event: e as unknown as EventRecord };
}
