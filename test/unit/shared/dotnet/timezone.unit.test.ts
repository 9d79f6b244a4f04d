/**
 * utcMs (shared/dotnet/timezone.ts) computes epoch ms by calendar arithmetic; the reference is the
 * Date form it replaced (Date.UTC in a leap year, then setUTCFullYear so years 0..99 are not read
 * as 1900..1999). Same result for every valid date and time, .NET's whole range and the years
 * before it that Intl can report (the year 0 and BC years in offsetMinutesAt).
 */
import { describe, expect, it } from 'vitest';
import { daysInMonth } from '../../../../shared/dotnet/calendar.js';
import { utcMs } from '../../../../shared/dotnet/timezone.js';

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
