/**
 * The binary event record (shared/events/binary.ts): every record the table allows comes back
 * exactly, edge values included; the row the writer thread binds equals the one the inline path
 * builds (EVENT_ROWS.toRow); a layout that moved fields `addedLater` to the end reads older,
 * shorter records with those fields' zeros; input cut short is refused, never misread. Then the
 * same record as a Kafka message of version 2 (wire.ts): older and newer writers, refusals, the id scan.
 */
import { describe, expect, it } from 'vitest';
import { binaryLayout, bufferSink, encodeGrowing, EVENT_BINARY, readerFactory, recordEncoder } from '../../../../shared/events/binary.js';
import { EVENT_FIELD_LIST, exampleEventRecord, type EventRecord } from '../../../../shared/events/schema.js';
import { EVENT_ROWS } from '../../../../shared/backends/embedded/event-row.js';
import { messageId } from '../../../../shared/backends/ids/highest-in-topic.js';
import { decodeEvent, encodeEvent, eventWireCodec, WireFormatError } from '../../../../shared/events/wire.js';
import { EVERY_KIND_FIELDS, sample } from '../../../helpers/event-samples.js';

const NET_MIN_MS = -62_135_596_800_000; // 0001-01-01T00:00:00Z
const NET_MAX_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

function encodeAll(records: readonly { id: bigint; event: EventRecord }[], encode = EVENT_BINARY.encode): { buf: Buffer; end: number } {
  const sink = bufferSink(16);
  for (const { id, event } of records) encodeGrowing(sink, encode, id, event);
  return { buf: sink.buf, end: sink.pos };
}

/** Records at the edges of what the table allows. */
function edgeRecords(): EventRecord[] {
  const base = exampleEventRecord();
  const long = 'x'.repeat(8192);
  return [
    { ...base, eventTime: { epochMs: NET_MIN_MS, subMsTicks: 1 }, receptionTime: { epochMs: NET_MAX_MS, subMsTicks: 9999 }, receptionTimeText: '9999-12-31T23:59:59.9999999' },
    { ...base, latitud: -0, longitud: Number.MAX_VALUE, altitud: -Number.MIN_VALUE, velocidad: 5e-324, rumbo: null, valido: false },
    { ...base, systemUser: '', dominio: 'ñandú 🚗', nroSerie: '\u0000\uffff', crudo: long + 'é', eventTimeText: 'a'.repeat(32), codigo: 'b'.repeat(33) },
    { ...base, crudo: '', receivedAt: Number.MAX_SAFE_INTEGER, receptionTimeText: 'ß'.repeat(40) },
    { ...base, sensors: Array.from({ length: 300 }, (_, i) => ({ clave: `k${i}`, valor: i % 2 === 0 ? '' : `valor ${'🚗'.repeat(i % 5)}` })) },
  ];
}

describe('binary event record', () => {
  it('round-trips generated records, in sequence in one buffer', () => {
    const records = sample(EVENT_FIELD_LIST, 400).map((r, i) => ({ id: BigInt(i) * 987_654_321_987n + 1n, event: r as EventRecord }));
    const { buf, end } = encodeAll(records);
    const reader = EVENT_BINARY.reader(buf);
    reader.at(0, end);
    for (const { id, event } of records) expect(reader.record(EVENT_BINARY.fieldCount)).toEqual({ id, event });
    expect(reader.pos).toBe(end);
  });

  it('keeps edge values exactly: ids to 2^64-1, .NET min and max instants with ticks, -0, long and non-ASCII texts, many sensors', () => {
    const ids = [1n, 2n ** 53n + 1n, 2n ** 63n - 1n, 2n ** 64n - 1n, 0n];
    const records = edgeRecords().map((event, i) => ({ id: ids[i]!, event }));
    const { buf, end } = encodeAll(records);
    const reader = EVENT_BINARY.reader(buf);
    reader.at(0, end);
    for (const { id, event } of records) {
      const back = reader.record(EVENT_BINARY.fieldCount);
      expect(back.id).toBe(id);
      expect(back.event).toEqual(event);
      expect(Object.is(back.event.latitud, event.latitud)).toBe(true);
      expect(Object.keys(back.event)).toEqual(EVENT_FIELD_LIST.map((f) => f.name));
    }
  });

  it('decodes rows equal to the inline path’s (EVENT_ROWS.toRow)', () => {
    const records = [...edgeRecords(), ...sample(EVENT_FIELD_LIST, 200).map((r) => r as EventRecord)].map((event, i) => ({ id: BigInt(i + 1), event }));
    const { buf, end } = encodeAll(records);
    const reader = EVENT_BINARY.reader(buf);
    reader.at(0, end);
    for (const { id, event } of records) expect(reader.row(1234)).toEqual(EVENT_ROWS.toRow(id, event, 1234));
  });

  it('puts fields added later last, so an older record (a prefix) reads with their zeros', () => {
    const layout = binaryLayout(EVERY_KIND_FIELDS);
    const firstCount = layout.findIndex((f) => f.whenAbsent !== undefined);
    expect(layout.slice(firstCount).every((f) => f.whenAbsent !== undefined)).toBe(true);
    const encode = recordEncoder(EVERY_KIND_FIELDS);
    const reader = readerFactory(EVERY_KIND_FIELDS);
    for (const record of sample(EVERY_KIND_FIELDS, 100)) {
      const { buf, end } = encodeAll([{ id: 9n, event: record as unknown as EventRecord }], encode);
      const full = reader(buf);
      full.at(0, end);
      expect(full.record(layout.length)).toEqual({ id: 9n, event: record });
      const older = reader(buf);
      const zeros = Object.fromEntries(layout.slice(firstCount).map((f) => [f.name, f.whenAbsent]));
      expect(older.record(firstCount)).toEqual({ id: 9n, event: { ...record, ...zeros } });
      // Rows come in column (table) order though the bytes are in layout order.
      const rows = reader(buf);
      expect(rows.row(5)).toHaveLength(2 + EVERY_KIND_FIELDS.reduce((n, f) => n + (f.kind === 'instant' ? 2 : 1), 0));
    }
  });

  it('refuses input cut short at any byte, and reports a record that does not fit', () => {
    const { buf, end } = encodeAll([{ id: 5n, event: edgeRecords()[2]! }]);
    for (const cut of [0, 1, 8, 9, 20, end - 1]) {
      const reader = EVENT_BINARY.reader(buf.subarray(0, cut));
      expect(() => reader.record(EVENT_BINARY.fieldCount), `cut at ${cut}`).toThrow(RangeError);
    }
    const sink = bufferSink(64);
    sink.limit = 40;
    expect(EVENT_BINARY.encode(sink, 1n, exampleEventRecord())).toBe(-1);
    expect(sink.pos).toBe(0);
  });
});

