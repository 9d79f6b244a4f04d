/**
 * The corpus the wire codecs are held to libraries on (protobufjs in the unit layer; protoc and
 * Python's protobuf in test/scale-out/event-protobuf-libraries.scale-out.test.ts): fixed, so every run and
 * every library sees the same records.
 *
 * - generated records of every field (event-samples.ts, fast-check with a fixed seed);
 * - edge records: ids to 2^64-1, .NET's first and last instants with ticks, instants before 1970,
 *   -0, the largest and smallest doubles, empty text against null, NUL and astral characters,
 *   a 100 kB text, 300 sensors, lengths at the varint steps (127/128, 16383/16384 bytes);
 * - records whose texts are the mutation fuzzer's hostile strings (test/fuzz/values.ts), drawn
 *   with its seeded generator. A lone surrogate there is made well-formed first: a record never
 *   holds one (the scanner and the form decoder take UTF-8 in), and UTF-8 cannot carry it.
 */
import { EVENT_FIELD_LIST, exampleEventRecord, type EventRecord } from '../../shared/events/schema.js';
import { Rng } from '../fuzz/prng.js';
import { hostileString } from '../fuzz/values.js';
import { sample } from './event-samples.js';

export interface CorpusEntry {
  id: bigint;
  event: EventRecord;
}

const NET_MIN_MS = -62_135_596_800_000; // 0001-01-01T00:00:00Z
const NET_MAX_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
const IDS = [1n, 127n, 128n, 2n ** 32n, 2n ** 53n + 1n, 2n ** 63n - 1n, 2n ** 63n, 2n ** 64n - 1n];
const DOUBLES = [-0, 0, 0.1 + 0.2, -34.603722, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, -5e-324, 2.2250738585072014e-308, 1e21, 123456789.123, -1];

/** Records at the edges of what the table allows. */
export function edgeRecords(): EventRecord[] {
  const base = exampleEventRecord();
  return [
    { ...base, eventTime: { epochMs: NET_MIN_MS, subMsTicks: 1 }, receptionTime: { epochMs: NET_MAX_MS, subMsTicks: 9999 }, receptionTimeText: '9999-12-31T23:59:59.9999999' },
    { ...base, eventTime: { epochMs: -1, subMsTicks: 9999 }, receptionTime: { epochMs: 0, subMsTicks: 0 }, receivedAt: -1 },
    { ...base, eventTime: { epochMs: 0, subMsTicks: 0 }, receptionTime: { epochMs: -1, subMsTicks: 0 }, receivedAt: 0 },
    { ...base, latitud: -0, longitud: Number.MAX_VALUE, altitud: -Number.MIN_VALUE, velocidad: 5e-324, rumbo: -0, valido: false },
    { ...base, latitud: 0, longitud: 0, altitud: 0, velocidad: 0, rumbo: 0, valido: true, validPosition: false },
    { ...base, systemUser: '', dominio: 'ñandú 🚗', nroSerie: '\u0000\uffff', crudo: 'x'.repeat(100_000) + 'é', eventTimeText: 'a'.repeat(127), codigo: 'b'.repeat(128) },
    { ...base, crudo: '', receptionTimeText: '', receivedAt: Number.MAX_SAFE_INTEGER, operation: 'é'.repeat(8191) + 'x', dedupeKey: 'é'.repeat(8192) },
    { ...base, receivedAt: Number.MIN_SAFE_INTEGER, nroSerie: 'y'.repeat(16_383), codigo: 'z'.repeat(16_384) },
    { ...base, sensors: Array.from({ length: 300 }, (_, i) => ({ clave: i % 3 === 0 ? '' : `k${i}`, valor: i % 2 === 0 ? '' : `valor ${'🚗'.repeat(i % 5)}` })) },
    { ...base, sensors: [{ clave: '', valor: '' }, { clave: 'x'.repeat(200), valor: '' }, { clave: '', valor: 'ü'.repeat(70) }] },
  ];
}

/** Lone surrogates replaced by U+FFFD, as every UTF-8 decoder in front of a record does (String#toWellFormed). */
const wellFormed = (s: string): string => s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

/** Records whose texts come from the fuzzer's hostile strings, numbers from the edge doubles. */
function hostileRecords(n: number): EventRecord[] {
  const out: EventRecord[] = [];
  for (let i = 0; i < n; i++) {
    const rng = new Rng(20261128, i);
    const text = (): string => wellFormed(hostileString(rng).slice(0, 20_000));
    const real = (): number => rng.pick(DOUBLES);
    const instant = () => ({ epochMs: rng.range(NET_MIN_MS / 1000, NET_MAX_MS / 1000) * 1000 + rng.int(1000), subMsTicks: rng.int(10_000) });
    out.push({
      ...exampleEventRecord(),
      systemUser: text(),
      dominio: text(),
      nroSerie: text(),
      codigo: text(),
      latitud: real(),
      longitud: real(),
      altitud: real(),
      velocidad: real(),
      rumbo: rng.chance(0.3) ? null : real(),
      validPosition: rng.chance(0.5),
      valido: rng.pick([null, true, false]),
      eventTimeText: text(),
      eventTime: instant(),
      receptionTimeText: rng.chance(0.3) ? null : text(),
      receptionTime: rng.chance(0.3) ? null : instant(),
      receivedAt: rng.range(NET_MIN_MS / 1000, NET_MAX_MS / 1000) * 1000 + rng.int(1000),
      crudo: rng.chance(0.3) ? null : text(),
      sensors: Array.from({ length: rng.int(4) }, () => ({ clave: text(), valor: text() })),
      operation: text(),
      dedupeKey: text(),
    });
  }
  return out;
}

/** The whole corpus, ids included (every id shape against every kind of record). */
export function eventCorpus(): CorpusEntry[] {
  const records = [...edgeRecords(), ...hostileRecords(200), ...sample(EVENT_FIELD_LIST, 300).map((r) => r as EventRecord)];
  return records.map((event, i) => ({ id: IDS[i % IDS.length]! + BigInt(i % IDS.length === IDS.length - 1 ? 0 : i), event }));
}
