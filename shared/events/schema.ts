import type { EventInstant } from './instant.js';
import { MAX_LENGTH, MAX_SENSORS } from '../catalogue/complex-types.js';

/**
 * The one declaration of the event record. Every representation of an event is derived from
 * EVENT_FIELDS by iterating it: the EventRecord type (below), the SQLite columns, row codec and
 * storability check (backends/embedded/event-row.ts), the ClickHouse columns and row codecs
 * (backends/clickhouse/rows.ts), the Kafka message and its checks (wire.ts), the admin view
 * (gateway/admin/views.ts) and the test factory (test/helpers/event-records.ts).
 *
 * Adding a field: docs/architecture.md §Adding an event field.
 */

/** A sensor reading: Clave and Valor of a pSensor. */
export interface KeyValue {
  clave: string;
  valor: string;
}

/** What a field holds; each kind has one representation per store, the wire and the admin view. */
export interface KindValue {
  /** SQLite TEXT, ClickHouse String, JSON string. */
  text: string;
  /** A finite double: SQLite REAL, ClickHouse Float64. */
  real: number;
  /** A safe integer: SQLite INTEGER, ClickHouse Int64. */
  int: number;
  /** SQLite INTEGER and ClickHouse UInt8, 0 or 1. */
  bool: boolean;
  /** Whole epoch milliseconds: SQLite INTEGER; ClickHouse `col` DateTime (clamped) + `col_ms` Int64. */
  epochMs: number;
  /** .NET-precision instant: SQLite `col_ms` + `col_ticks`; ClickHouse `col` DateTime (clamped) + `col_ms` + `col_ticks`. */
  instant: EventInstant;
  /** Key/value list: SQLite JSON text; ClickHouse `col_keys` + `col_values` parallel Array(String). */
  pairs: KeyValue[];
}

export type FieldKind = keyof KindValue;

/** A value as written in the table (`as const` makes examples readonly). */
type ExampleValue<K extends FieldKind> = K extends 'pairs' ? readonly Readonly<KeyValue>[] : K extends 'instant' ? Readonly<EventInstant> : KindValue[K];

interface FieldSpecOf<K extends FieldKind> {
  kind: K;
  /** Null allowed (a nullable column in every store). A `pairs` field cannot be: ClickHouse has no Nullable(Array). */
  nullable: K extends 'pairs' ? false : boolean;
  /** Column in both stores, or the stem of the kind's columns (`event_time` → `event_time_ms`, ...). */
  column: string;
  /** ClickHouse column (stem) when it differs from `column`. */
  clickhouseColumn?: string;
  /**
   * Few distinct values (providers, codes, operations: hundreds at most): the current ClickHouse
   * schema stores it as LowCardinality (a dictionary per part), 18.16 as a plain column.
   */
  lowCardinality?: K extends 'text' ? true : never;
  /**
   * Only ever compared for equality, never read back: the current ClickHouse schema keeps a 64-bit
   * hash of it (UInt64), 18.16 the text (see current-rows.ts for the collision odds).
   */
  hash64?: K extends 'text' ? true : never;
  /** Key in the Kafka message when it differs from the field's name. */
  wire?: string;
  /** Longest text accepted from clients (the catalogue's limit; informative, stores do not cut). */
  maxLength?: number;
  /** Items accepted from clients at most (`pairs`). */
  maxItems?: number;
  /** Left out of the admin view. */
  hidden?: true;
  /**
   * A field added after the first release. Whatever was written before it existed reads as its
   * zero (null when nullable; else false, 0, '', [] or the epoch): a Kafka message from an older
   * gateway decodes with it, an older worker's ClickHouse insert leaves the column at its type's
   * default, which is that zero, and the migrations give old rows the same. Without it every
   * message must carry the field, as those of the first release do.
   */
  addedLater?: true;
  /** The value test factories give it. */
  example: ExampleValue<K> | null;
}

/** One entry of EVENT_FIELDS. */
export type FieldSpec = { [K in FieldKind]: FieldSpecOf<K> }[FieldKind];

/**
 * The event fields in order (the order of the Kafka message's keys and of the store columns).
 * Each entry's comment is the field's documentation (shown on EventRecord).
 */
