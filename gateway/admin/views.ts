import type { Command, EventInstant, EventRecord, Lockout, PoisonMessage, Provider, StoredEvent, TripVehicle } from '../../shared/backends/types.js';
import { EVENT_FIELD_LIST, type EventFieldName, type FieldKind, type KeyValue } from '../../shared/events/schema.js';
import { isUtf8 } from 'node:buffer';
import { BINARY_WIRE_VERSION } from '../../shared/events/wire.js';
import { formatInstant } from '../../shared/dotnet/timezone.js';
import type { JsonValue } from './http.js';

/**
 * What the admin API shows of stored records: ISO-8601 times, bigint ids as strings, and never a
 * password or its hash.
 */
const iso = (epochMs: number): string => new Date(epochMs).toISOString();
const isoOrNull = (epochMs: number | null): string | null => (epochMs === null ? null : iso(epochMs));
/** Event instants keep their 100 ns ticks: xs:dateTime text in UTC. */
const instant = (value: EventInstant | null): string | null => (value === null ? null : formatInstant(value, 'UTC'));

export function providerView(p: Provider): { [key: string]: JsonValue } {
  return {
    systemUser: p.systemUser,
    enabled: p.enabled,
    timeZone: p.timeZone,
    requireRegisteredVehicles: p.requireRegisteredVehicles,
    createdAt: iso(p.createdAt),
    updatedAt: iso(p.updatedAt),
  };
}

export function commandView(c: Command): { [key: string]: JsonValue } {
  return {
    numero: c.numero,
    cmd: c.cmd,
    unidad: c.unidad,
    equipo: c.equipo,
    state: c.state,
    createdAt: iso(c.createdAt),
    expiresAt: iso(c.expiresAt),
    deliveries: c.deliveries,
    lastDeliveredAt: isoOrNull(c.lastDeliveredAt),
    finishedAt: isoOrNull(c.finishedAt),
    history: c.history.map((h) => ({ at: iso(h.at), kind: h.kind, message: h.message })),
  };
}

export function vehicleView(v: TripVehicle): { [key: string]: JsonValue } {
  return {
    dominio: v.dominio,
    nroSerie: v.nroSerie,
    registeredAt: iso(v.registeredAt),
    lastReport: instant(v.lastReport),
  };
}

const VIEW_FIELDS = EVENT_FIELD_LIST.filter((f) => f.inView);

/** A field's value as the admin API shows it, by kind (see KindValue in shared/events/schema.ts). */
function fieldView(kind: FieldKind, value: EventRecord[EventFieldName]): JsonValue {
  if (value === null) return null;
  switch (kind) {
    case 'instant':
      return instant(value as EventInstant);
    case 'epochMs':
      return iso(value as number);
    case 'pairs':
      return (value as KeyValue[]).map((s) => ({ clave: s.clave, valor: s.valor }));
    default:
      return value as string | number | boolean;
  }
}

/** Every field of EVENT_FIELDS but the hidden ones, after the id; storedAt last. */
export function eventView(e: StoredEvent): { [key: string]: JsonValue } {
  const view: { [key: string]: JsonValue } = { id: e.id.toString() };
  for (const f of VIEW_FIELDS) view[f.name] = fieldView(f.kind, e[f.name]);
  view.storedAt = iso(e.storedAt);
  return view;
}

export function lockoutView(l: Lockout): { [key: string]: JsonValue } {
  return { systemUser: l.systemUser, address: l.address, until: iso(l.until) };
}

/**
 * A value readable as text: UTF-8 without control characters but tab, CR and LF. Messages of wire
 * version 2 start with byte 2 and those of version 3 (protobuf) have tags below 0x20 and binary
 * numbers; JSON (version 1) and most foreign text pass.
 */
function isText(value: Buffer): boolean {
  if (value[0] === BINARY_WIRE_VERSION || !isUtf8(value)) return false;
  for (const byte of value) if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) return false;
  return true;
}

/** Values are shown as text, cut to 4 KB: enough to see what is wrong with a message. */
const POISON_VALUE_SHOWN = 4096;

export function poisonView(m: PoisonMessage): { [key: string]: JsonValue } {
  const shown = m.value.length > POISON_VALUE_SHOWN ? m.value.subarray(0, POISON_VALUE_SHOWN) : m.value;
  return {
    id: m.id,
    topic: m.topic,
    partition: m.partition,
    offset: m.offset,
    key: m.key,
    reason: m.reason,
    at: iso(m.at),
    // A binary message (wire versions 2 and 3) is shown in hex: as text it would be unreadable.
    value: isText(shown) ? shown.toString('utf8') : shown.toString('hex'),
    valueEncoding: isText(shown) ? 'utf8' : 'hex',
    /** Size of the value kept (the whole message unless it was too large to keep: then not redrivable). */
    bytes: m.value.length,
    truncated: m.truncated || m.value.length > POISON_VALUE_SHOWN,
    redrivable: !m.truncated,
  };
}
