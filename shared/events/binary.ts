import { compileFunction, EVENT_FIELD_LIST, type EventField } from './schema.js';
import type { EventRecord } from './schema.js';

/**
 * The event record in binary, derived from EVENT_FIELDS: one layout serves the hand-off to the
 * SQLite writer thread (writer-ring.ts) and Kafka messages of wire version 2 (wire.ts).
 *
 * A record, little-endian, no padding:
 *   u64 id, then each field in layout order:
 *   nullable field: u8 1 before its value, or u8 0 and nothing else when null;
 *   text:     u32 byte length + UTF-8 bytes
 *   real, int, epochMs: f64 (an int and epoch ms are safe integers: a double holds them exactly)
 *   bool:     u8 0 or 1
 *   instant:  f64 epoch ms + u16 ticks (0..9999)
 *   pairs:    u32 count + count × (text clave, text valor)
 *
 * Layout order is the table's, with the fields added later moved after the others, by the
 * version that added them (`since`), then in table order: a message written before such a field
 * existed is a prefix of today's layout, so its reader fills in the zero of every field past the
 * count the message states (see wire.ts).
 *
 * Encoder and decoders are generated once per table as source text (like the row codecs, see
 * schema.ts): straight-line code with constant offsets where a loop over the table would look up
 * every field by name per event. The decoders' source is self-contained (no closure over this
 * module), so the writer thread, which is plain CommonJS, compiles the very same text.
 */

/** The fields in binary layout order. */
export function binaryLayout(fields: readonly EventField[]): readonly EventField[] {
  // A stable sort: within a version, table order.
  return [...fields].sort((a, b) => a.since - b.since);
}

/** Where an encoder writes: grown by the caller when a record does not fit before `limit`. */
export interface BinarySink {
  buf: Buffer;
  view: DataView;
  pos: number;
  limit: number;
}

/** Writes one record at sink.pos; the position after it, or -1 when it does not fit before sink.limit (nothing is committed). */
export type RecordEncoder = (sink: BinarySink, id: bigint, e: EventRecord) => number;

/** Reads records (or rows) from one buffer; `pos` is where the next read starts. */
export interface BinaryReader {
  pos: number;
  /** Where reading must stop: a read past it throws a RangeError. */
  end: number;
  /** Reads `buf` from now on, from its start to its end (one reader serves many messages). */
  use(buf: Buffer): void;
  /** Reads the current buffer from `pos` up to `end` (a new message in it: its bytes may have changed). */
  at(pos: number, end: number): void;
  u8(): number;
  u16(): number;
  u32(): number;
  f64(): number;
  text(): string;
  /** The `events` row (eventColumns() order, storedAt last) of the next record: what the writer binds. */
  row(storedAt: number): unknown[];
  /** The same row written into `out` from index `at` (a multi-row INSERT's parameters); the index after it. */
  rowInto(storedAt: number, out: unknown[], at: number): number;
  /** The next record, of the first `count` fields of the layout (fields past it are left out). */
  record(count: number): { id: bigint; event: Record<string, unknown> };
}

const q = (s: string): string => JSON.stringify(s);

// ---- encoder ------------------------------------------------------------------------------------

/** Bytes a kind's value takes besides its texts (a nullable field adds its presence byte). */
const FIXED_BYTES: Readonly<Record<EventField['kind'], number>> = { text: 4, real: 8, int: 8, epochMs: 8, bool: 1, instant: 10, pairs: 4 };

/**
 * Text goes byte by byte while it is ASCII (a native call costs more than a short loop), the rest
 * through Buffer's UTF-8 writer; the caller has checked room for 3 bytes per UTF-16 unit.
 */
const WRITE_TEXT = `function writeText(buf, view, p, s) {
  const n = s.length;
  let q = p + 4;
  let i = 0;
  for (; i < n; i++) { const c = s.charCodeAt(i); if (c >= 0x80) break; buf[q++] = c; }
  if (i < n) q += buf.utf8Write(i === 0 ? s : s.slice(i), q);
  view.setUint32(p, q - p - 4, true);
  return q;
}`;

/**
 * The statements writing one field. `rest` is the fixed bytes from this field to the record's end
 * (each kind's FIXED_BYTES): a check before a text makes room for the text and everything fixed
 * after it, so the fixed writes need no check of their own.
 */
function encodeField(f: EventField, v: string, rest: number, restAfter: number): string {
  let body: string;
  switch (f.kind) {
    case 'text':
      body = `if (p + ${rest} + 3 * ${v}.length > lim) return -1; p = writeText(buf, view, p, ${v});`;
      break;
    case 'real':
    case 'int':
    case 'epochMs':
      body = `view.setFloat64(p, ${v}, true); p += 8;`;
      break;
    case 'bool':
      body = `buf[p++] = ${v} ? 1 : 0;`;
      break;
    case 'instant':
      body = `view.setFloat64(p, ${v}.epochMs, true); view.setUint16(p + 8, ${v}.subMsTicks, true); p += 10;`;
      break;
    case 'pairs':
      body = `{ const list = ${v}; const n = list.length; if (p + ${rest} + 8 * n > lim) return -1; view.setUint32(p, n, true); p += 4;
        for (let i = 0; i < n; i++) { const kv = list[i]; if (p + ${restAfter} + 8 * (n - i) + 3 * (kv.clave.length + kv.valor.length) > lim) return -1;
          p = writeText(buf, view, p, kv.clave); p = writeText(buf, view, p, kv.valor); } }`;
      break;
  }
  return f.nullable ? `if (${v} === null) buf[p++] = 0; else { buf[p++] = 1; ${body} }` : body;
}

