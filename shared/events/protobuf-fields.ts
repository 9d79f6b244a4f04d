import { EVENT_FIELDS, type EventField, type EventFieldName, type FieldKind } from './schema.js';

/**
 * Wire version 3 maps the event record onto the shipped Protocol Buffers schema,
 * proto/prestadores/events/v1/events.proto. What this file declares is what that schema must say
 * (test/unit/shared/events/protobuf-schema.unit.test.ts parses the .proto and compares): each
 * field's number (never reused) and, derived from EVENT_FIELDS, its name and type.
 *
 * The numbers are each entry's `proto` (a field of EVENT_FIELDS without one does not compile), and
 * events.proto is generated from the table (`npm run generate`, scripts/generate/proto.ts).
 */

/** The schema file, relative to the repository root (and to `-I proto` its import path). */
export const PROTO_FILE = 'proto/prestadores/events/v1/events.proto';
export const PROTO_PACKAGE = 'prestadores.events.v1';
export const PROTO_MESSAGE = 'VehicleEvent';
/** The message of a `pairs` field's items (Sensores). */
export const PROTO_PAIR_MESSAGE = 'Sensor';
/** The event's id, the message's first field. */
export const PROTO_ID_NUMBER = 1;

/** Field numbers of EVENT_FIELDS in VehicleEvent, as each entry's `proto` gives it. Never change or reuse one (see events.proto). */
export const EVENT_PROTO_NUMBERS: { readonly [N in EventFieldName]: number } = Object.fromEntries(
  Object.entries(EVENT_FIELDS).map(([name, spec]) => [name, spec.proto]),
) as { [N in EventFieldName]: number };

/**
 * Numbers of fields removed from the message, and their names: `reserved` in events.proto, never
 * used again. None yet.
 */
export const PROTO_RESERVED: readonly { number: number; name: string }[] = [];

/** The fields of a sensor reading (message Sensor), with their documentation. */
export const PROTO_PAIR_FIELDS: readonly { name: 'clave' | 'valor'; number: number; doc: string; absent: string }[] = [
  { name: 'clave', number: 1, doc: "The reading's key (Clave).", absent: "\"\" when the pSensor's Clave was empty, left out or nil." },
  { name: 'valor', number: 2, doc: "The reading's value (Valor).", absent: "\"\" when the pSensor's Valor was empty, left out or nil." },
];

/**
 * Each kind's protobuf type. Times are fixed 64-bit integers (8 bytes, cheap to write from a
 * double, negative before 1970 without a 10-byte varint); `int` a varint.
 */
const PROTO_TYPE: { readonly [K in FieldKind]: string } = {
  text: 'string',
  real: 'double',
  int: 'int64',
  bool: 'bool',
  epochMs: 'sfixed64',
  instant: 'sfixed64',
  pairs: PROTO_PAIR_MESSAGE,
};

/** The unit suffix of a time field's name: the number alone does not say what it counts. */
const NAME_SUFFIX: Partial<Record<FieldKind, string>> = { epochMs: '_unix_ms', instant: '_unix_100ns' };

/** A field as events.proto declares it. */
export interface ProtoField {
  name: string;
  number: number;
  type: string;
  /** proto3 `optional` (explicit presence): the record's null is the field's absence. */
  optional: boolean;
  repeated: boolean;
}

/** The declaration a record field has in events.proto: its column's name (plus a time's unit), its kind's type. */
export function protoField(f: EventField, number: number): ProtoField {
  return { name: f.column + (NAME_SUFFIX[f.kind] ?? ''), number, type: PROTO_TYPE[f.kind], optional: f.nullable, repeated: f.kind === 'pairs' };
}

/** Numbers for a table other than EVENT_FIELDS (tests): 2, 3, ... in table order, after the id. */
export function positionalNumbers(fields: readonly EventField[]): Readonly<Record<string, number>> {
  return Object.fromEntries(fields.map((f, i) => [f.name, PROTO_ID_NUMBER + 1 + i]));
}
