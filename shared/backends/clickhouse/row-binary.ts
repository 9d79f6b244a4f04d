import { createHash } from 'node:crypto';
import { compileFunction, EVENT_FIELD_LIST, property, type EventField } from '../../events/schema.js';
import type { EventRecord } from '../types.js';
import { BinaryBuffer } from './binary-buffer.js';
import { currentEventColumns, MAX_INSTANT_MS, MIN_INSTANT_MS } from './current-rows.js';
import type { SchemaFamily } from './family.js';
import { dateTimeSeconds, eventColumns } from './rows.js';

/**
 * Event rows as ClickHouse's `RowBinary`, written straight from the decoded records into one
 * buffer per insert: no row object, no text per value, and the server reads fixed-width values
 * instead of parsing text (bench:worker measures it against TabSeparated, both sides' CPU).
 * Every release from 18.16 on reads RowBinary the same way for the types used here: a Nullable
 * is a 0/1 byte then the value, an Array a LEB128 count then the items, LowCardinality(String)
 * is written as a String, DateTime is UInt32 seconds and DateTime64(p) an Int64 of 10^-p seconds.
 *
 * The values are the ones the text codecs (rows.ts, current-rows.ts) produce, byte for byte once
 * stored: test/scale-out/clickhouse-row-binary.scale-out.test.ts stores the same records both ways on
 * 18.16 and on chdb and compares what it reads back.
 */

/** Appends one event's row, columns in the order of `columns`. */
type RowBinaryEncode = (out: BinaryBuffer, id: bigint, event: EventRecord, storedAt: number) => void;

interface RowBinaryCodec {
  /** The column names, in the order each row is written (the INSERT's column list). */
  columns: readonly string[];
  encode: RowBinaryEncode;
}

const clampInstantMs = (ms: number): number => Math.min(MAX_INSTANT_MS, Math.max(MIN_INSTANT_MS, ms));

/** The DateTime64(7) of an instant as the current schema stores it: held at the ends of 0001..9999. */
function writeInstant7(out: BinaryBuffer, instant: { epochMs: number; subMsTicks: number }): void {
  const ms = instant.epochMs;
  const ticks = ms < MIN_INSTANT_MS ? 0 : ms > MAX_INSTANT_MS ? 9999 : instant.subMsTicks;
  out.ticks64(clampInstantMs(ms), ticks);
}

/** The dedupe key's UInt64: the first 8 bytes of SHA-256 of the text, big-endian (hash64 in current-rows.ts). */
function writeHash64(out: BinaryBuffer, text: string): void {
  out.u64FromBigEndian(createHash('sha256').update(text, 'utf8').digest());
}

const SCOPE = { dateTimeSeconds, clampInstantMs, writeInstant7, writeHash64 };

/**
 * Statements writing one field's columns, value in variable `v`, in the order of the family's
 * fieldColumns: rows.ts (18.16: an instant is a clamped DateTime, exact ms and ticks) or
 * current-rows.ts (one DateTime64; the dedupe key as its 64-bit hash).
 */
function statements(family: SchemaFamily, f: EventField, v: string): string {
  const nullable = (write: string): string => (f.nullable ? `if (${v} === null) out.u8(1); else { out.u8(0); ${write} }` : write);
  const legacy = family === 'legacy';
  switch (f.kind) {
    case 'text':
      return nullable(!legacy && f.hash64 ? `writeHash64(out, ${v});` : `out.str(${v});`);
    case 'real':
      return nullable(`out.f64(${v});`);
    case 'int':
      return nullable(`out.i64(Math.trunc(${v}));`);
    case 'bool':
      return nullable(`out.u8(${v} ? 1 : 0);`);
    case 'epochMs':
      // 18.16: two columns, each Nullable on its own.
      if (legacy) return [`out.u32(dateTimeSeconds(${v}));`, `out.i64(Math.trunc(${v}));`].map(nullable).join(' ');
      return nullable(`out.i64(clampInstantMs(Math.trunc(${v})));`);
    case 'instant':
      if (legacy) return [`out.u32(dateTimeSeconds(${v}.epochMs));`, `out.i64(Math.trunc(${v}.epochMs));`, `out.u16(${v}.subMsTicks);`].map(nullable).join(' ');
      return nullable(`writeInstant7(out, ${v});`);
    case 'pairs':
      return `out.count(${v}.length); for (const p of ${v}) out.str(p.clave); out.count(${v}.length); for (const p of ${v}) out.str(p.valor);`;
  }
}

/** The RowBinary codec of a schema family over a field table (EVENT_FIELD_LIST; tests pass others). */
function rowBinaryCodec(family: SchemaFamily, fields: readonly EventField[] = EVENT_FIELD_LIST): RowBinaryCodec {
  const storedAt = family === 'legacy' ? 'out.u32(dateTimeSeconds(storedAt));' : 'out.u32(Math.floor(storedAt / 1000));';
  // Compiled once per table (like the text codecs): one read per field, no loop over the table per row.
  const body = [
    'out.u64(id);',
    ...fields.map((f, i) => `const v${i} = ${property('e', f.name)}; ${statements(family, f, `v${i}`)}`),
    storedAt,
  ].join('\n');
  const encode = compileFunction<RowBinaryEncode>(['out', 'id', 'e', 'storedAt'], body, SCOPE);
  const columns = (family === 'legacy' ? eventColumns(fields) : currentEventColumns(fields)).map((c) => c.name);
  return { columns, encode };
}

export const ROW_BINARY: Readonly<Record<SchemaFamily, RowBinaryCodec>> = {
  legacy: rowBinaryCodec('legacy'),
  current: rowBinaryCodec('current'),
};

/** RowBinary of a list of events (one insert's body). */
export function encodeRowBinary(codec: RowBinaryCodec, events: readonly { id: bigint; event: EventRecord }[], storedAt: number): Buffer {
  // About 200 bytes per event with the current fields: one allocation for most batches.
  const out = new BinaryBuffer(Math.max(1024, events.length * 256));
  for (const { id, event } of events) codec.encode(out, id, event, storedAt);
  return out.bytes();
}