/** The encoder of a table (EVENT_FIELD_LIST; tests pass others). */
export function recordEncoder(fields: readonly EventField[]): RecordEncoder {
  const layout = binaryLayout(fields);
  // rest[i]: the fixed bytes of fields i.. to the end (rest[layout.length] = 0).
  const rest = layout.map((f) => FIXED_BYTES[f.kind] + (f.nullable ? 1 : 0));
  for (let i = rest.length - 1; i >= 0; i--) rest[i]! += rest[i + 1] ?? 0;
  rest.push(0);
  const fixed = 8 + rest[0]!;
  const body = `const buf = sink.buf, view = sink.view, lim = sink.limit; let p = sink.pos;
    if (p + ${fixed} > lim) return -1;
    view.setBigUint64(p, id, true); p += 8;
    ${layout.map((f, i) => encodeField(f, `e[${q(f.name)}]`, rest[i]!, rest[i + 1]!)).join('\n')}
    return p;`;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- generated from the table, never from input (see schema.ts)
  const withHelpers = new Function(`${WRITE_TEXT}\nreturn function encodeRecord(sink, id, e) { ${body} };`) as () => RecordEncoder;
  return withHelpers();
}

// ---- decoders -----------------------------------------------------------------------------------

/** Value expressions of a field read from the reader's locals (texts via text()). */
function readValue(f: EventField): string {
  switch (f.kind) {
    case 'text':
      return 'text()';
    case 'real':
    case 'int':
    case 'epochMs':
      return 'f64()';
    case 'bool':
      return 'u8() === 1';
    case 'instant':
      return '{ epochMs: f64(), subMsTicks: u16() }';
    case 'pairs':
      return 'pairs()';
  }
}

/**
 * Statements reading a field's column values (event-row.ts columnValues, same order) into locals
 * named `${name}_0`, `${name}_1`; the locals' names.
 */
function readColumns(f: EventField, name: string): { code: string; columns: string[] } {
  const value = (expression: string): string => (f.nullable ? `u8() === 0 ? null : ${expression}` : expression);
  const [a, b] = [`${name}_0`, `${name}_1`];
  switch (f.kind) {
    case 'text':
      return { code: `const ${a} = ${value('text()')};`, columns: [a] };
    case 'real':
    case 'int':
    case 'epochMs':
      return { code: `const ${a} = ${value('f64()')};`, columns: [a] };
    case 'bool':
      return { code: `const ${a} = ${value('u8()')};`, columns: [a] };
    case 'instant':
      return f.nullable
        ? { code: `let ${a} = null, ${b} = null; if (u8() !== 0) { ${a} = f64(); ${b} = u16(); }`, columns: [a, b] }
        : { code: `const ${a} = f64(), ${b} = u16();`, columns: [a, b] };
    case 'pairs':
      return { code: `const ${a} = pairsJson();`, columns: [a] };
  }
}

/**
 * The row is in table order (its columns'), the bytes in layout order: `reads` reads the values
 * into locals, `columns` names those locals in column order (row() returns them as one array
 * literal, rowInto() stores them into its array).
 */
function rowOrder(fields: readonly EventField[], layout: readonly EventField[]): { reads: string; columns: string[] } {
  const read = new Map(layout.map((f, i) => [f, readColumns(f, `c${i}`)]));
  const code = layout.map((f) => read.get(f)!.code);
  return { reads: code.join('\n    '), columns: ['recordId', ...fields.flatMap((f) => read.get(f)!.columns), 'storedAt'] };
}

/**
 * Source of a factory `(buf: Buffer) => BinaryReader` for one table: a JavaScript expression that
 * needs nothing but the globals (the writer thread evaluates it).
 */
