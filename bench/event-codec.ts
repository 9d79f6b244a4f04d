/**
 * CPU per event of the Kafka message codec: version 1 (JSON) against version 2 (the binary record
 * of shared/events/binary.ts), encode (the gateway) and decode with its checks (the worker), in
 * alternating rounds on the same events. Also the message size.
 *
 *   npx tsx bench/event-codec.ts [--events 50000] [--rounds 5]
 */
import { decodeEvent, encodeEvent, type WireVersion } from '../shared/events/wire.js';
import { exampleEventRecord, type EventRecord } from '../shared/events/schema.js';
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

function measure(events: readonly EventRecord[], version: WireVersion): { encodeNs: number; decodeNs: number; bytes: number } {
  const messages: Buffer[] = new Array<Buffer>(events.length);
  const t0 = cpuNs();
  for (let i = 0; i < events.length; i++) messages[i] = encodeEvent(BigInt(1_000_000_000 + i), events[i]!, version);
  const t1 = cpuNs();
  let check = 0;
  for (const m of messages) check += decodeEvent(m).event.latitud;
  const t2 = cpuNs();
  if (Number.isNaN(check)) throw new Error('decode lost values');
  const bytes = messages.reduce((n, m) => n + m.length, 0) / messages.length;
  return { encodeNs: (t1 - t0) / events.length, decodeNs: (t2 - t1) / events.length, bytes };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

console.log(`Kafka event message codec, ${EVENTS.toLocaleString('en-US')} events per round, ${ROUNDS} alternating rounds, median; node ${process.version}`);
for (const [name, make] of [['typical (LoginYInsertarEvento2)', typical], ['minimal (LoginYInsertarEvento)', minimal]] as const) {
  const events = Array.from({ length: EVENTS }, (_, i) => make(i));
  measure(events.slice(0, 5000), 1); // warm-up
  measure(events.slice(0, 5000), 2);
  const runs: Record<WireVersion, ReturnType<typeof measure>[]> = { 1: [], 2: [] };
  for (let r = 0; r < ROUNDS; r++) for (const v of [1, 2] as const) runs[v].push(measure(events, v));
  const line = (v: WireVersion): string => {
    const enc = median(runs[v].map((x) => x.encodeNs));
    const dec = median(runs[v].map((x) => x.decodeNs));
    return `v${v}: encode ${(enc / 1000).toFixed(2)} µs, decode ${(dec / 1000).toFixed(2)} µs, ${Math.round(runs[v][0]!.bytes)} bytes`;
  };
  const ratio = (pick: (x: ReturnType<typeof measure>) => number): string => (median(runs[2].map(pick)) / median(runs[1].map(pick))).toFixed(2);
  console.log(`  ${name}\n    ${line(1)}\n    ${line(2)}\n    v2/v1: encode ${ratio((x) => x.encodeNs)}, decode ${ratio((x) => x.decodeNs)}, size ${ratio((x) => x.bytes)}`);
}