export const EVENT_FIELDS = {
  /** The provider (SystemUser). */
  systemUser: { kind: 'text', nullable: false, column: 'system_user', lowCardinality: true, maxLength: MAX_LENGTH.systemUser, example: 'acme' },
  /** Dominio as sent, trimmed. */
  dominio: { kind: 'text', nullable: false, column: 'dominio', maxLength: MAX_LENGTH.dominio, example: 'AB123CD' },
  nroSerie: { kind: 'text', nullable: false, column: 'nro_serie', maxLength: MAX_LENGTH.nroSerie, example: 'SN-1' },
  codigo: { kind: 'text', nullable: false, column: 'codigo', lowCardinality: true, maxLength: MAX_LENGTH.codigo, example: '1' },
  latitud: { kind: 'real', nullable: false, column: 'latitud', example: -34.6 },
  longitud: { kind: 'real', nullable: false, column: 'longitud', example: -58.4 },
  altitud: { kind: 'real', nullable: false, column: 'altitud', example: 25 },
  velocidad: { kind: 'real', nullable: false, column: 'velocidad', example: 60.5 },
  /** Heading. When each field is null or empty: presence.ts. */
  rumbo: { kind: 'real', nullable: true, column: 'rumbo', example: 90 },
  /** False when the coordinates are out of range (stored, flagged) or the device said so. */
  validPosition: { kind: 'bool', nullable: false, column: 'valid_position', example: true },
  /** Valido as sent by LoginYInsertarEvento2; null for the other operations. */
  valido: { kind: 'bool', nullable: true, column: 'valido', example: null },
  /** FechaHoraEvento exactly as sent. */
  eventTimeText: { kind: 'text', nullable: false, column: 'event_time_text', example: '2024-05-01T09:00:00' },
  /** FechaHoraEvento resolved (an offset, else the provider's zone). */
  eventTime: { kind: 'instant', nullable: false, column: 'event_time', example: { epochMs: 1_714_554_000_000, subMsTicks: 0 } },
  receptionTimeText: { kind: 'text', nullable: true, column: 'reception_time_text', example: null },
  receptionTime: { kind: 'instant', nullable: true, column: 'reception_time', example: null },
  /** When the gateway received the request (epoch ms). */
  receivedAt: { kind: 'epochMs', nullable: false, column: 'received_at', example: 1_714_554_001_000 },
  crudo: { kind: 'text', nullable: true, column: 'crudo', maxLength: MAX_LENGTH.crudo, example: null },
  sensors: { kind: 'pairs', nullable: false, column: 'sensors', clickhouseColumn: 'sensor', maxItems: MAX_SENSORS, example: [] },
  /** The SOAP operation, e.g. LoginYInsertarEvento. */
  operation: { kind: 'text', nullable: false, column: 'operation', lowCardinality: true, example: 'LoginYInsertarEvento' },
  /** Identity of a resent event: same provider, vehicle, code, event time and position. */
  dedupeKey: { kind: 'text', nullable: false, column: 'dedupe_key', hidden: true, hash64: true, example: 'example-dedupe-key' },
} as const satisfies Record<string, FieldSpec>;

export type EventFieldName = keyof typeof EVENT_FIELDS;

type ValueOf<F extends FieldSpec> = KindValue[F['kind']] | (F['nullable'] extends true ? null : never);

/** An accepted, validated event, ready to be stored: one property per entry of EVENT_FIELDS. */
export type EventRecord = { -readonly [N in EventFieldName]: ValueOf<(typeof EVENT_FIELDS)[N]> };

/** A field with its defaults filled in, as the codecs iterate them. */
export interface EventField {
  name: EventFieldName;
  kind: FieldKind;
  nullable: boolean;
  column: string;
  clickhouseColumn: string;
  wire: string;
  inView: boolean;
  /** LowCardinality in the current ClickHouse schema. */
  lowCardinality: boolean;
  /** Stored as a 64-bit hash in the current ClickHouse schema. */
  hash64: boolean;
  /** Its value where it is absent (a field `addedLater`: its zero); undefined when it is required. */
  whenAbsent: unknown;
}

/** The value a field `addedLater` has where it is absent. */
function zeroValue(kind: FieldKind, nullable: boolean): KindValue[FieldKind] | null {
  if (nullable) return null;
  switch (kind) {
    case 'text':
      return '';
    case 'real':
    case 'int':
    case 'epochMs':
      return 0;
    case 'bool':
      return false;
    case 'instant':
      return { epochMs: 0, subMsTicks: 0 };
    case 'pairs':
      return [];
  }
}

/** Resolves a table's entries in order (exported for tests that derive codecs from another table). */
export function resolveFields(table: Readonly<Record<string, FieldSpec>>): readonly EventField[] {
  return Object.entries(table).map(([name, spec]) => ({
    name: name as EventFieldName,
    kind: spec.kind,
    nullable: spec.nullable,
    column: spec.column,
    clickhouseColumn: spec.clickhouseColumn ?? spec.column,
    wire: spec.wire ?? name,
    inView: spec.hidden !== true,
    lowCardinality: 'lowCardinality' in spec && spec.lowCardinality === true,
    hash64: 'hash64' in spec && spec.hash64 === true,
    whenAbsent: spec.addedLater === true ? zeroValue(spec.kind, spec.nullable) : undefined,
  }));
}

/** EVENT_FIELDS in order, defaults filled in. */
export const EVENT_FIELD_LIST: readonly EventField[] = resolveFields(EVENT_FIELDS);

