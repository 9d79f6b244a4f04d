import { compileFunction, type EventField, type EventRecord } from './schema.js';
import { PROTO_ID_NUMBER } from './protobuf-fields.js';

/**
 * The encoder of wire version 3: the record as a `VehicleEvent` of events.proto (protobuf-fields.ts
 * maps the fields), written by code generated from the field table, as binary.ts does for version
 * 2. Hand-written rather than a protobuf library's: it is the gateway's per-event path, and
 * bench/event-codec.ts measures it against v2 and against protobufjs. Held to the libraries by
 * test/unit/shared/events/protobuf.unit.test.ts (protobufjs) and
 * test/scale-out/event-protobuf-libraries.scale-out.test.ts (protoc, Python's protobuf).
 *
 * Canonical proto3 output, as the reference encoders write it: fields in number order; a field
 * without `optional` is left out when it holds its zero ('' , +0, false, an empty list; -0.0 is
 * written, as C++ and upb do); an `optional` one is written whenever it is not null. Lengths are
 * minimal varints: a text is written one byte after its tag, and moved further only when it turns
 * out longer than 127 bytes.
 */

/** The furthest epoch ms whose 100 ns count fits an sfixed64 (2^63 / 10^4, rounded down, less one ms for the ticks). */
export const MAX_TICKS_MS = 922_337_203_685_476;

/** Writes the varint of a uint32 `n` at p; the position after it. */
const WRITE_VARINT32 = `function varint32(buf, p, n) {
  while (n > 127) { buf[p++] = (n & 127) | 128; n >>>= 7; }
  buf[p++] = n;
  return p;
}`;

/**
 * Writes `s` as varint byte length + UTF-8 at p (room checked by the caller: 5 + 3 × length). ASCII
 * goes byte by byte (a native call costs more than a short loop), the rest through Buffer's writer.
 */
const WRITE_TEXT = `function text(buf, p, s) {
  const n = s.length;
  const start = p + 1;
  let q = start;
  let i = 0;
  for (; i < n; i++) { const c = s.charCodeAt(i); if (c >= 0x80) break; buf[q++] = c; }
  if (i < n) q += buf.utf8Write(i === 0 ? s : s.slice(i), q);
  return lengthBefore(buf, p, start, q);
}`;

/** Writes the length of the bytes start..q (written one byte after p) at p, moving them when it takes more than a byte. */
const LENGTH_BEFORE = `function lengthBefore(buf, p, start, q) {
  const len = q - start;
  if (len < 128) { buf[p] = len; return q; }
  const size = len < 16384 ? 2 : len < 2097152 ? 3 : len < 268435456 ? 4 : 5;
  buf.copyWithin(p + size, start, q);
  varint32(buf, p, len);
  return q + size - 1;
}`;

/** A signed 64-bit integer from a safe integer, as the two's-complement varint of int64. */
const WRITE_INT64 = `function int64(buf, p, n) {
  let hi = Math.floor(n / 4294967296);
  let lo = n - hi * 4294967296;
  hi = hi >>> 0;
  while (hi !== 0 || lo > 127) { buf[p++] = (lo & 127) | 128; lo = ((lo >>> 7) | (hi << 25)) >>> 0; hi >>>= 7; }
  buf[p++] = lo;
  return p;
}`;

/** An sfixed64 from a safe integer (little-endian two's complement). */
const WRITE_FIXED64 = `function fixed64(view, p, n) {
  const hi = Math.floor(n / 4294967296);
  view.setUint32(p, n - hi * 4294967296, true);
  view.setInt32(p + 4, hi, true);
}`;

/**
 * An instant as sfixed64 100 ns units since the Unix epoch: ms × 10000 + ticks, past 2^53, so
 * computed in two 32-bit halves (every intermediate below 2^46, exact in a double).
 */
const WRITE_TICKS = `function ticks(view, p, ms, t) {
  if (ms > ${MAX_TICKS_MS} || ms < -${MAX_TICKS_MS}) throw new RangeError('an instant more than 29,000 years from 1970 does not fit wire version 3 (an sfixed64 of 100 ns units)');
  const msHi = Math.floor(ms / 4294967296);
  const low = (ms - msHi * 4294967296) * 10000 + t;
  const carry = Math.floor(low / 4294967296);
  view.setUint32(p, low - carry * 4294967296, true);
  view.setInt32(p + 4, msHi * 10000 + carry, true);
}`;

/** The bytes of a tag (field number, wire type) as a varint. */
export function tagBytes(number: number, wireType: number): number[] {
  const bytes: number[] = [];
  let n = (number << 3) | wireType;
  while (n > 127) {
    bytes.push((n & 127) | 128);
    n >>>= 7;
  }
  bytes.push(n);
  return bytes;
}

export const WIRE = { varint: 0, fixed64: 1, lengthDelimited: 2, fixed32: 5 } as const;

