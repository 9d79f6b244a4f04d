import type { EventRecord } from './schema.js';
import { EVENT_FIELD_LIST, invalidField, isFieldValue, recordCheck, type EventField } from './schema.js';
import { binaryLayout, bufferSink, encodeGrowing, readerFactory, recordEncoder } from './binary.js';
import { protobufEncoder } from './protobuf.js';
import { protobufDecoder } from './protobuf-decode.js';
import { EVENT_PROTO_NUMBERS, positionalNumbers, PROTO_MESSAGE, PROTO_PACKAGE } from './protobuf-fields.js';

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
const WIRE_VERSION = 1;

/**
 * Version 2: the same record in the binary layout of binary.ts, smaller than JSON and cheaper to
 * write and read (bench/event-codec.ts). Byte 0 is 2 (a JSON message starts with `{`),
 * byte 1 the number of fields the writer knew, then the record (u64 id first). A field `addedLater`
 * keeps the version here too: the layout puts such fields last, so a message from a gateway that
 * predates one stops before it (its zero is filled in), and a reader that predates one stops
 * reading at the fields it knows.
 */
export const BINARY_WIRE_VERSION = 2;

/**
 * Version 3: the record as Protocol Buffers, a `VehicleEvent` of the shipped schema
 * (proto/prestadores/events/v1/events.proto; protobuf-fields.ts maps the fields): what other teams'
 * consumers read with a generated class (docs/events.md). The value is the bare message, no prefix,
 * so any protobuf reader takes it as it is; a reader tells the versions apart by the first byte:
 * `{` is JSON (v1), 2 is v2 (a protobuf message cannot start with it: field number 0), anything
 * else v3. A field added to the table keeps the version here too: it gets a new number, absent
 * (its zero) in older messages, skipped by older readers.
 */
export const PROTOBUF_WIRE_VERSION = 3;

/** The versions a gateway can write (EVENT_WIRE_VERSION). */
export type WireVersion = 1 | 2 | 3;

/**
 * The Kafka record headers of each version: what the value is, so a consumer needs no knowledge
 * from elsewhere (docs/events.md). One frozen object per version, shared by every record.
 */
export const WIRE_HEADERS: { readonly [V in WireVersion]: Readonly<Record<string, string>> } = {
  1: Object.freeze({ 'content-type': 'application/json' }),
  2: Object.freeze({ 'content-type': 'application/vnd.prestadores.event-record.v2' }),
  3: Object.freeze({ 'content-type': `application/x-protobuf; messageType=${PROTO_PACKAGE}.${PROTO_MESSAGE}` }),
};