// Compiled code. The per-event paths (row building, checks) touch every field: in a loop doing
// `record[name]` the site sees every name, so each access is a hashed lookup in V8, and an object
// given ~30 properties one computed key at a time becomes a hash table, which JSON.stringify
// serialises far slower (bench/embedded-eventlog.ts and bench/ab.ts measured the compiled paths).
// So these paths are compiled once per table from one expression per column, the code a
// hand-written codec would be: property reads with constant names, array and object literals. Names
// enter the code only through JSON.stringify, as string literals, so no name can be read as code.

/** The expression reading property `name` of the object in variable `object`. */
export const property = (object: string, name: string): string => `${object}[${JSON.stringify(name)}]`;

/** Compiles `body` as a function of `params`, with `scope`'s values visible under its keys. */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller states the compiled function's type; nothing can infer it from source text
export function compileFunction<F>(params: readonly string[], body: string, scope: Readonly<Record<string, unknown>> = {}): F {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- deliberate, see above: the body is built from the schema, never from input
  const make = new Function(...Object.keys(scope), `return function (${params.join(', ')}) { ${body} };`) as (...values: unknown[]) => F;
  return make(...Object.values(scope));
}

const EXAMPLES = JSON.stringify(Object.fromEntries(Object.entries(EVENT_FIELDS).map(([name, spec]) => [name, spec.example])));

/**
 * A valid record made of every field's example (fresh objects each call). JSON.parse builds it with
 * one fixed shape, like a record literal, so records spread from it are as fast to read.
 */
export function exampleEventRecord(): EventRecord {
  return JSON.parse(EXAMPLES) as EventRecord;
}

// ---- checks: what every store can hold ---------------------------------------------------------

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whole epoch milliseconds plus 0-9999 ticks of 100 ns, as EventInstant. */
function isInstant(v: unknown): v is EventInstant {
  if (!isObject(v)) return false;
  const { epochMs, subMsTicks } = v;
  return Number.isSafeInteger(epochMs) && Number.isInteger(subMsTicks) && (subMsTicks as number) >= 0 && (subMsTicks as number) <= 9999;
}

const isPair = (v: unknown): boolean => isObject(v) && typeof v.clave === 'string' && typeof v.valor === 'string';
const isPairs = (v: unknown): boolean => Array.isArray(v) && v.every(isPair);

/** Each kind's check, as the JavaScript expression testing the value expression `v`. */
const KIND_CHECK: { readonly [K in FieldKind]: (v: string) => string } = {
  text: (v) => `typeof ${v} === 'string'`,
  real: (v) => `Number.isFinite(${v})`,
  int: (v) => `Number.isSafeInteger(${v})`,
  bool: (v) => `typeof ${v} === 'boolean'`,
  epochMs: (v) => `Number.isSafeInteger(${v})`,
  instant: (v) => `isInstant(${v})`,
  pairs: (v) => `isPairs(${v})`,
};
const CHECK_SCOPE = { isInstant, isPairs };

function checkExpression(field: Pick<EventField, 'kind' | 'nullable'>, v: string): string {
  return field.nullable ? `(${v} === null || ${KIND_CHECK[field.kind](v)})` : KIND_CHECK[field.kind](v);
}

/**
 * A function telling whether every field of `fields`, read from an object under `key(field)`, can
 * be stored: one compiled expression (it runs per event).
 */
export function recordCheck(fields: readonly EventField[], key: (field: EventField) => string): (object: object) => boolean {
  const all = fields.map((f) => checkExpression(f, property('o', key(f))));
  return compileFunction(['o'], `return ${all.length === 0 ? 'true' : all.join(' && ')};`, CHECK_SCOPE);
}

const singleChecks = new Map<string, (value: unknown) => boolean>();

/** True when `value` can be this field of a stored event (the check recordCheck compiles). */
export function isFieldValue(field: EventField, value: unknown): boolean {
  const key = `${field.kind}${field.nullable ? '?' : ''}`;
  let check = singleChecks.get(key);
  if (check === undefined) {
    check = compileFunction<(value: unknown) => boolean>(['v'], `return ${checkExpression(field, 'v')};`, CHECK_SCOPE);
    singleChecks.set(key, check);
  }
  return check(value);
}

const EXPECTED: { readonly [K in FieldKind]: string } = {
  text: 'a string',
  real: 'a number',
  int: 'a whole number',
  bool: 'a boolean',
  epochMs: 'whole epoch ms',
  instant: 'an instant',
  pairs: 'a list',
};

/**
 * Why a value that failed isFieldValue cannot be this field of a stored event. `name` is how the
 * field is called in the reason (its wire name for a Kafka message).
 */
export function invalidField(field: EventField, value: unknown, name: string = field.name): string {
  if (field.kind === 'pairs' && Array.isArray(value)) return `event field ${name} has an item that is not a string clave with a string valor`;
  return `event field ${name} is not ${EXPECTED[field.kind]}${field.nullable ? ' or null' : ''}`;
}
