/**
 * shared/dotnet/timezone.ts:
 * - resolveInstant reads a dateTime sent without an offset as .NET reads local time of the
 *   provider's zone (DateTime.ToUniversalTime(), docs/protocol.md §Local times and clock changes). The expected
 *   instants are .NET's, run on Mono (test/fixtures/dotnet/time-zones.json, scripts/dotnet-fixtures):
 *   every minute of every transition +- 2 h of 16 zones over 1970-2037, then random local times
 *   and random instants anywhere in that range (fast-check). Where Mono's answer is an artifact of
 *   how Mono models a zone rather than .NET's rule, the test says which transitions and why, and
 *   checks that the list is exactly where Mono and the rule part.
 * - utcMs computes epoch ms by calendar arithmetic; the reference is the Date form it replaced
 *   (Date.UTC in a leap year, then setUTCFullYear so years 0..99 are not read as 1900..1999). Same
 *   result for every valid date and time, .NET's whole range and the years before it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ParsedDateTime } from '../../../../shared/catalogue/types.js';
import { daysInMonth } from '../../../../shared/dotnet/calendar.js';
import { formatInstant, resolveInstant, utcMs } from '../../../../shared/dotnet/timezone.js';
import {
  changedSpan,
  loadTimeZones,
  MINUTE_MS,
  oracleOffset,
  ruleOffset,
  windowOf,
  type Transition,
  type ZoneFixture,
} from '../../../helpers/dotnet-time-zones.js';

function reference(year: number, month: number, day: number, hour: number, minute: number, second: number, ms: number): number {
  const d = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, ms));
  d.setUTCFullYear(year);
  return d.getTime();
}

describe('utcMs', () => {
  it('agrees with the Date form on 200,000 generated valid dates and times', () => {
    let x = 12345;
    const next = (n: number) => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      return x % n;
    };
    for (let i = 0; i < 200_000; i++) {
      const year = i % 10 === 0 ? next(120) - 20 : 1 + next(9999);
      const month = 1 + next(12);
      // daysInMonth is .NET's (years 1..9999); for the others the proleptic rule is the same.
      const day = 1 + next(daysInMonth(((year % 400) + 400) % 400 || 400, month));
      const args = [year, month, day, next(24), next(60), next(60), next(1000)] as const;
      // expect() only on a difference: called 200,000 times it was most of the layer's slowest file.
      const ours = utcMs(...args);
      const want = reference(...args);
      if (ours !== want) expect(ours, args.join(',')).toBe(want);
    }
  });

  it('at the edges of .NET range and of the Unix epoch', () => {
    const edges: [number, number, number, number, number, number, number][] = [
      [1, 1, 1, 0, 0, 0, 0],
      [9999, 12, 31, 23, 59, 59, 999],
      [1970, 1, 1, 0, 0, 0, 0],
      [1969, 12, 31, 23, 59, 59, 999],
      [2000, 2, 29, 12, 0, 0, 0],
      [1900, 2, 28, 0, 0, 0, 0],
      [0, 2, 29, 0, 0, 0, 0],
    ];
    for (const args of edges) {
      // expect() only on a difference: called 200,000 times it was most of the layer's slowest file.
      const ours = utcMs(...args);
      const want = reference(...args);
      if (ours !== want) expect(ours, args.join(',')).toBe(want);
    }
    expect(utcMs(1970, 1, 1, 0, 0, 0, 0)).toBe(0);
  });
});

const FIXTURE = loadTimeZones();
const ZONES = new Map(FIXTURE.zones.map((z) => [z.zone, z]));

/**
 * Transitions where Mono's answer is not .NET's rule but an artifact of Mono's zone model, by zone:
 * 'all', or the UTC instants of the transitions. There the expected offsets are the rule's, from
 * the oracle's own transition offsets (GetUtcOffset of each UTC instant, which Mono and ICU agree
 * on: first test below). docs/protocol.md §Local times and clock changes explains both.
 */