interface EventMessage {
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

interface EventWireCodec {
  /** A message of `version` (default 1, JSON). */
  encode(id: bigint, event: EventRecord, version?: WireVersion): Buffer;
  /** Any version this release knows. */
  decode(data: Buffer | string): { id: bigint; event: EventRecord };
}

/**
 * The message codec of a field table (EVENT_FIELD_LIST; tests pass others), with the protobuf
 * field numbers of version 3 (by default 2, 3, ... in table order).
 */
export function eventWireCodec(fields: readonly EventField[], protoNumbers: Readonly<Record<string, number>> = positionalNumbers(fields)): EventWireCodec {
  // Wire names equal field names (true of every field today): a record is its own `event`, written
  // and read as it is, with no copy per message.
  const sameNames = fields.every((f) => f.wire === f.name);

  function toWire(event: EventRecord): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const f of fields) out[f.wire] = event[f.name];
    return out;
  }

  const valid = recordCheck(fields, (f) => f.wire);
  const binary = binaryCodec(fields);
  const protobuf = protobufCodec(fields, protoNumbers);

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
    encode(id, event, version = WIRE_VERSION) {
      if (version === PROTOBUF_WIRE_VERSION) return protobuf.encode(id, event);
      if (version === BINARY_WIRE_VERSION) return binary.encode(id, event);
      const message: EventMessage = { v: WIRE_VERSION, id: id.toString(), event: sameNames ? event : toWire(event) };
      return Buffer.from(JSON.stringify(message));
    },

    decode(data) {
      if (typeof data !== 'string' && data[0] !== JSON_START) return data[0] === BINARY_WIRE_VERSION ? binary.decode(data) : protobuf.decode(data);
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

/** The first byte of every JSON message (version 1). */
const JSON_START = 0x7b;

/**
 * The headers of the version a message is in, when this release can decode it; none otherwise
 * (a poison message re-driven as it is must not claim to be what it is not).
 */
export function wireHeadersOf(value: Buffer): Readonly<Record<string, string>> {
  try {
    decodeEvent(value);
  } catch {
    return {};
  }
  return WIRE_HEADERS[value[0] === JSON_START ? WIRE_VERSION : value[0] === BINARY_WIRE_VERSION ? BINARY_WIRE_VERSION : PROTOBUF_WIRE_VERSION];
}

/** Version 3 of a field table. */
function protobufCodec(fields: readonly EventField[], numbers: Readonly<Record<string, number>>): EventWireCodec {
  const encode = protobufEncoder(fields, numbers);
  const decode = protobufDecoder(fields, numbers, (reason) => {
    throw new WireFormatError(reason);
  });
  const valid = recordCheck(fields, (f) => f.name);
  return {
    encode,
    decode(data) {
      if (typeof data === 'string') throw new WireFormatError('event message of version 3 given as text');
      const { id, event } = decode(data);
      if (id === 0n) throw new WireFormatError('event message has no valid id');
      // Bytes make every type right; values still need checking (a NaN, epoch ms past 2^53).
      if (!valid(event)) {
        const f = fields.find((field) => !isFieldValue(field, event[field.name]))!;
        throw new WireFormatError(invalidField(f, event[f.name], f.wire));
      }
      return { id, event: event as unknown as EventRecord };
    },
  };
}

/** Version 2 of a field table: one reusable buffer to encode into (then copied out), one reader. */
function binaryCodec(fields: readonly EventField[]): EventWireCodec {
  const layout = binaryLayout(fields);
  if (layout.length > 255) throw new Error('the binary event message counts fields in one byte');
  const required = layout.filter((f) => f.whenAbsent === undefined).length;
  const encoder = recordEncoder(fields);
  const sink = bufferSink(1024);
  const reader = readerFactory(fields)(Buffer.alloc(0));
  const valid = recordCheck(fields, (f) => f.name);
  return {
    encode(id, event) {
      sink.buf[0] = BINARY_WIRE_VERSION;
      sink.buf[1] = layout.length;
      sink.pos = 2;
      encodeGrowing(sink, encoder, id, event);
      return Buffer.from(sink.buf.subarray(0, sink.pos));
    },
    decode(data) {
      if (typeof data === 'string' || data.length < 2) throw new WireFormatError('event message is cut short');
      const count = data[1]!;
      if (count < required) throw new WireFormatError(`event message has ${count} fields, fewer than the ${required} every message carries`);
      reader.use(data);
      reader.at(2, data.length);
      let decoded: { id: bigint; event: Record<string, unknown> };
      try {
        decoded = reader.record(Math.min(count, layout.length));
      } catch {
        throw new WireFormatError('event message is cut short');
      }
      const { id, event } = decoded;
      if (id === 0n) throw new WireFormatError('event message has no valid id');
      // Bytes make every type right; values still need checking (a NaN, a fraction, ticks past 9999).
      if (!valid(event)) {
        const f = fields.find((field) => !isFieldValue(field, event[field.name]))!;
        throw new WireFormatError(invalidField(f, event[f.name], f.wire));
      }
      return { id, event: event as unknown as EventRecord };
    },
  };
}

const EVENTS = eventWireCodec(EVENT_FIELD_LIST, EVENT_PROTO_NUMBERS);

/** A message of `version` (default 1, JSON; the gateway's setting is EVENT_WIRE_VERSION). */
export function encodeEvent(id: bigint, event: EventRecord, version: WireVersion = WIRE_VERSION): Buffer {
  return EVENTS.encode(id, event, version);
}

/**
 * Parses and checks a message: every field a store needs, so a message that passes can always
 * be stored (one that could not would be refused by the INSERT on every retry and block its
 * partition). Throws WireFormatError with a clear reason for anything else.
 */
export function decodeEvent(data: Buffer | string): { id: bigint; event: EventRecord } {
  return EVENTS.decode(data);
}