describe('Kafka messages of version 2 (binary)', () => {
  const codec = eventWireCodec(EVERY_KIND_FIELDS);

  it('fills the zero of each field added later that an older message stops before, and ignores fields a newer one has', () => {
    const layout = binaryLayout(EVERY_KIND_FIELDS);
    const known = layout.findIndex((f) => f.whenAbsent !== undefined);
    for (const record of sample(EVERY_KIND_FIELDS, 50)) {
      const message = codec.encode(7n, record as unknown as EventRecord, 2);
      expect(message[0]).toBe(2);
      expect(codec.decode(message)).toEqual({ id: 7n, event: record });
      // An older writer: the count says fewer fields, and its bytes stop there.
      const reader = readerFactory(EVERY_KIND_FIELDS)(message);
      reader.pos = 2;
      reader.record(known);
      const older = Buffer.concat([Buffer.from([2, known]), message.subarray(2, reader.pos)]);
      const zeros = Object.fromEntries(layout.slice(known).map((f) => [f.name, f.whenAbsent]));
      expect(codec.decode(older)).toEqual({ id: 7n, event: { ...record, ...zeros } });
      // A newer writer: one more field than this reader knows, after the others.
      const newer = Buffer.concat([Buffer.from([2, layout.length + 1]), message.subarray(2), Buffer.from([1, 2, 3])]);
      expect(codec.decode(newer)).toEqual({ id: 7n, event: record });
    }
  });

  it('refuses what a store could not hold or a message cut short, naming the reason', () => {
    const good = encodeEvent(5n, exampleEventRecord(), 2);
    const patched = (offset: number, write: (b: Buffer) => void): Buffer => {
      const copy = Buffer.from(good);
      write(copy.subarray(offset));
      return copy;
    };
    // Where the example's values are in the bytes (each is unique there).
    const latitud = good.indexOf(Buffer.from(new Float64Array([-34.6]).buffer));
    expect(latitud).toBeGreaterThan(0);
    expect(() => decodeEvent(patched(latitud, (b) => b.writeDoubleLE(Number.NaN)))).toThrow(new WireFormatError('event field latitud is not a number'));
    expect(() => decodeEvent(patched(latitud, (b) => b.writeDoubleLE(Number.POSITIVE_INFINITY)))).toThrow(/latitud is not a number/);
    const ticks = good.indexOf(Buffer.from(new Float64Array([1_714_554_000_000]).buffer)) + 8;
    expect(() => decodeEvent(patched(ticks, (b) => b.writeUInt16LE(10_000)))).toThrow(/eventTime is not an instant/);
    expect(() => decodeEvent(patched(2, (b) => b.writeBigUInt64LE(0n)))).toThrow(new WireFormatError('event message has no valid id'));
    expect(() => decodeEvent(patched(1, (b) => (b[0] = 3)))).toThrow(/fewer than the 20 every message carries/);
    for (const cut of [1, 2, 9, 30, good.length - 1]) expect(() => decodeEvent(good.subarray(0, cut))).toThrow(WireFormatError);
    expect(decodeEvent(good).id).toBe(5n);
  });

  it('the id scan reads the id of both versions without decoding the event', () => {
    const record = exampleEventRecord();
    for (const id of [1n, 2n ** 53n + 1n, 2n ** 64n - 1n]) {
      expect(messageId(encodeEvent(id, record, 2))).toBe(id);
      expect(messageId(encodeEvent(id, record, 1))).toBe(id);
    }
    expect(messageId(Buffer.from([2, 20, 1]))).toBeNull();
  });
});
