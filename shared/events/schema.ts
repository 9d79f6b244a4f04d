import type { FieldKind, FieldSpec, KindValue } from './field-spec.js';
import type { EventInstant } from './instant.js';
import { EVENT_FIELDS } from './fields.js';

export type { FieldKind, FieldSpec, KeyValue, KindValue, PublishedField, ShippedFieldSpec } from './field-spec.js';
export { EVENT_FIELDS } from './fields.js';

/**
 * What is derived from the one declaration of the event record, EVENT_FIELDS (fields.ts). Every
 * representation of an event is derived from it by iterating it: the EventRecord type (below),
 * the SQLite columns, row codec and storability check (backends/embedded/event-row.ts), the
 * ClickHouse columns and row codecs (backends/clickhouse/rows.ts), the Kafka message and its
 * checks (wire.ts), the admin view (gateway/admin/views.ts) and the test factory
 * (test/helpers/event-records.ts); the migrations of the fields added later from their `since`
 * (migrations.ts).
 *
 * Adding a field: docs/architecture.md §Adding an event field.
 */

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
  /** The schema version that added it: 1 for the first release's fields (field-spec.ts). */
  since: number;
  /** Its value where it is absent (a field added later: its zero); undefined when it is required. */
  whenAbsent: unknown;
}

/** The value a field added later has where it is absent. */
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

/** The schema version of the first release, which created the stores' event tables. */
export const FIRST_VERSION = 1;

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
    since: spec.since ?? FIRST_VERSION,
    whenAbsent: (spec.since ?? FIRST_VERSION) > FIRST_VERSION ? zeroValue(spec.kind, spec.nullable) : undefined,
  }));
}

/** EVENT_FIELDS in order, defaults filled in. */
export const EVENT_FIELD_LIST: readonly EventField[] = resolveFields(EVENT_FIELDS);

/** The fields of `fields` the first release had: the columns its migrations created. */
export const firstRelease = (fields: readonly EventField[]): readonly EventField[] => fields.filter((f) => f.since === FIRST_VERSION);

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