const MONO_ARTIFACTS: Record<string, { transitions: 'all' | readonly string[]; why: string }> = {
  'Europe/Dublin': {
    transitions: 'all',
    why:
      "Debian's zoneinfo is compiled from the tz source's main form, where Irish winter time (GMT) is a negative daylight saving " +
      'from IST; Mono takes it as daylight time and reads skipped and repeated times with IST. ICU, and Windows (GMT Standard Time), ' +
      'which the legacy service ran on, have GMT as standard time.',
  },
  'Asia/Kathmandu': { transitions: ['1985-12-31T18:30Z'], why: 'a change of standard offset (+05:30 to +05:45), not of daylight saving' },
  'Australia/Lord_Howe': { transitions: ['1981-02-28T14:00Z'], why: 'a change of standard offset (+10:00 to +10:30)' },
  'Europe/Moscow': {
    transitions: ['1991-09-29T00:00Z', '1992-01-19T00:00Z', '2011-03-26T23:00Z', '2014-10-25T22:00Z'],
    why: 'changes of standard offset (1991-92 to +02 and back; +04 in 2011-14), which Mono models as daylight time around its single base offset',
  },
  'Asia/Tehran': {
    transitions: ['1977-10-20T19:30Z', '1978-03-24T20:00Z', '1978-08-04T20:00Z', '1978-11-10T20:00Z'],
    why: 'standard offset +04:00 in 1977-78 around its DST; Mono answers +03:30 (its base offset) for times the zone was then at +04:30 or +05:00',
  },
  'Pacific/Apia': {
    transitions: ['2010-09-26T11:00Z', '2011-04-02T14:00Z', '2011-09-24T14:00Z', '2011-12-30T10:00Z'],
    why: 'DST at -11:00/-10:00 just before the zone moved across the date line to +13:00 (2011-12-30 skipped); Mono models 2010-11 around its base offset +13:00',
  },
};

const isoMinute = (utcMinute: number) => `${new Date(utcMinute * MINUTE_MS).toISOString().slice(0, 16)}Z`;

function isArtifact(zone: string, t: Transition): boolean {
  const entry = MONO_ARTIFACTS[zone];
  return entry !== undefined && (entry.transitions === 'all' || entry.transitions.includes(isoMinute(t[0])));
}

/** The transition whose window holds local minute `m`, if any (windows of one zone do not overlap in 1970-2037). */
function transitionNear(zone: ZoneFixture, m: number): Transition | undefined {
  return zone.transitions.find((t) => {
    const [first, end] = windowOf(t);
    return m >= first && m <= end;
  });
}

/** The offset .NET's rule gives local minute `m` of `zone` (near transition `t`, if known): Mono's, except where MONO_ARTIFACTS says. */
function expectedOffset(zone: ZoneFixture, m: number, t = transitionNear(zone, m)): number {
  return t !== undefined && isArtifact(zone.zone, t) ? ruleOffset(t, m) : oracleOffset(zone, m);
}

/** A dateTime without offset at local epoch ms `local` (+ 100 ns ticks below the ms). */
function localDateTime(local: number, subMsTicks = 0): ParsedDateTime {
  const d = new Date(local);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    ticks: d.getUTCMilliseconds() * 10_000 + subMsTicks,
    offsetMinutes: null,
  };
}

