/**
 * Wire version 3 (shared/events/protobuf*.ts): every record of the corpus (test/helpers/
 * event-corpus.ts) comes back exactly; protobufjs, reading the shipped events.proto, reads what we
 * write as the same record and re-encodes it to the same bytes (we write canonical proto3), and
 * we read what it writes, explicit zeros included. The decoder takes any conformant writer's
 * message (fields in any order or repeated, unknown fields of every wire type) and refuses the
 * rest with a WireFormatError naming the reason. protoc and Python's protobuf check the same
 * corpus in test/scale-out/event-protobuf-libraries.scale-out.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { messageId } from '../../../../shared/backends/ids/highest-in-topic.js';
import { EVENT_FIELD_LIST, exampleEventRecord, type EventRecord } from '../../../../shared/events/schema.js';
import { MAX_TICKS_MS } from '../../../../shared/events/protobuf.js';
import { protobufMessageId } from '../../../../shared/events/protobuf-decode.js';
import { decodeEvent, encodeEvent, eventWireCodec, WIRE_HEADERS, wireHeadersOf, WireFormatError } from '../../../../shared/events/wire.js';
import { eventCorpus } from '../../../helpers/event-corpus.js';
import { EVERY_KIND_FIELDS, sample } from '../../../helpers/event-samples.js';
import { fromTicks, libraryDecode, libraryEncode, ticksText } from '../../../helpers/protobuf-library.js';
import { Rng } from '../../../fuzz/prng.js';

const ROOT = path.resolve(import.meta.dirname, '../../../..');
const CORPUS = eventCorpus();
const v3 = (id: bigint, e: EventRecord): Buffer => encodeEvent(id, e, 3);

/** A message's fields as [tag bytes + value bytes] pieces, in order (wire types 0, 1, 2, 5). */
function fieldsOf(message: Buffer): Buffer[] {
  const pieces: Buffer[] = [];
  const reader = protobuf.Reader.create(message);
  while (reader.pos < reader.len) {
    const start = reader.pos;
    const tag = reader.uint32();
    reader.skipType(tag & 7);
    pieces.push(message.subarray(start, reader.pos));
  }
  return pieces;
}

const writer = () => protobuf.Writer.create();
const bytes = (w: protobuf.Writer): Buffer => Buffer.from(w.finish());

describe('wire version 3: the corpus', () => {
  it('round-trips every record, -0 and every id to 2^64-1 included', () => {
    expect(CORPUS.length).toBeGreaterThan(500);
    for (const { id, event } of CORPUS) {
      const back = decodeEvent(v3(id, event));
      expect(back).toEqual({ id, event });
      expect(Object.is(back.event.latitud, event.latitud)).toBe(true);
      expect(Object.keys(back.event)).toEqual(EVENT_FIELD_LIST.map((f) => f.name));
    }
  });

  it('protobufjs reads every message we write as the record we wrote, and writes the same bytes back (canonical proto3)', () => {
    for (const { id, event } of CORPUS) {
      const message = v3(id, event);
      expect(libraryDecode(message)).toEqual({ id, event });
      // Buffer.equals: vitest's deep equality walks a 100 kB buffer byte by byte as an object.
      expect(libraryEncode(id, event).equals(message), `record with id ${id}`).toBe(true);
    }
  });

  it('reads every message protobufjs writes, zeros written out included', () => {
    for (const { id, event } of CORPUS) {
      expect(decodeEvent(libraryEncode(id, event))).toEqual({ id, event });
      expect(decodeEvent(libraryEncode(id, event, true))).toEqual({ id, event });
    }
  });

  it('is never larger than version 2 on the corpus', () => {
    for (const { id, event } of CORPUS) expect(v3(id, event).length).toBeLessThanOrEqual(encodeEvent(id, event, 2).length);
  });
});

