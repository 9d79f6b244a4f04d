/**
 * CPU per event of the Kafka message codec: version 1 (JSON), version 2 (the binary record of
 * shared/events/binary.ts) and version 3 (protobuf, shared/events/protobuf*.ts), encode (the
 * gateway) and decode with its checks (the worker), in alternating rounds on the same events; and
 * the message size. Ratios are against v2 (the goal: v3 within 1.2x of its CPU, no larger) and v1.
 * Last, the same version 3 messages written and read by protobufjs, the library the hand-written
 * codec stands in for (the standards' measured exception): its record ↔ message mapping included.
 *
 *   npx tsx bench/event-codec.ts [--events 50000] [--rounds 5]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Long from 'long';
import protobuf from 'protobufjs';
import { decodeEvent, encodeEvent, type WireVersion } from '../shared/events/wire.js';
import { exampleEventRecord, type EventRecord } from '../shared/events/schema.js';
import { PROTO_FILE, PROTO_MESSAGE, PROTO_PACKAGE } from '../shared/events/protobuf-fields.js';
import { sampleEvent } from '../test/helpers/event-records.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const EVENTS = arg('events', 50_000);
const ROUNDS = arg('rounds', 5);

/** A LoginYInsertarEvento2 event as a tracker sends it: reception time, raw payload, two sensors. */
function typical(i: number): EventRecord {
  return sampleEvent(i, { latitud: -34.6 + (i % 100) / 1000, longitud: -58.4 - (i % 100) / 1000, dedupeKey: `Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2Fy${i}` });
}

/** The plain LoginYInsertarEvento: no reception time, no raw payload, no sensors. */
function minimal(i: number): EventRecord {
  return { ...exampleEventRecord(), dominio: `AB${i % 5000}CD`, dedupeKey: `key-${i}` };
}

const cpuNs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};

interface Codec {
  encode(id: bigint, e: EventRecord): Buffer | Uint8Array;
  /** Reads one message; a number from it (so nothing is optimised away). */
  decode(m: Buffer | Uint8Array): number;
}

const ours = (v: WireVersion): Codec => ({ encode: (id, e) => encodeEvent(id, e, v), decode: (m) => decodeEvent(m as Buffer).event.latitud });

/** protobufjs on the shipped .proto (snake_case names kept), with the mapping a library user writes. */
function protobufjsCodec(): Codec {
  const root = protobuf.parse(fs.readFileSync(path.join(import.meta.dirname, '..', PROTO_FILE), 'utf8'), { keepCase: true }).root;
  const type = root.lookupType(`${PROTO_PACKAGE}.${PROTO_MESSAGE}`);
  const ticks = (t: { epochMs: number; subMsTicks: number }) => Long.fromNumber(t.epochMs).multiply(10_000).add(t.subMsTicks);
  const instant = (l: Long) => {
    const ms = l.div(10_000);
    return { epochMs: ms.toNumber(), subMsTicks: l.subtract(ms.multiply(10_000)).toNumber() };
  };
  return {
    encode: (id, e) =>
      type
        .encode({
          id: Long.fromString(id.toString(), true),
          system_user: e.systemUser,
          dominio: e.dominio,
          nro_serie: e.nroSerie,
          codigo: e.codigo,
          latitud: e.latitud,
          longitud: e.longitud,
          altitud: e.altitud,
          velocidad: e.velocidad,
          ...(e.rumbo === null ? {} : { rumbo: e.rumbo }),
          valid_position: e.validPosition,
          ...(e.valido === null ? {} : { valido: e.valido }),
          event_time_text: e.eventTimeText,
          event_time_unix_100ns: ticks(e.eventTime),
          ...(e.receptionTimeText === null ? {} : { reception_time_text: e.receptionTimeText }),
          ...(e.receptionTime === null ? {} : { reception_time_unix_100ns: ticks(e.receptionTime) }),
          received_at_unix_ms: Long.fromNumber(e.receivedAt),
          ...(e.crudo === null ? {} : { crudo: e.crudo }),
          sensors: e.sensors,
          operation: e.operation,
          dedupe_key: e.dedupeKey,
        })
        .finish(),
    decode: (m) => {
      const o = type.decode(m) as unknown as Record<string, unknown>;
      const has = (k: string) => Object.prototype.hasOwnProperty.call(o, k);
      const record = {
        id: BigInt((o.id as Long).toString()),
        latitud: o.latitud as number,
        eventTime: instant(o.event_time_unix_100ns as Long),
        receptionTime: has('reception_time_unix_100ns') ? instant(o.reception_time_unix_100ns as Long) : null,
        receivedAt: (o.received_at_unix_ms as Long).toNumber(),
        rumbo: has('rumbo') ? o.rumbo : null,
        crudo: has('crudo') ? o.crudo : null,
      };
      return record.latitud;
    },
  };
}

