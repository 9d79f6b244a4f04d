/**
 * test/fixtures/dotnet/time-zones.json (scripts/dotnet-fixtures/TimeZones.cs): what .NET's
 * DateTime.ToUniversalTime() made of local times of each zone, run on Mono, and the model of it
 * the tests expand: per local minute, the offset .NET read it with.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES } from './paths.js';

/** [utcMinute, offsetBefore, offsetAfter]: the zone's offset changed at that instant (GetUtcOffset). */
export type Transition = readonly [number, number, number];

export interface ZoneFixture {
  zone: string;
  transitions: readonly Transition[];
  /** [localMinute, offset]: .NET read local minutes from this one to the next entry's with this offset. */
  runs: readonly (readonly [number, number])[];
}

export interface TimeZonesFixture {
  runtime: string;
  /** The tz release Mono read (generate.sh: the one Node's ICU carries). */
  tzdata: string;
  firstLocalMinute: number;
  endLocalMinute: number;
  zones: ZoneFixture[];
}

export function loadTimeZones(): TimeZonesFixture {
  return JSON.parse(readFileSync(path.join(FIXTURES, 'dotnet', 'time-zones.json'), 'utf8')) as TimeZonesFixture;
}

export const MINUTE_MS = 60_000;
/** The minutes checked one by one on each side of a transition's wall-clock span. */
export const WINDOW_MINUTES = 120;

/** The local minutes a transition skipped or repeated: [first, end). Empty when the offset did not change the wall clock. */
export function changedSpan([utcMinute, before, after]: Transition): [number, number] {
  return [utcMinute + Math.min(before, after), utcMinute + Math.max(before, after)];
}

/** Every local minute the tests convert for a transition: its span +- WINDOW_MINUTES, inclusive. */
export function windowOf(t: Transition): [number, number] {
  const [first, end] = changedSpan(t);
  return [first - WINDOW_MINUTES, end + WINDOW_MINUTES];
}

/** The offset .NET gave local minute `m`, as the runs record it. */
export function oracleOffset(zone: ZoneFixture, m: number): number {
  const runs = zone.runs;
  let lo = 0;
  let hi = runs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (runs[mid]![0] <= m) lo = mid;
    else hi = mid - 1;
  }
  return runs[lo]![1];
}

/**
 * The gateway's rule for local minute `m` near transition `t`: before the span the old offset,
 * after it the new one, inside it (skipped or repeated) the smaller of the two.
 */
export function ruleOffset(t: Transition, m: number): number {
  const [first, end] = changedSpan(t);
  if (m < first) return t[1];
  if (m >= end) return t[2];
  return Math.min(t[1], t[2]);
}

/** The offset of `zone` at UTC minute `utcMinute`, from the transitions (the oracle's GetUtcOffset). */
export function offsetAtUtc(zone: ZoneFixture, firstOffset: number, utcMinute: number): number {
  let offset = firstOffset;
  for (const [at, , after] of zone.transitions) {
    if (at > utcMinute) break;
    offset = after;
  }
  return offset;
}
