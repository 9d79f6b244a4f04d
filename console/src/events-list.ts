import type { EventView } from './types.js';

/** Compares decimal id strings (64-bit, beyond Number's precision) without BigInt parsing. */
export function compareIds(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Both lists together, newest first, each id once, at most `max` (the oldest go first). */
export function mergeEvents(current: readonly EventView[], incoming: readonly EventView[], max: number): EventView[] {
  const byId = new Map<string, EventView>();
  for (const e of current) byId.set(e.id, e);
  for (const e of incoming) byId.set(e.id, e);
  return [...byId.values()].sort((x, y) => compareIds(y.id, x.id)).slice(0, max);
}

/**
 * The ids highlighted as just arrived: the latest `max` of them. A bounded copy per event, where a
 * set of every id ever seen grew without end and was copied whole on each one.
 */
export function addFresh(ids: ReadonlySet<string>, id: string, max: number): ReadonlySet<string> {
  const next = new Set(ids);
  next.delete(id);
  next.add(id);
  // Sets iterate in insertion order: the oldest go first.
  for (const old of next) {
    if (next.size <= max) break;
    next.delete(old);
  }
  return next;
}
