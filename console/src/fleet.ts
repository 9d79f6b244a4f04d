import type { EventView } from './types.js';

/**
 * What the map shows of the fleet, free of DOM and Leaflet so it is unit-tested in Node: how old
 * a vehicle's latest report is, and the latest event per vehicle as live events arrive.
 */
export type Age = 'fresh' | 'recent' | 'stale';

/** Under 5 minutes: fresh; under an hour: recent; older: stale (by when the gateway received it). */
export const FRESH_MS = 5 * 60_000;
export const RECENT_MS = 60 * 60_000;

export function ageOf(receivedAt: string, now: number): Age {
  const age = now - Date.parse(receivedAt);
  return age < FRESH_MS ? 'fresh' : age < RECENT_MS ? 'recent' : 'stale';
}

export const AGE_COLOURS: Readonly<Record<Age, string>> = { fresh: '#15803d', recent: '#d97706', stale: '#6b7280' };

/** An event a map can place: a valid position, in range (a zero fix is the devices' "no fix"). */
export function placeable(e: Pick<EventView, 'validPosition' | 'latitud' | 'longitud'>): boolean {
  return e.validPosition && Math.abs(e.latitud) <= 90 && Math.abs(e.longitud) <= 180 && !(e.latitud === 0 && e.longitud === 0);
}

/** Compares decimal id strings (64-bit) by length, then text. */
function newer(a: string, b: string): boolean {
  return a.length !== b.length ? a.length > b.length : a > b;
}

/** Keeps `event` as its vehicle's latest unless an event with a higher id is already there; true when it changed. */
export function keepLatest(latest: Map<string, EventView>, event: EventView): boolean {
  const current = latest.get(event.dominio);
  if (current !== undefined && !newer(event.id, current.id)) return false;
  latest.set(event.dominio, event);
  return true;
}
