/**
 * Generated event records for the schema tests (test/unit/shared/events/schema.unit.test.ts and its ClickHouse
 * half): a table of every field kind, and fast-check arbitraries per kind with a fixed seed.
 */
import fc from 'fast-check';
import { EVENT_FIELD_LIST, resolveFields, type EventField, type FieldSpec } from '../../shared/events/schema.js';

const SEED = 20261123;

/** Every kind, nullable and not; a renamed wire key, a ClickHouse column stem, fields added later. */
export const EVERY_KIND = {
  label: { kind: 'text', nullable: false, column: 'label', wire: 'etiqueta', example: 'x' },
  note: { kind: 'text', nullable: true, column: 'note', example: null },
  ratio: { kind: 'real', nullable: false, column: 'ratio', example: 0.5 },
  maybeRatio: { kind: 'real', nullable: true, column: 'maybe_ratio', example: null },
  total: { kind: 'int', nullable: false, column: 'total', example: 3 },
  maybeTotal: { kind: 'int', nullable: true, column: 'maybe_total', since: 2, example: null },
  flag: { kind: 'bool', nullable: false, column: 'flag', since: 2, example: true },
  maybeFlag: { kind: 'bool', nullable: true, column: 'maybe_flag', example: null },
  seenAt: { kind: 'epochMs', nullable: false, column: 'seen_at', example: 0 },
  maybeSeenAt: { kind: 'epochMs', nullable: true, column: 'maybe_seen_at', example: null },
  happened: { kind: 'instant', nullable: false, column: 'happened', example: { epochMs: 0, subMsTicks: 1 } },
  maybeHappened: { kind: 'instant', nullable: true, column: 'maybe_happened', example: null },
  tags: { kind: 'pairs', nullable: false, column: 'tags', clickhouseColumn: 'tag', since: 2, example: [] },
  seenLast: { kind: 'instant', nullable: false, column: 'seen_last', since: 3, example: { epochMs: 5, subMsTicks: 5 } },
} as const satisfies Record<string, FieldSpec>;
export const EVERY_KIND_FIELDS = resolveFields(EVERY_KIND);

// ---- generated records, field by field from a table ---------------------------------------------

/** .NET DateTime's range in epoch ms (0001-01-01 .. 9999-12-31T23:59:59.999). */
const NET_MIN_MS = -62_135_596_800_000;
const NET_MAX_MS = 253_402_300_799_999;

const text = fc.string({ unit: 'grapheme', maxLength: 12 });
/** Doubles JSON carries exactly (-0 is written as 0). */
const real = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0));
const KIND_ARBITRARY: { [K in EventField['kind']]: fc.Arbitrary<unknown> } = {
  text,
  real,
  int: fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER)),
  bool: fc.boolean(),
  epochMs: fc.integer({ min: NET_MIN_MS, max: NET_MAX_MS }),
  instant: fc.record({ epochMs: fc.integer({ min: NET_MIN_MS, max: NET_MAX_MS }), subMsTicks: fc.integer({ min: 0, max: 9999 }) }),
  pairs: fc.array(fc.record({ clave: text, valor: text }), { maxLength: 4 }),
};

function recordArbitrary(fields: readonly EventField[]): fc.Arbitrary<Record<string, unknown>> {
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const f of fields) model[f.name] = f.nullable ? fc.option(KIND_ARBITRARY[f.kind], { nil: null }) : KIND_ARBITRARY[f.kind];
  return fc.record(model);
}

/** The fields of the first release (no `since`). */
export const FIRST_FIELDS = EVENT_FIELD_LIST.filter((f) => f.whenAbsent === undefined);
/** Each field added later (a `since`) of `fields` with its zero. */
export const zeros = (fields: readonly EventField[]) => Object.fromEntries(fields.filter((f) => f.whenAbsent !== undefined).map((f) => [f.name, f.whenAbsent]));

export const sample = (fields: readonly EventField[], n: number) => fc.sample(recordArbitrary(fields), { numRuns: n, seed: SEED });
export const byId = (a: { id: bigint }, b: { id: bigint }) => (a.id < b.id ? -1 : 1);
