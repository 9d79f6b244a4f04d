/**
 * The hand-off of one commit group to the SQLite writer thread, without SQLite: the main thread's
 * CPU per event to send a group, and the receiving side's CPU per event to turn it back into the
 * INSERT's parameters, for the two ways the event log has done it:
 *
 *   clone: rows built on the main thread (EVENT_ROWS.toRow) and posted (structured clone), as before
 *          the ring; received as a message and spread into the statement's arguments.
 *   ring:  binary records encoded into the shared ring (writer-ring.ts); read back with the
 *          generated reader (what writer-thread-main.cjs does).
 *
 * Both run in this one thread (a MessageChannel delivers to ourselves), so the figures are CPU
 * time of the work itself, not of thread wake-ups.
 *
 *   npx tsx bench/writer-handoff.ts [--groups 200] [--size 1000] [--rounds 5]
 */
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { EVENT_ROWS } from '../shared/backends/embedded/event-row.js';
import { CONTROL, CONTROL_BYTES, HEADER_BYTES, WriterRing, type GroupToWrite } from '../shared/backends/embedded/writer-ring.js';
import { EVENT_BINARY } from '../shared/events/binary.js';
import type { EventRecord } from '../shared/events/schema.js';
import { sampleEvent } from '../test/helpers/event-records.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const GROUPS = arg('groups', 200);
const SIZE = arg('size', 1000);
const ROUNDS = arg('rounds', 5);

/** The same typical LoginYInsertarEvento2 event as bench/embedded-eventlog.ts. */
function typical(i: number): EventRecord {
  return sampleEvent(i);
}

const events = Array.from({ length: SIZE }, (_, i) => typical(i));
const group: GroupToWrite = { ids: events.map((_, i) => BigInt(1_000_000 + i)), events, storedAt: Date.now(), reports: [] };
/** Stands in for a prepared statement's run: touches each parameter. */
let sink = 0;
const bind = (...values: unknown[]): void => {
  sink += values.length;
};

const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

function clone(): { send: number; receive: number } {
  const { port1, port2 } = new MessageChannel();
  let send = 0;
  let receive = 0;
  for (let g = 0; g < GROUPS; g++) {
    const t0 = cpuUs();
    const rows = group.ids.map((id, i) => EVENT_ROWS.toRow(id, group.events[i]!, group.storedAt));
    port1.postMessage({ type: 'write', rows, reports: group.reports, seq: g });
    const t1 = cpuUs();
    const message = receiveMessageOnPort(port2)!.message as { rows: unknown[][] };
    for (const row of message.rows) bind(...row);
    receive += cpuUs() - t1;
    send += t1 - t0;
  }
  port1.close();
  return { send, receive };
}

function ring(): { send: number; receive: number } {
  const writer = new WriterRing(4 * 1024 * 1024, EVENT_BINARY.encode);
  const { buffer, capacity } = writer.shape;
  const control = new Int32Array(buffer, 0, CONTROL_BYTES / 4);
  const view = new DataView(buffer, CONTROL_BYTES, capacity);
  const reader = EVENT_BINARY.reader(Buffer.from(buffer, CONTROL_BYTES, capacity));
  let readPos = 0;
  let send = 0;
  let receive = 0;
  for (let g = 0; g < GROUPS; g++) {
    const t0 = cpuUs();
    if (writer.placeWrite(g, group) !== 'placed') throw new Error('ring full');
    const t1 = cpuUs();
    // What the writer thread does with each message (writer-thread-main.cjs), wrap markers included.
    for (;;) {
      const size = view.getUint32(readPos, true);
      const type = view.getUint32(readPos + 4, true);
      if (type === 1) {
        reader.at(readPos + HEADER_BYTES, readPos + size);
        const storedAt = reader.f64();
        const count = view.getUint32(readPos + 12, true);
        for (let i = 0; i < count; i++) bind(reader.row(storedAt));
      }
      readPos = readPos + size === capacity ? 0 : readPos + size;
      Atomics.sub(control, CONTROL.used, size);
      if (type === 1) break;
    }
    receive += cpuUs() - t1;
    send += t1 - t0;
  }
  return { send, receive };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
clone();
ring(); // warm-up
const results = { clone: [] as { send: number; receive: number }[], ring: [] as { send: number; receive: number }[] };
for (let r = 0; r < ROUNDS; r++) {
  results.clone.push(clone());
  results.ring.push(ring());
}
const perEvent = (us: number): string => ((us / (GROUPS * SIZE)) * 1000).toFixed(0);
console.log(`Hand-off of ${GROUPS} groups × ${SIZE} events, ${ROUNDS} alternating rounds, median CPU ns per event; node ${process.version}`);
for (const way of ['clone', 'ring'] as const) {
  const send = median(results[way].map((x) => x.send));
  const receive = median(results[way].map((x) => x.receive));
  console.log(`  ${way}: main thread ${perEvent(send)} ns, writer side ${perEvent(receive)} ns`);
}
const ratio = (pick: (x: { send: number; receive: number }) => number): string => (median(results.ring.map(pick)) / median(results.clone.map(pick))).toFixed(2);
console.log(`  ring/clone: main thread ${ratio((x) => x.send)}, writer side ${ratio((x) => x.receive)} (${sink > 0 ? 'checked' : ''})`);
