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
const isString = (v: unknown): boolean => typeof v === 'string';
const isFinite = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const orNull = (check: (v: unknown) => boolean) => (v: unknown): boolean => v === null || check(v);

/** Whole epoch milliseconds plus 0-9999 ticks of 100 ns, as EventInstant. */
function isInstant(v: unknown): boolean {
  if (!isObject(v)) return false;
  const { epochMs, subMsTicks } = v;
  return Number.isSafeInteger(epochMs) && Number.isInteger(subMsTicks) && (subMsTicks as number) >= 0 && (subMsTicks as number) <= 9999;
}

const FIELD_CHECKS: readonly [keyof EventRecord, (v: unknown) => boolean, string][] = [
  ['systemUser', isString, 'a string'],
  ['dominio', isString, 'a string'],
  ['nroSerie', isString, 'a string'],
  ['codigo', isString, 'a string'],
  ['eventTimeText', isString, 'a string'],
  ['operation', isString, 'a string'],
  ['dedupeKey', isString, 'a string'],
  ['latitud', isFinite, 'a number'],
  ['longitud', isFinite, 'a number'],
  ['altitud', isFinite, 'a number'],
  ['velocidad', isFinite, 'a number'],
  ['rumbo', orNull(isFinite), 'a number or null'],
  ['validPosition', (v) => typeof v === 'boolean', 'a boolean'],
  ['valido', orNull((v) => typeof v === 'boolean'), 'a boolean or null'],
  ['eventTime', isInstant, 'an instant'],
  ['receptionTime', orNull(isInstant), 'an instant or null'],
  ['receptionTimeText', orNull(isString), 'a string or null'],
  ['crudo', orNull(isString), 'a string or null'],
  ['receivedAt', Number.isSafeInteger, 'whole epoch ms'],
];

/** Why `e` is not an EventRecord a store can hold, or null when it is. */
function eventProblem(e: Record<string, unknown>): string | null {
  for (const [field, check, expected] of FIELD_CHECKS) if (!check(e[field])) return `event field ${field} is not ${expected}`;
  if (!Array.isArray(e.sensors)) return 'event field sensors is not a list';
  for (const sensor of e.sensors as unknown[]) {
    if (!isObject(sensor) || !isString(sensor.clave) || !isString(sensor.valor)) return 'a sensor is not a string clave with a string valor';
  }
  return null;
}

/**
 * Parses and checks a message: every field a store needs, so a message that passes can always
 * be stored (one that could not would be refused by the INSERT on every retry and block its
 * partition). Throws WireFormatError with a clear reason for anything else.
 */
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
  const problem = eventProblem(e);
  if (problem !== null) throw new WireFormatError(problem);
  return { id: BigInt(parsed.id), event: e as unknown as EventRecord };
}