function readerSource(fields: readonly EventField[]): string {
  const layout = binaryLayout(fields);
  const reads = layout.map((f, i) => {
    const value = f.nullable ? `(u8() === 0 ? null : ${readValue(f)})` : readValue(f);
    const absent = f.whenAbsent === undefined ? 'undefined' : JSON.stringify(f.whenAbsent);
    return `const ${local(i)} = count > ${i} ? ${value} : ${absent === 'undefined' ? 'undefined' : `JSON.parse(${q(absent)})`};`;
  });
  // The event's keys in table order, as the JSON codec and the record type have them.
  const locals = new Map(layout.map((f, i) => [f, local(i)]));
  const tableOrder = fields.map((f) => `${q(f.name)}: ${locals.get(f) ?? 'undefined'}`).join(', ');
  const row = rowOrder(fields, layout);
  return `(function (initial) {
  let buf = initial;
  let view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const r = { pos: 0, end: buf.length, use, at, u8, u16, u32, f64, text, row, rowInto, record };
  function use(b) { buf = b; view = new DataView(b.buffer, b.byteOffset, b.byteLength); at(0, b.length); }
  // Texts are cut from one latin1 string of the bytes to the end (one native call per message, not
  // one per text); only ASCII texts, where latin1 and UTF-8 agree. Dropped when the window moves.
  let latin = '';
  let latinFrom = 0;
  function at(pos, end) { r.pos = pos; r.end = end; latin = ''; latinFrom = pos; }
  function need(n) { if (r.pos + n > r.end) throw new RangeError('binary event record cut short'); }
  function u8() { need(1); return buf[r.pos++]; }
  function u16() { need(2); const v = view.getUint16(r.pos, true); r.pos += 2; return v; }
  function u32() { need(4); const v = view.getUint32(r.pos, true); r.pos += 4; return v; }
  function f64() { need(8); const v = view.getFloat64(r.pos, true); r.pos += 8; return v; }
  function text() {
    const n = u32(); need(n);
    const start = r.pos; const stop = start + n; r.pos = stop;
    // ASCII? Four bytes at a time, then the rest.
    let i = start;
    for (; i + 4 <= stop; i += 4) if ((view.getUint32(i, true) & 0x80808080) !== 0) return buf.utf8Slice(start, stop);
    for (; i < stop; i++) if (buf[i] >= 0x80) return buf.utf8Slice(start, stop);
    if (latin === '' || start < latinFrom) { latinFrom = start; latin = buf.latin1Slice(start, r.end); }
    return latin.substring(start - latinFrom, stop - latinFrom);
  }
  function pairs() {
    const n = u32(); need(8 * n);
    const list = [];
    for (let i = 0; i < n; i++) { const clave = text(); const valor = text(); list.push({ clave, valor }); }
    return list;
  }
  /** The list as its SQLite column holds it: JSON.stringify of [{ clave, valor }, ...], built as text. */
  function pairsJson() {
    const n = u32(); need(8 * n);
    if (n === 0) return '[]';
    let json = '[';
    for (let i = 0; i < n; i++) json += (i === 0 ? '{"clave":' : ',{"clave":') + JSON.stringify(text()) + ',"valor":' + JSON.stringify(text()) + '}';
    return json + ']';
  }
  function id() { need(8); const v = view.getBigUint64(r.pos, true); r.pos += 8; return v; }
  function row(storedAt) {
    const recordId = id();
    ${row.reads}
    return [${row.columns.join(', ')}];
  }
  function rowInto(storedAt, out, at) {
    const recordId = id();
    ${row.reads}
    ${row.columns.map((c, i) => `out[at + ${i}] = ${c};`).join(' ')}
    return at + ${row.columns.length};
  }
  function record(count) {
    const recordId = id();
    ${reads.join('\n    ')}
    return { id: recordId, event: { ${tableOrder} } };
  }
  return r;
})`;
}

const local = (i: number): string => `f${i}`;

/** Compiles readerSource (the main thread's side: wire decoding, tests). */
export function readerFactory(fields: readonly EventField[]): (buf: Buffer) => BinaryReader {
  return compileFunction<() => (buf: Buffer) => BinaryReader>([], `return ${readerSource(fields)};`)();
}

/** The layout of EVENT_FIELDS. */
export const EVENT_BINARY = {
  encode: recordEncoder(EVENT_FIELD_LIST),
  reader: readerFactory(EVENT_FIELD_LIST),
  readerSource: readerSource(EVENT_FIELD_LIST),
  fieldCount: EVENT_FIELD_LIST.length,
};

/** A sink over a fresh buffer of `size` bytes. */
export function bufferSink(size: number): BinarySink {
  const buf = Buffer.allocUnsafeSlow(size); // its own ArrayBuffer: transferable, never the shared pool
  return { buf, view: new DataView(buf.buffer, buf.byteOffset, buf.byteLength), pos: 0, limit: buf.length };
}

/** Encodes with `encode` at sink.pos, doubling the sink's buffer (keeping what precedes pos) until the record fits. */
export function encodeGrowing(sink: BinarySink, encode: RecordEncoder, id: bigint, e: EventRecord): void {
  for (;;) {
    const end = encode(sink, id, e);
    if (end >= 0) {
      sink.pos = end;
      return;
    }
    const bigger = Buffer.allocUnsafeSlow(sink.buf.length * 2);
    sink.buf.copy(bigger, 0, 0, sink.pos);
    sink.buf = bigger;
    sink.view = new DataView(bigger.buffer, bigger.byteOffset, bigger.byteLength);
    sink.limit = bigger.length;
  }
}

/** Writes `s` as u32 byte length + UTF-8 at p, the position after it (the caller checked room for 4 + 3 × s.length bytes). */
export const writeText = compileFunction<() => (buf: Buffer, view: DataView, p: number, s: string) => number>([], `${WRITE_TEXT}\nreturn writeText;`)();