/** The wire type of a kind's protobuf type (PROTO_TYPE). */
export function wireType(kind: EventField['kind']): number {
  switch (kind) {
    case 'text':
    case 'pairs':
      return WIRE.lengthDelimited;
    case 'real':
    case 'epochMs':
    case 'instant':
      return WIRE.fixed64;
    case 'int':
    case 'bool':
      return WIRE.varint;
  }
}

const putTag = (bytes: readonly number[]): string => bytes.map((b) => `buf[p++] = ${b};`).join(' ');

/** Statements writing one field's value `v` (not null) after its tag. */
function writeValue(f: EventField, v: string, tag: string): string {
  switch (f.kind) {
    case 'text':
      return `${tag} p = text(buf, p, ${v});`;
    case 'real':
      return `${tag} view.setFloat64(p, ${v}, true); p += 8;`;
    case 'int':
      return `${tag} p = int64(buf, p, ${v});`;
    case 'bool':
      return `${tag} buf[p++] = ${v} ? 1 : 0;`;
    case 'epochMs':
      return `${tag} fixed64(view, p, ${v}); p += 8;`;
    case 'instant':
      return `${tag} ticks(view, p, ${v}.epochMs, ${v}.subMsTicks); p += 8;`;
    case 'pairs':
      // Each item a Sensor: clave = 1, valor = 2, each left out when empty (an item of two empty texts is an empty message).
      return `for (let i = 0; i < ${v}.length; i++) { const kv = ${v}[i]; ${tag} const start = p + 1; p = start;
        if (kv.clave.length !== 0) { buf[p++] = 10; p = text(buf, p, kv.clave); }
        if (kv.valor.length !== 0) { buf[p++] = 18; p = text(buf, p, kv.valor); }
        p = lengthBefore(buf, start - 1, start, p); }`;
  }
}

/** When a field without `optional` holds its zero, which proto3 leaves out. */
function isZero(f: EventField, v: string): string {
  switch (f.kind) {
    case 'text':
      return `${v}.length === 0`;
    case 'real':
      return `(${v} === 0 && 1 / ${v} > 0)`; // +0 only: -0.0 is written
    case 'int':
    case 'epochMs':
      return `${v} === 0`;
    case 'bool':
      return `!${v}`;
    case 'instant':
      return `(${v}.epochMs === 0 && ${v}.subMsTicks === 0)`;
    case 'pairs':
      return `${v}.length === 0`;
  }
}

/** The most bytes a field can take: tag (2; numbers below 2048), length or value, texts at 3 bytes a UTF-16 unit. */
function sizeBound(f: EventField, v: string): string {
  switch (f.kind) {
    case 'text':
      return f.nullable ? `(${v} === null ? 0 : 7 + 3 * ${v}.length)` : `7 + 3 * ${v}.length`;
    case 'pairs':
      return `pairsBound(${v})`;
    default:
      return '12';
  }
}

/** A message encoder: the record and id as a VehicleEvent, in a fresh Buffer. */
type ProtobufEncoder = (id: bigint, e: EventRecord) => Buffer;

/** The encoder of a field table, with the field numbers `numbers` (by field name). */
export function protobufEncoder(fields: readonly EventField[], numbers: Readonly<Record<string, number>>): ProtobufEncoder {
  const ordered = [...fields].sort((a, b) => numbers[a.name]! - numbers[b.name]!);
  const v = (f: EventField): string => `e[${JSON.stringify(f.name)}]`;
  const writes = ordered.map((f) => {
    const tag = putTag(tagBytes(numbers[f.name]!, wireType(f.kind)));
    const write = writeValue(f, v(f), tag);
    return f.nullable ? `if (${v(f)} !== null) { ${write} }` : `if (!(${isZero(f, v(f))})) { ${write} }`;
  });
  const bound = ordered.map((f) => sizeBound(f, v(f))).join(' + ');
  const source = `${WRITE_VARINT32}\n${WRITE_TEXT}\n${LENGTH_BEFORE}\n${WRITE_INT64}\n${WRITE_FIXED64}\n${WRITE_TICKS}
    function pairsBound(list) { let n = 0; for (let i = 0; i < list.length; i++) n += 19 + 3 * (list[i].clave.length + list[i].valor.length); return n; }
    let buf = Buffer.allocUnsafeSlow(4096);
    let view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    return function encodeProtobuf(id, e) {
      const need = 9 + ${bound};
      if (need > buf.length) { buf = Buffer.allocUnsafeSlow(2 * need); view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength); }
      let p = 0;
      ${putTag(tagBytes(PROTO_ID_NUMBER, WIRE.fixed64))} view.setBigUint64(p, id, true); p += 8;
      ${writes.join('\n      ')}
      return Buffer.from(buf.subarray(0, p));
    };`;
  return compileFunction<() => ProtobufEncoder>([], source)();
}
