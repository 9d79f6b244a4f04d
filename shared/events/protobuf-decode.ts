import { isUtf8 } from 'node:buffer';
import { compileFunction, type EventField } from './schema.js';
import { PROTO_ID_NUMBER } from './protobuf-fields.js';
import { tagBytes, WIRE, wireType } from './protobuf.js';

/**
 * The decoder of wire version 3 (a `VehicleEvent` of events.proto), generated from the field
 * table like the encoder (protobuf.ts). It reads any conformant writer's messages, not only ours:
 * fields in any order, a field repeated (the last one wins), overlong varints, unknown fields of
 * every wire type (groups included) skipped, a known field with another wire type taken for an
 * unknown one (as C++ and upb do). Texts must be UTF-8, as proto3 requires. It gives the record
 * with every field; what a store could not hold (a NaN, epoch ms past 2^53) is wire.ts's check.
 */

/** Reads one message: the id (0n when absent) and the record's fields in table order. */
type ProtobufDecoder = (buf: Buffer) => { id: bigint; event: Record<string, unknown> };

const tagValue = (number: number, wire: number): number => tagBytes(number, wire).reduce((n, b, i) => n + (b & 127) * 2 ** (7 * i), 0);

/** The zero a field without `optional` reads as when absent; null for an `optional` one. */
function absent(f: EventField): string {
  if (f.nullable) return 'null';
  switch (f.kind) {
    case 'text':
      return "''";
    case 'real':
    case 'int':
    case 'epochMs':
      return '0';
    case 'bool':
      return 'false';
    case 'instant':
      return '{ epochMs: 0, subMsTicks: 0 }';
    case 'pairs':
      return '[]';
  }
}

/** The expression reading a field's value at pos (its tag read). */
function read(f: EventField): string {
  switch (f.kind) {
    case 'text':
      return `text(${JSON.stringify(f.wire)})`;
    case 'real':
      return 'double()';
    case 'int':
      return 'int64()';
    case 'bool':
      return 'int64() !== 0';
    case 'epochMs':
      return 'sfixed64()';
    case 'instant':
      return 'ticks()';
    case 'pairs':
      return 'pair()';
  }
}

const READERS = `
  let b = null, view = null, ab = null, base = 0, end = 0, msgEnd = 0, pos = 0, latin = '';
  const cut = () => fail('event message is cut short');
  function need(n) { if (pos + n > end) cut(); }
  function byte() { if (pos >= end) cut(); return b[pos++]; }
  /** A varint that must fit 32 bits: tags and lengths. */
  function varint32() {
    let x = byte();
    if (x < 128) return x;
    let r = x & 127;
    for (let i = 1; i < 10; i++) {
      x = byte();
      if (i < 5) r += (x & 127) * 2 ** (7 * i);
      else if ((x & 127) !== 0) r = Infinity;
      if (x < 128) { if (r > 4294967295) fail('event message is not protobuf: a tag or length past 32 bits'); return r; }
    }
    return fail('event message is not protobuf: a varint longer than 10 bytes');
  }
  /** A varint as int64 (two's complement), exact while it is a safe integer. */
  function int64() {
    let lo = 0, hi = 0;
    for (let i = 0; i < 10; i++) {
      const x = byte();
      if (i < 4) lo |= (x & 127) << (7 * i);
      else if (i === 4) { lo |= (x & 127) << 28; hi = (x & 127) >> 4; }
      else hi |= (x & 127) << (7 * i - 32);
      if (x < 128) return (hi | 0) * 4294967296 + (lo >>> 0);
    }
    return fail('event message is not protobuf: a varint longer than 10 bytes');
  }
  function double() { need(8); const x = view.getFloat64(base + pos, true); pos += 8; return x; }
  function sfixed64() { need(8); const lo = view.getUint32(base + pos, true), hi = view.getInt32(base + pos + 4, true); pos += 8; return hi * 4294967296 + lo; }
  /** sfixed64 100 ns units as epoch ms + ticks, in 32-bit halves (the count passes 2^53). */
  function ticks() {
    need(8);
    const lo = view.getUint32(base + pos, true), hi = view.getInt32(base + pos + 4, true);
    pos += 8;
    const a = Math.floor(hi / 10000);
    const rest = (hi - a * 10000) * 4294967296 + lo;
    const q = Math.floor(rest / 10000);
    return { epochMs: a * 4294967296 + q, subMsTicks: rest - q * 10000 };
  }
  function text(name) {
    // Lengths below 128 take one byte: read it here, not through varint32.
    let n = pos < end ? b[pos] : 128;
    if (n < 128) pos++;
    else n = varint32();
    need(n);
    const s = pos, e = pos + n;
    pos = e;
    let i = s;
    for (; i + 4 <= e; i += 4) if ((view.getUint32(base + i, true) & 0x80808080) !== 0) return utf8(s, e, name);
    for (; i < e; i++) if (b[i] >= 0x80) return utf8(s, e, name);
    // ASCII: cut from one latin1 string of the whole message (one native call per message).
    if (latin === '') latin = b.latin1Slice(0, msgEnd);
    return latin.substring(s, e);
  }
  function utf8(s, e, name) {
    if (!isUtf8(b.subarray(s, e))) fail('event field ' + name + ' is not UTF-8');
    return b.utf8Slice(s, e);
  }
  /** A Sensor (clave = 1, valor = 2). */
  function pair() {
    let n = pos < end ? b[pos] : 128;
    if (n < 128) pos++;
    else n = varint32();
    need(n);
    const outer = end;
    end = pos + n;
    let clave = '', valor = '';
    while (pos < end) {
      const t = b[pos] < 128 ? b[pos++] : varint32();
      if (t === 10) clave = text('clave');
      else if (t === 18) valor = text('valor');
      else skip(t, 0);
    }
    end = outer;
    return { clave, valor };
  }
  /** Skips an unknown field whose tag was read. */
  function skip(tag, depth) {
    if (tag < 8) fail('event message is not protobuf: field number 0');
    switch (tag & 7) {
      case 0: int64(); return;
      case 1: need(8); pos += 8; return;
      case 2: { const n = varint32(); need(n); pos += n; return; }
      case 5: need(4); pos += 4; return;
      case 3: {
        if (depth > 100) fail('event message is not protobuf: groups nested past 100');
        for (;;) {
          const t = varint32();
          if ((t & 7) === 4) { if (Math.floor(t / 8) !== Math.floor(tag / 8)) fail('event message is not protobuf: a group ends with another number'); return; }
          skip(t, depth + 1);
        }
      }
      default: fail('event message is not protobuf: wire type ' + (tag & 7));
    }
  }
  function use(buf) {
    b = buf;
    if (buf.buffer !== ab) { ab = buf.buffer; view = new DataView(ab); }
    base = buf.byteOffset; end = msgEnd = buf.length; pos = 0; latin = '';
  }`;

