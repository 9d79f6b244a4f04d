/**
 * Wire version 3 through protobufjs, a library we did not write, reading the shipped events.proto
 * itself: the reference the hand-written codec is held to in the unit layer. The record ↔ message
 * mapping is written here the plain way (BigInt arithmetic for the 100 ns counts, presence from
 * the message's own properties), independent of the codec's generated code.
 */
import fs from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';
import { EVENT_FIELD_LIST, type EventRecord } from '../../shared/events/schema.js';
import { EVENT_PROTO_NUMBERS, PROTO_FILE, PROTO_MESSAGE, PROTO_PACKAGE, protoField } from '../../shared/events/protobuf-fields.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

export const PROTO_ROOT = protobuf.parse(fs.readFileSync(path.join(ROOT, PROTO_FILE), 'utf8'), { keepCase: true }).root;
export const VEHICLE_EVENT = PROTO_ROOT.lookupType(`${PROTO_PACKAGE}.${PROTO_MESSAGE}`);

const TICKS_PER_MS = 10_000n;
const PROTO_NAMES = new Map(EVENT_FIELD_LIST.map((f) => [f.name, protoField(f, EVENT_PROTO_NUMBERS[f.name]).name]));
const protoName = (name: keyof EventRecord): string => PROTO_NAMES.get(name)!;

/** 100 ns units since the epoch, as decimal text (protobufjs takes 64-bit values as text). */
export function ticksText(t: { epochMs: number; subMsTicks: number }): string {
  return (BigInt(t.epochMs) * TICKS_PER_MS + BigInt(t.subMsTicks)).toString();
}

/** Epoch ms and ticks from a 100 ns count (floor division: ticks stay 0..9999 before 1970 too). */
export function fromTicks(count: bigint): { epochMs: number; subMsTicks: number } {
  let ms = count / TICKS_PER_MS;
  let rest = count % TICKS_PER_MS;
  if (rest < 0n) {
    ms -= 1n;
    rest += TICKS_PER_MS;
  }
  return { epochMs: Number(ms), subMsTicks: Number(rest) };
}

/**
 * The plain object protobufjs builds a message from. `explicitZeros`: also set fields that hold
 * their zero, which a canonical writer leaves out (protobufjs then writes them).
 */
export function toLibraryObject(id: bigint, e: EventRecord, explicitZeros = false): Record<string, unknown> {
  const out: Record<string, unknown> = { id: id.toString() };
  for (const f of EVENT_FIELD_LIST) {
    const value = e[f.name];
    if (value === null) continue;
    let wire: unknown = value;
    if (f.kind === 'instant') wire = ticksText(value as { epochMs: number; subMsTicks: number });
    else if (f.kind === 'epochMs' && typeof value === 'number') wire = value.toString();
    const zero = wire === '' || wire === false || wire === '0' || (typeof wire === 'number' && Object.is(wire, 0)) || (Array.isArray(wire) && wire.length === 0);
    if (!f.nullable && zero && !explicitZeros) continue;
    out[protoName(f.name)] = wire;
  }
  return out;
}

/** A message protobufjs writes from the record. */
export function libraryEncode(id: bigint, e: EventRecord, explicitZeros = false): Buffer {
  return Buffer.from(VEHICLE_EVENT.encode(VEHICLE_EVENT.fromObject(toLibraryObject(id, e, explicitZeros))).finish());
}

/** The record protobufjs reads from a message: absent fields are their zero, or null when `optional`. */
export function libraryDecode(bytes: Buffer): { id: bigint; event: EventRecord } {
  const message = VEHICLE_EVENT.decode(bytes);
  const o = VEHICLE_EVENT.toObject(message, { longs: String, defaults: false }) as Record<string, unknown>;
  const event: Record<string, unknown> = {};
  for (const f of EVENT_FIELD_LIST) {
    const name = protoName(f.name);
    if (!Object.prototype.hasOwnProperty.call(o, name)) {
      event[f.name] = f.nullable ? null : zeroOf(f.kind);
      continue;
    }
    const value = o[name];
    if (f.kind === 'instant') event[f.name] = fromTicks(BigInt(value as string));
    else if (f.kind === 'epochMs') event[f.name] = Number(value);
    else if (f.kind === 'pairs') event[f.name] = (value as { clave?: string; valor?: string }[]).map((kv) => ({ clave: kv.clave ?? '', valor: kv.valor ?? '' }));
    else event[f.name] = value;
  }
  return { id: BigInt((o.id as string | undefined) ?? '0'), event: event as EventRecord };
}

function zeroOf(kind: string): unknown {
  switch (kind) {
    case 'text':
      return '';
    case 'bool':
      return false;
    case 'instant':
      return { epochMs: 0, subMsTicks: 0 };
    case 'pairs':
      return [];
    default:
      return 0;
  }
}