describe('wire version 3: reading any conformant writer', () => {
  const record = CORPUS[0]!;
  const message = v3(record.id, record.event);

  it('takes fields in any order, the last of a repeated field, and skips unknown fields of every wire type', () => {
    const pieces = fieldsOf(message);
    const reversed = Buffer.concat([...pieces].reverse());
    // Sensores keep their order; everything else may come in any order.
    const sensorsTag = 0x9a;
    const sensors = pieces.filter((p) => p[0] === sensorsTag);
    const others = pieces.filter((p) => p[0] !== sensorsTag).reverse();
    expect(decodeEvent(Buffer.concat([...others, ...sensors]))).toEqual(record);
    expect(decodeEvent(reversed).event.sensors).toEqual([...record.event.sensors].reverse());
    const earlier = bytes(writer().uint32((6 << 3) | 1).double(12.5).uint32((3 << 3) | 2).string('earlier'));
    expect(decodeEvent(Buffer.concat([earlier, message]))).toEqual(record);
    const unknown = bytes(
      writer()
        .uint32((100 << 3) | 0).uint64('18446744073709551615')
        .uint32((101 << 3) | 1).fixed64(5)
        .uint32((102 << 3) | 2).bytes(Buffer.from([1, 2, 3]))
        .uint32((103 << 3) | 5).fixed32(7)
        .uint32((104 << 3) | 3).uint32((1 << 3) | 0).uint32(9).uint32((105 << 3) | 3).uint32((105 << 3) | 4).uint32((104 << 3) | 4)
        // A known number with another wire type is an unknown field (C++ and upb read it so).
        .uint32((6 << 3) | 0).uint32(1),
    );
    expect(decodeEvent(Buffer.concat([unknown, message, unknown]))).toEqual(record);
  });

  it('reads overlong varints and a sensor message with unknown fields', () => {
    // valid_position = true as a 10-byte varint, a tag written in 3 bytes, a length in 2.
    const overlong = Buffer.from([0xd8, 0x80, 0x00, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]);
    const base = { ...exampleEventRecord(), validPosition: false, valido: null };
    const decoded = decodeEvent(Buffer.concat([v3(9n, base), overlong]));
    expect(decoded.event.validPosition).toBe(true);
    const sensor = bytes(writer().uint32((19 << 3) | 2).fork().uint32((7 << 3) | 0).uint32(1).uint32(10).string('k').uint32(18).string('v').ldelim());
    expect(decodeEvent(Buffer.concat([v3(9n, base), sensor])).event.sensors).toEqual([{ clave: 'k', valor: 'v' }]);
  });

  it('refuses what is not a VehicleEvent with a WireFormatError naming why, at every cut and every mutation', () => {
    const good = v3(5n, exampleEventRecord());
    const cases: [Buffer, RegExp][] = [
      [Buffer.concat([good, Buffer.from([0x07])]), /field number 0/],
      [Buffer.concat([good, bytes(writer().uint32((30 << 3) | 6))]), /wire type 6/],
      [Buffer.concat([good, bytes(writer().uint32((30 << 3) | 7))]), /wire type 7/],
      [Buffer.concat([good, bytes(writer().uint32((30 << 3) | 0)), Buffer.from([...Array<number>(10).fill(0x80), 0])]), /varint longer than 10 bytes/],
      [Buffer.concat([good, bytes(writer().uint32((30 << 3) | 3).uint32((31 << 3) | 4))]), /group ends with another number/],
      [Buffer.concat([good, bytes(writer().uint32((30 << 3) | 3))]), /cut short/],
      [Buffer.concat([good, Buffer.from([0x1a, 0x02, 0xc3, 0x28])]), /event field dominio is not UTF-8/],
      [Buffer.concat([good, Buffer.from([0x9a, 0x01, 0x04, 0x0a, 0x02, 0xed, 0xa0])]), /event field clave is not UTF-8/],
      [Buffer.concat([good, bytes(writer().uint32((6 << 3) | 1).double(Number.NaN))]), /event field latitud is not a number/],
      [Buffer.concat([good, bytes(writer().uint32((17 << 3) | 1).sfixed64('9007199254740993'))]), /event field receivedAt is not whole epoch ms/],
      [good.subarray(9), /event message has no valid id/],
      [Buffer.concat([good, bytes(writer().uint32(9).fixed64(0))]), /event message has no valid id/],
    ];
    for (const [input, reason] of cases) expect(() => decodeEvent(input), reason.source).toThrow(reason);
    for (const [input] of cases) expect(() => decodeEvent(input)).toThrow(WireFormatError);
    // A cut inside a field is refused; a cut between fields is a shorter valid message (protobuf
    // has no end marker; Kafka hands over whole values). Nothing else may escape.
    const full = v3(CORPUS[9]!.id, CORPUS[9]!.event);
    for (let cut = 1; cut < full.length; cut++) {
      try {
        decodeEvent(full.subarray(0, cut));
      } catch (err) {
        expect(err, `cut at ${cut}`).toBeInstanceOf(WireFormatError);
      }
    }
    for (let i = 0; i < 3000; i++) {
      const rng = new Rng(77, i);
      const m = Buffer.from(v3(CORPUS[i % 40]!.id, CORPUS[i % 40]!.event));
      for (let k = rng.range(1, 4); k > 0; k--) m[rng.int(m.length)] = rng.int(256);
      try {
        const { id, event } = decodeEvent(m[0] === 0x7b || m[0] === 2 ? Buffer.concat([Buffer.from([9]), m]) : m);
        expect(id > 0n && typeof event.dominio === 'string').toBe(true);
      } catch (err) {
        expect(err, `mutation ${i}`).toBeInstanceOf(WireFormatError);
      }
    }
  });
});