function measure(events: readonly EventRecord[], codec: Codec): { encodeNs: number; decodeNs: number; bytes: number } {
  const messages = new Array<Buffer | Uint8Array>(events.length);
  const t0 = cpuNs();
  for (let i = 0; i < events.length; i++) messages[i] = codec.encode(BigInt(1_000_000_000 + i), events[i]!);
  const t1 = cpuNs();
  let check = 0;
  for (const m of messages) check += codec.decode(m);
  const t2 = cpuNs();
  if (Number.isNaN(check)) throw new Error('decode lost values');
  const bytes = messages.reduce((n, m) => n + m.length, 0) / messages.length;
  return { encodeNs: (t1 - t0) / events.length, decodeNs: (t2 - t1) / events.length, bytes };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const CODECS = { v1: ours(1), v2: ours(2), v3: ours(3), 'v3 protobufjs': protobufjsCodec() } as const;
type Name = keyof typeof CODECS;
const NAMES = Object.keys(CODECS) as Name[];

console.log(
  `Kafka event message codec, ${EVENTS.toLocaleString('en-US')} events per round, ${ROUNDS} alternating rounds, median; ` +
    `node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'} × ${os.cpus().length}, load ${os.loadavg()[0]!.toFixed(1)}, ${new Date().toISOString()}`,
);
for (const [name, make] of [['typical (LoginYInsertarEvento2)', typical], ['minimal (LoginYInsertarEvento)', minimal]] as const) {
  const events = Array.from({ length: EVENTS }, (_, i) => make(i));
  for (const n of NAMES) measure(events.slice(0, 5000), CODECS[n]); // warm-up
  const runs = Object.fromEntries(NAMES.map((n) => [n, [] as ReturnType<typeof measure>[]])) as Record<Name, ReturnType<typeof measure>[]>;
  for (let r = 0; r < ROUNDS; r++) for (const n of NAMES) runs[n].push(measure(events, CODECS[n]));
  const med = (n: Name, pick: (x: ReturnType<typeof measure>) => number): number => median(runs[n].map(pick));
  const line = (n: Name): string =>
    `${n.padEnd(14)} encode ${(med(n, (x) => x.encodeNs) / 1000).toFixed(2)} µs, decode ${(med(n, (x) => x.decodeNs) / 1000).toFixed(2)} µs, ${Math.round(runs[n][0]!.bytes)} bytes`;
  const ratio = (a: Name, b: Name): string => {
    const r = (pick: (x: ReturnType<typeof measure>) => number): string => (med(a, pick) / med(b, pick)).toFixed(2);
    return `${a}/${b}: encode ${r((x) => x.encodeNs)}, decode ${r((x) => x.decodeNs)}, encode+decode ${r((x) => x.encodeNs + x.decodeNs)}, size ${r((x) => x.bytes)}`;
  };
  console.log(`  ${name}\n${NAMES.map((n) => `    ${line(n)}`).join('\n')}`);
  console.log(`    ${ratio('v3', 'v2')}\n    ${ratio('v3', 'v1')}\n    ${ratio('v2', 'v1')}\n    ${ratio('v3 protobufjs', 'v3')}`);
}
