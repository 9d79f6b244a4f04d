import type { EventRecord } from './schema.js';
import { EVENT_FIELD_LIST, invalidField, isFieldValue, recordCheck, type EventField } from './schema.js';

/**
 * The event as it travels on the Kafka topic: the accepted record plus its id. JSON, one
 * message per event, keyed by provider and Dominio so one vehicle's events stay in order.
 * `event` holds one key per entry of EVENT_FIELDS (schema.ts), under its wire name.
 *
 * `v` versions the format; readers refuse versions they do not know. A field added to the table
 * (`addedLater`) keeps the version: readers fill in its zero for messages written before it, and
 * readers that predate it ignore it. Only a change old readers would misread (a field renamed,
 * retyped or dropped) needs a new version, and then decodeEvent keeps reading the old one.
 * test/fixtures/events/ holds messages of every version, which must always decode.
 */
export const WIRE_VERSION = 1;

export interface EventMessage {
  v: number;
  /** The 64-bit id, as decimal text (JSON numbers lose precision past 2^53). */
  id: string;
  /** The record: one key per field, under its wire name. */
  event: object;
}

export function messageKey(record: Pick<EventRecord, 'systemUser' | 'dominio'>): string {
  return `${record.systemUser}|${record.dominio}`;
}

export class WireFormatError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface EventWireCodec {
  encode(id: bigint, event: EventRecord): Buffer;
  decode(data: Buffer | string): { id: bigint; event: EventRecord };
}

/** The message codec of a field table (EVENT_FIELD_LIST; tests pass others). */
export function eventWireCodec(fields: readonly EventField[]): EventWireCodec {
  // Wire names equal field names (true of every field today): a record is its own `event`, written
  // and read as it is, with no copy per message.
  const sameNames = fields.every((f) => f.wire === f.name);

  function toWire(event: EventRecord): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const f of fields) out[f.wire] = event[f.name];
    return out;
  }

  const valid = recordCheck(fields, (f) => f.wire);

  /** The record in a message's `event`, or why it is not one a store can hold. */
  function fromWire(e: Record<string, unknown>): EventRecord | string {
    // Every message of this release passes at once, taken as it is.
    if (sameNames && valid(e)) return e as EventRecord;
    const record: Record<string, unknown> = sameNames ? e : {};
    for (const f of fields) {
      let value = e[f.wire];
      if (value === undefined && f.whenAbsent !== undefined) value = structuredClone(f.whenAbsent);
      if (!isFieldValue(f, value)) return invalidField(f, value, f.wire);
      record[f.name] = value;
    }
    return record as EventRecord;
  }

  return {
    encode(id, event) {
      const message: EventMessage = { v: WIRE_VERSION, id: id.toString(), event: sameNames ? event : toWire(event) };
      return Buffer.from(JSON.stringify(message));
    },

    decode(data) {
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
      const event = fromWire(e);
      if (typeof event === 'string') throw new WireFormatError(event);
      return { id: BigInt(parsed.id), event };
    },
  };
}

const EVENTS = eventWireCodec(EVENT_FIELD_LIST);

export function encodeEvent(id: bigint, event: EventRecord): Buffer {
  return EVENTS.encode(id, event);
}

/**
 * Parses and checks a message: every field a store needs, so a message that passes can always
 * be stored (one that could not would be refused by the INSERT on every retry and block its
 * partition). Throws WireFormatError with a clear reason for anything else.
 */
export function decodeEvent(data: Buffer | string): { id: bigint; event: EventRecord } {
  return EVENTS.decode(data);
}
