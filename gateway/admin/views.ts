import type { Command, EventInstant, Lockout, PoisonMessage, Provider, StoredEvent, TripVehicle } from '../../shared/backends/types.js';
import { formatInstant } from '../../shared/xsd/timezone.js';
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

export function eventView(e: StoredEvent): { [key: string]: JsonValue } {
  return {
    id: e.id.toString(),
    systemUser: e.systemUser,
    dominio: e.dominio,
    nroSerie: e.nroSerie,
    codigo: e.codigo,
    latitud: e.latitud,
    longitud: e.longitud,
    altitud: e.altitud,
    velocidad: e.velocidad,
    rumbo: e.rumbo,
    validPosition: e.validPosition,
    valido: e.valido,
    eventTime: instant(e.eventTime),
    eventTimeText: e.eventTimeText,
    receptionTime: instant(e.receptionTime),
    receptionTimeText: e.receptionTimeText,
    receivedAt: iso(e.receivedAt),
    storedAt: iso(e.storedAt),
    crudo: e.crudo,
    sensors: e.sensors.map((s) => ({ clave: s.clave, valor: s.valor })),
    operation: e.operation,
  };
}

export function lockoutView(l: Lockout): { [key: string]: JsonValue } {
  return { systemUser: l.systemUser, address: l.address, until: iso(l.until) };
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
    value: shown.toString('utf8'),
    /** Size of the value kept (the whole message unless it was too large to keep: then not redrivable). */
    bytes: m.value.length,
    truncated: m.truncated || m.value.length > POISON_VALUE_SHOWN,
    redrivable: !m.truncated,
  };
}