/** The decoder of a field table with the field numbers `numbers`; `fail` throws (wire.ts: a WireFormatError). */
export function protobufDecoder(fields: readonly EventField[], numbers: Readonly<Record<string, number>>, fail: (reason: string) => never): ProtobufDecoder {
  const local = (i: number): string => `f${i}`;
  const cases = fields.map((f, i) => {
    const value = read(f);
    const store = f.kind === 'pairs' ? `${local(i)}.push(${value});` : `${local(i)} = ${value};`;
    return `case ${tagValue(numbers[f.name]!, wireType(f.kind))}: ${store} break;`;
  });
  const source = `${READERS}
    return function decodeProtobuf(buf) {
      use(buf);
      let id = 0n;
      ${fields.map((f, i) => `let ${local(i)} = ${absent(f)};`).join(' ')}
      while (pos < end) {
        // Tags of fields 1-15 take one byte, of 16-2047 two (pos < end holds here).
        let tag = b[pos];
        if (tag < 128) pos++;
        else if (pos + 1 < end && b[pos + 1] < 128) { tag = (tag & 127) | (b[pos + 1] << 7); pos += 2; }
        else tag = varint32();
        switch (tag) {
          case ${tagValue(PROTO_ID_NUMBER, WIRE.fixed64)}: need(8); id = view.getBigUint64(base + pos, true); pos += 8; break;
          ${cases.join('\n          ')}
          default: skip(tag, 0);
        }
      }
      b = null; latin = '';
      return { id, event: { ${fields.map((f, i) => `${JSON.stringify(f.name)}: ${local(i)}`).join(', ')} } };
    };`;
  return compileFunction<() => ProtobufDecoder>([], source, { fail, isUtf8 })();
}

/**
 * The id of a version 3 message without decoding the rest (the id scan of highest-id.ts): the
 * last field 1 of wire type fixed64, or null when there is none or the bytes are not protobuf.
 */
export function protobufMessageId(buf: Buffer): bigint | null {
  let pos = 0;
  let id: bigint | null = null;
  const varint = (): number => {
    let r = 0;
    for (let i = 0; i < 10; i++) {
      if (pos >= buf.length) return -1;
      const x = buf[pos++]!;
      if (i < 5) r += (x & 127) * 2 ** (7 * i);
      if (x < 128) return r;
    }
    return -1;
  };
  while (pos < buf.length) {
    const tag = varint();
    if (tag < 8) return null;
    const size = (() => {
      switch (tag % 8) {
        case WIRE.varint:
          return varint() < 0 ? -1 : 0;
        case WIRE.fixed64:
          return 8;
        case WIRE.lengthDelimited:
          return varint();
        case WIRE.fixed32:
          return 4;
        default:
          return -1; // groups: not something a VehicleEvent writer produces
      }
    })();
    if (size < 0 || pos + size > buf.length) return null;
    if (tag === tagValue(PROTO_ID_NUMBER, WIRE.fixed64)) id = buf.readBigUInt64LE(pos);
    pos += size;
  }
  return id === 0n ? null : id;
}
