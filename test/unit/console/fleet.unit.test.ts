import { describe, expect, it } from 'vitest';
import { ageOf, FRESH_MS, keepLatest, placeable, RECENT_MS } from '../../../console/src/fleet.js';
import type { EventView } from '../../../console/src/types.js';

/** The console map's own logic: colour by age, which events can be placed, the latest per vehicle. */
const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);
const at = (msAgo: number): string => new Date(NOW - msAgo).toISOString();

function view(id: string, dominio: string, extra: Partial<EventView> = {}): EventView {
  return {
    id, systemUser: 'acme', dominio, nroSerie: 'SN', codigo: '1', latitud: -34.6, longitud: -58.4, altitud: null, velocidad: null, rumbo: null,
    validPosition: true, valido: null, eventTime: null, receptionTime: null, receivedAt: at(0), storedAt: at(0), operation: 'LoginYInsertarEvento', ...extra,
  };
}

describe('console map: fleet logic', () => {
  it('ages: fresh under 5 minutes, recent under an hour, stale after', () => {
    expect(ageOf(at(0), NOW)).toBe('fresh');
    expect(ageOf(at(FRESH_MS - 1), NOW)).toBe('fresh');
    expect(ageOf(at(FRESH_MS), NOW)).toBe('recent');
    expect(ageOf(at(RECENT_MS - 1), NOW)).toBe('recent');
    expect(ageOf(at(RECENT_MS), NOW)).toBe('stale');
    // A clock a little behind the gateway's: still fresh, never an error.
    expect(ageOf(at(-5_000), NOW)).toBe('fresh');
  });

  it('places valid positions in range only (0,0 is the devices\' "no fix")', () => {
    expect(placeable(view('1', 'A'))).toBe(true);
    expect(placeable(view('1', 'A', { validPosition: false }))).toBe(false);
    expect(placeable(view('1', 'A', { latitud: 0, longitud: 0 }))).toBe(false);
    expect(placeable(view('1', 'A', { latitud: 91 }))).toBe(false);
    expect(placeable(view('1', 'A', { longitud: -180.5 }))).toBe(false);
  });

  it('keeps the event with the highest id per vehicle, ids compared beyond 2^53', () => {
    const latest = new Map<string, EventView>();
    expect(keepLatest(latest, view('9007199254740993', 'A'))).toBe(true);
    expect(keepLatest(latest, view('9007199254740992', 'A'))).toBe(false);
    expect(keepLatest(latest, view('9007199254740993', 'A'))).toBe(false);
    expect(keepLatest(latest, view('10000000000000000', 'A'))).toBe(true);
    expect(keepLatest(latest, view('5', 'B'))).toBe(true);
    expect([...latest.values()].map((e) => [e.dominio, e.id])).toEqual([['A', '10000000000000000'], ['B', '5']]);
  });
});