describe('wire version 3: instants as 100 ns counts', () => {
  it('writes epoch ms + ticks as the sfixed64 count exactly, before 1970 and to the edge of the range', () => {
    const rng = new Rng(3);
    const instants = [
      { epochMs: 0, subMsTicks: 1 },
      { epochMs: -1, subMsTicks: 0 },
      { epochMs: -1, subMsTicks: 9999 },
      { epochMs: MAX_TICKS_MS, subMsTicks: 9999 },
      { epochMs: -MAX_TICKS_MS, subMsTicks: 0 },
      { epochMs: 2 ** 32, subMsTicks: 5 },
      { epochMs: -(2 ** 32) - 1, subMsTicks: 5 },
      ...Array.from({ length: 2000 }, () => ({ epochMs: rng.range(-MAX_TICKS_MS, MAX_TICKS_MS), subMsTicks: rng.int(10_000) })),
    ];
    for (const t of instants) {
      const m = v3(1n, { ...exampleEventRecord(), eventTime: t });
      const at = m.indexOf(0x71) + 1; // field 14, fixed64
      expect(m.readBigInt64LE(at).toString()).toBe(ticksText(t));
      expect(decodeEvent(m).event.eventTime).toEqual(t);
      expect(fromTicks(m.readBigInt64LE(at))).toEqual(t);
    }
  });

  it('refuses to write an instant whose count does not fit 64 bits, naming why', () => {
    expect(() => v3(1n, { ...exampleEventRecord(), eventTime: { epochMs: MAX_TICKS_MS + 1, subMsTicks: 0 } })).toThrow(/does not fit wire version 3/);
    expect(() => v3(1n, { ...exampleEventRecord(), receptionTime: { epochMs: -MAX_TICKS_MS - 1, subMsTicks: 0 } })).toThrow(RangeError);
  });
});

describe('wire version 3 in the release', () => {
  const messages = (file: string): Buffer[] =>
    fs
      .readFileSync(path.join(ROOT, 'test/fixtures/events', file), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => Buffer.from(l, file.endsWith('.hex') ? 'hex' : 'utf8'));

  it('v3.hex holds the records of v1.jsonl and v2.hex, and this release writes it byte for byte', () => {
    const [json, binary, proto] = [messages('v1.jsonl'), messages('v2.hex'), messages('v3.hex')];
    expect(proto).toHaveLength(json.length);
    proto.forEach((message, i) => {
      const decoded = decodeEvent(message);
      expect(decoded).toEqual(decodeEvent(json[i]!));
      expect(decoded).toEqual(decodeEvent(binary[i]!));
      expect(libraryDecode(message)).toEqual(decoded);
      expect(v3(decoded.id, decoded.event).toString('hex')).toBe(message.toString('hex'));
    });
  });

  it('a field added later reads as its zero from an older writer, and an older reader skips it', () => {
    const older = EVERY_KIND_FIELDS.filter((f) => f.whenAbsent === undefined);
    const numbers = Object.fromEntries(EVERY_KIND_FIELDS.map((f, i) => [f.name, 2 + i]));
    const [now, before] = [eventWireCodec(EVERY_KIND_FIELDS, numbers), eventWireCodec(older, numbers)];
    const zeros = Object.fromEntries(EVERY_KIND_FIELDS.filter((f) => f.whenAbsent !== undefined).map((f) => [f.name, f.whenAbsent]));
    for (const record of sample(EVERY_KIND_FIELDS, 100)) {
      const olderRecord = Object.fromEntries(older.map((f) => [f.name, record[f.name]])) as unknown as EventRecord;
      expect(now.decode(before.encode(3n, olderRecord, 3))).toEqual({ id: 3n, event: { ...record, ...zeros } });
      expect(before.decode(now.encode(3n, record as unknown as EventRecord, 3))).toEqual({ id: 3n, event: olderRecord });
    }
  });

  it('the id scan reads the id wherever a writer put it, and nothing from what is not protobuf', () => {
    for (const { id, event } of CORPUS.slice(0, 50)) {
      expect(messageId(v3(id, event))).toBe(id);
      const [first, ...rest] = fieldsOf(libraryEncode(id, event));
      expect(messageId(Buffer.concat([...rest, first!]))).toBe(id);
    }
    expect(protobufMessageId(Buffer.from([0x09, 1, 2]))).toBeNull();
    expect(protobufMessageId(Buffer.from([0x12, 0x05, 0x61]))).toBeNull();
    expect(protobufMessageId(Buffer.from([0x1a, 0x00]))).toBeNull();
    expect(messageId(encodeEvent(7n, exampleEventRecord(), 1))).toBe(7n);
    expect(messageId(encodeEvent(7n, exampleEventRecord(), 2))).toBe(7n);
  });

  it('headers name each version’s format; a re-driven message gets those of the version it decodes as, garbage none', () => {
    expect(WIRE_HEADERS[3]['content-type']).toBe('application/x-protobuf; messageType=prestadores.events.v1.VehicleEvent');
    expect(WIRE_HEADERS[1]['content-type']).toBe('application/json');
    for (const v of [1, 2, 3] as const) expect(wireHeadersOf(encodeEvent(8n, exampleEventRecord(), v))).toBe(WIRE_HEADERS[v]);
    expect(wireHeadersOf(Buffer.from('not an event'))).toEqual({});
    expect(wireHeadersOf(Buffer.from([0x09, 1, 2, 3]))).toEqual({});
  });
});
