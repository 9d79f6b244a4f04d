/**
 * resolveInstant (shared/dotnet/timezone.ts) on a dateTime without offset in a provider's zone: CPU
 * per call, for times near the present (the usual event: its hour is remembered after the first)
 * and for random times of 1970-2037 (a device with a wrong clock: every call probes Intl), against
 * the baseline in the same run: the lookup it replaced (two formatToParts probes, the larger
 * offset; wrong at clock changes, see docs/protocol.md §Local times and clock changes).
 *
 * Run: npx tsx bench/time-zones.ts   (env CALLS=200000 ZONE=America/Argentina/Buenos_Aires)
 */
import type { ParsedDateTime } from '../shared/catalogue/types.js';
import { resolveInstant, utcMs } from '../shared/dotnet/timezone.js';

const CALLS = Number(process.env.CALLS ?? 200_000);
const ZONE = process.env.ZONE ?? 'America/Argentina/Buenos_Aires';

const parts = new Intl.DateTimeFormat('en-US', { timeZone: ZONE, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', era: 'short' });

/** The replaced lookup's offset probe. */
function baselineOffset(epochMs: number): number {
  const p = parts.formatToParts(new Date(epochMs));
  const get = (type: Intl.DateTimeFormatPartTypes): number => Number(p.find((x) => x.type === type)?.value ?? 0);
  let year = get('year');
  if (p.find((x) => x.type === 'era')?.value === 'BC') year = 1 - year;
  return Math.round((utcMs(year, get('month'), get('day'), get('hour'), get('minute'), get('second'), 0) - Math.floor(epochMs / 1000) * 1000) / 60_000);
}

function baseline(dt: ParsedDateTime): number {
  const local = utcMs(dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second, 0);
  let offset = baselineOffset(local);
  const second = baselineOffset(local - offset * 60_000);
  if (second !== offset) offset = Math.max(offset, second);
  return local - offset * 60_000;
}

function dateTimes(nearPresent: boolean): ParsedDateTime[] {
  let x = 38;
  const next = (n: number): number => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x % n;
  };
  return Array.from({ length: CALLS }, () => {
    const ms = nearPresent ? Date.UTC(2026, 10, 28) - next(86_400) * 1000 : Date.UTC(1970, 0, 1) + next(2_000_000_000) * 1000;
    const d = new Date(ms);
    return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds(), ticks: 0, offsetMinutes: null };
  });
}

function cpuNsPerCall(run: (dt: ParsedDateTime) => number, inputs: readonly ParsedDateTime[]): number {
  let sink = 0;
  const started = process.cpuUsage();
  for (const dt of inputs) sink += run(dt);
  const used = process.cpuUsage(started);
  if (sink === 0.5) console.log(sink);
  return Math.round(((used.user + used.system) * 1000) / inputs.length);
}

console.log(`resolveInstant, ${CALLS} calls each, zone ${ZONE}, Node ${process.versions.node} (ICU tz ${process.versions.tz ?? '?'})`);
for (const [label, near] of [
  ['near the present (last 24 h)', true],
  ['random, 1970-2037', false],
] as const) {
  const inputs = dateTimes(near);
  // Warm up both, then alternate twice: the box is shared.
  cpuNsPerCall(baseline, inputs.slice(0, 10_000));
  cpuNsPerCall((dt) => resolveInstant(dt, ZONE).epochMs, inputs.slice(0, 10_000));
  const figures: string[] = [];
  for (let round = 0; round < 2; round++) {
    const before = cpuNsPerCall(baseline, inputs);
    const now = cpuNsPerCall((dt) => resolveInstant(dt, ZONE).epochMs, inputs);
    figures.push(`baseline ${before} ns, resolveInstant ${now} ns (${(now / before).toFixed(2)}x)`);
  }
  console.log(`${label}: ${figures.join('; ')}`);
}