/** The offset formatInstant writes for an instant of `zone` (its Intl offset), in minutes. */
function icuOffset(zone: string, epochMs: number): number {
  const m = /(?:([+-])(\d\d):(\d\d)|Z)$/.exec(formatInstant({ epochMs, subMsTicks: 0 }, zone))!;
  return m[1] === undefined ? 0 : (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
}

describe('resolveInstant against .NET (Mono) for every transition, 1970-2037', () => {
  it('covers the zones the rule must hold for, each with its transitions', () => {
    const required = ['Europe/Madrid', 'America/New_York', 'America/Argentina/Buenos_Aires', 'Australia/Lord_Howe', 'Asia/Kathmandu'];
    for (const zone of required) expect(ZONES.has(zone), zone).toBe(true);
    expect(FIXTURE.zones.length).toBeGreaterThanOrEqual(10);
    for (const z of FIXTURE.zones) expect(z.transitions.length, z.zone).toBeGreaterThan(0);
    const offsets = new Set(FIXTURE.zones.flatMap((z) => z.transitions.flatMap(([, a, b]) => [a % 60, b % 60])));
    expect([...offsets].filter((o) => o !== 0).map(Math.abs).sort()).toEqual(expect.arrayContaining([30, 45]));
  });

  it('ICU (Node) has the transitions the oracle read, at the same instants and offsets', () => {
    const differences: string[] = [];
    for (const z of FIXTURE.zones) {
      for (const [at, before, after] of z.transitions) {
        const icu = [icuOffset(z.zone, (at - 1) * MINUTE_MS), icuOffset(z.zone, at * MINUTE_MS)];
        if (icu[0] !== before || icu[1] !== after) differences.push(`${z.zone} ${isoMinute(at)}: oracle ${before} -> ${after}, ICU ${icu.join(' -> ')}`);
      }
    }
    // A difference means Node's tz data and the oracle's (tzdata FIXTURE.tzdata) disagree on a zone: regenerate, or say so here.
    expect(differences, `ICU tz ${process.versions.tz ?? '?'}, oracle tzdata ${FIXTURE.tzdata}`).toEqual([]);
  });

  it('every local minute of each transition +- 2 h resolves to the instant .NET gives', () => {
    const wrong: string[] = [];
    let checked = 0;
    for (const z of FIXTURE.zones) {
      for (const t of z.transitions) {
        const [first, end] = windowOf(t);
        for (let m = first; m <= end; m++) {
          const want = m - expectedOffset(z, m, t);
          const got = resolveInstant(localDateTime(m * MINUTE_MS), z.zone).epochMs;
          checked++;
          if (got !== want * MINUTE_MS && wrong.length < 20) wrong.push(`${z.zone} ${isoMinute(m).slice(0, -1)} local: ${new Date(got).toISOString()}, .NET ${isoMinute(want)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(300_000);
  });

  it('answers the same from its per-hour memory: every minute 30 h either side of a transition, twice', () => {
    // Hours far enough from a change are remembered on first use; the second pass is served from them.
    const wrong: string[] = [];
    for (const z of FIXTURE.zones) {
      const t = z.transitions[z.transitions.length - 1]!;
      for (let pass = 0; pass < 2; pass++) {
        for (let m = t[0] - 30 * 60; m <= t[0] + 30 * 60; m++) {
          const got = resolveInstant(localDateTime(m * MINUTE_MS), z.zone).epochMs;
          const want = (m - expectedOffset(z, m)) * MINUTE_MS;
          if (got !== want && wrong.length < 10) wrong.push(`pass ${pass} ${z.zone} ${isoMinute(m)}: ${new Date(got).toISOString()}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('Mono departs from the rule exactly at the transitions MONO_ARTIFACTS lists, and nowhere else', () => {
    const departures: string[] = [];
    for (const z of FIXTURE.zones) {
      for (const t of z.transitions) {
        const [first, end] = windowOf(t);
        let departs = false;
        for (let m = first; m <= end && !departs; m++) departs = oracleOffset(z, m) !== ruleOffset(t, m);
        if (departs !== isArtifact(z.zone, t)) departures.push(`${z.zone} ${isoMinute(t[0])} (${t[1]} -> ${t[2]}): Mono ${departs ? 'departs from' : 'follows'} the rule`);
      }
      // And between windows Mono keeps the offset the last transition left (runs change only inside windows).
      for (const [m] of z.runs.slice(1)) if (transitionNear(z, m) === undefined && transitionNear(z, m - 1) === undefined) departures.push(`${z.zone}: Mono changes offset at ${isoMinute(m)} local, far from any transition`);
    }
    expect(departures).toEqual([]);
  });

  it('the cases docs/protocol.md gives: repeated hours read as standard time, skipped ones with the offset before the change', () => {
    const at = (zone: string, text: string) => {
      const [date, time] = text.split('T') as [string, string];
      const [y, mo, d] = date.split('-').map(Number) as [number, number, number];
      const [h, mi] = time.split(':').map(Number) as [number, number];
      return new Date(resolveInstant(localDateTime(Date.UTC(y, mo - 1, d, h, mi)), zone).epochMs).toISOString();
    };
    // Europe/Madrid, 2026-10-25: 02:00-02:59 happened twice (+02:00, then +01:00): the second.
    expect(at('Europe/Madrid', '2026-10-25T02:00')).toBe('2026-10-25T01:00:00.000Z');
    expect(at('Europe/Madrid', '2026-10-25T02:30')).toBe('2026-10-25T01:30:00.000Z');
    expect(at('Europe/Madrid', '2026-10-25T01:59')).toBe('2026-10-24T23:59:00.000Z');
    // America/New_York, 2026-11-01: the repeated hour is 01:00-01:59; 02:00 and 02:30 happened once (-05:00).
    expect(at('America/New_York', '2026-11-01T01:30')).toBe('2026-11-01T06:30:00.000Z');
    expect(at('America/New_York', '2026-11-01T02:00')).toBe('2026-11-01T07:00:00.000Z');
    expect(at('America/New_York', '2026-11-01T02:30')).toBe('2026-11-01T07:30:00.000Z');
    // Skipped: 2026-03-29 02:30 in Madrid, 2026-03-08 02:30 in New York, read with the offset before the change.
    expect(at('Europe/Madrid', '2026-03-29T02:30')).toBe('2026-03-29T01:30:00.000Z');
    expect(at('America/New_York', '2026-03-08T02:30')).toBe('2026-03-08T07:30:00.000Z');
    // Southern hemisphere, half-hour DST: Lord Howe repeats 01:30-01:59 on 2026-04-05 (+11:00 then +10:30).
    expect(at('Australia/Lord_Howe', '2026-04-05T01:45')).toBe('2026-04-04T15:15:00.000Z');
  });
});

describe('resolveInstant over random local times and instants, 1970-2037 (fast-check)', () => {
  const zoneNames = FIXTURE.zones.map((z) => z.zone);
  const firstMs = Date.UTC(1970, 0, 1);
  const endMs = Date.UTC(2038, 0, 1);
  const tick = fc.integer({ min: 0, max: 9_999 });

  it('a local time resolves to the instant .NET gives it, whatever its seconds and fraction', () => {
    fc.assert(
      fc.property(fc.constantFrom(...zoneNames), fc.integer({ min: firstMs, max: endMs - 1 }), tick, (zone, local, subMs) => {
        const z = ZONES.get(zone)!;
        const m = Math.floor(local / MINUTE_MS);
        const got = resolveInstant(localDateTime(local, subMs), zone);
        expect(got).toEqual({ epochMs: local - expectedOffset(z, m) * MINUTE_MS, subMsTicks: subMs });
      }),
      { numRuns: 3_000, seed: 38 },
    );
  });

  it('an instant written as local time comes back as itself, or as the other reading of a repeated time', () => {
    fc.assert(
      fc.property(fc.constantFrom(...zoneNames), fc.integer({ min: firstMs, max: endMs - 1 }), (zone, epochMs) => {
        const z = ZONES.get(zone)!;
        const offset = icuOffset(zone, epochMs);
        const local = epochMs + offset * MINUTE_MS;
        const back = resolveInstant(localDateTime(local), zone).epochMs;
        if (back === epochMs) return;
        // Only a repeated wall time reads otherwise: as the smaller offset, the later instant.
        const t = z.transitions.find((tr) => {
          const [first, end] = changedSpan(tr);
          return tr[2] < tr[1] && local >= first * MINUTE_MS && local < end * MINUTE_MS;
        });
        expect(t, `${zone} ${new Date(epochMs).toISOString()} came back as ${new Date(back).toISOString()}`).toBeDefined();
        expect(back).toBe(local - t![2] * MINUTE_MS);
      }),
      { numRuns: 3_000, seed: 38 },
    );
  });
});
