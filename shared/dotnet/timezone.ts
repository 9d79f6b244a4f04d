import type { ParsedDateTime } from '../catalogue/types.js';
import type { EventInstant } from '../backends/types.js';
import { daysFromCivil } from './calendar.js';

/**
 * Time-zone arithmetic on the platform's IANA database (Intl), so zone rules stay current with
 * Node's ICU without a bundled tz library. Formatters are cached per zone.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      era: 'short',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** Offset of `zone` from UTC at the instant `epochMs`, in minutes (east positive). */
function offsetMinutesAt(zone: string, epochMs: number): number {
  if (zone === 'UTC' || zone === 'Etc/UTC') return 0;
  const parts = formatterFor(zone).formatToParts(new Date(epochMs));
  const get = (type: Intl.DateTimeFormatPartTypes): number => Number(parts.find((p) => p.type === type)?.value ?? 0);
  let year = get('year');
  if (parts.find((p) => p.type === 'era')?.value === 'BC') year = 1 - year;
  const asUtc = utcMs(year, get('month'), get('day'), get('hour'), get('minute'), get('second'), 0);
  const wholeSecond = Math.floor(epochMs / 1000) * 1000;
  return Math.round((asUtc - wholeSecond) / 60_000);
}

/** Days from 0001-01-01 to 1970-01-01. */
const UNIX_EPOCH_DAYS = daysFromCivil(1970, 1, 1);

/**
 * Epoch ms of a proleptic Gregorian date and time read as UTC (any year: Date.UTC would map 0..99
 * to 1900..1999). Arithmetic rather than a Date: two per event, and a Date was an object each.
 */
export function utcMs(year: number, month: number, day: number, hour: number, minute: number, second: number, ms: number): number {
  return (daysFromCivil(year, month, day) - UNIX_EPOCH_DAYS) * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1000 + ms;
}

/**
 * The instant a received dateTime denotes. Without an offset the text is local time of `zone`
 * (the provider's, else the service's). In a DST gap or overlap the earlier offset wins.
 */
export function resolveInstant(dt: ParsedDateTime, zone: string): EventInstant {
  const ms = Math.floor(dt.ticks / 10_000);
  const subMsTicks = dt.ticks % 10_000;
  const local = utcMs(dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second, ms);
  if (dt.offsetMinutes !== null) return { epochMs: local - dt.offsetMinutes * 60_000, subMsTicks };
  let offset = offsetMinutesAt(zone, local);
  const second = offsetMinutesAt(zone, local - offset * 60_000);
  if (second !== offset) offset = Math.max(offset, second);
  return { epochMs: local - offset * 60_000, subMsTicks };
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/**
 * xs:dateTime text of an instant in `zone`: `Z` for UTC, else `±hh:mm`; fraction (up to 7
 * digits) only when non-zero, trailing zeros trimmed, as XmlConvert writes it.
 */
export function formatInstant(instant: EventInstant, zone: string): string {
  const offset = offsetMinutesAt(zone, instant.epochMs);
  const d = new Date(instant.epochMs + offset * 60_000);
  const year = d.getUTCFullYear();
  let text = `${year < 0 ? '-' : ''}${pad(Math.abs(year), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  const ticks = d.getUTCMilliseconds() * 10_000 + instant.subMsTicks;
  if (ticks !== 0) text += `.${pad(ticks, 7).replace(/0+$/, '')}`;
  if (zone === 'UTC' || zone === 'Etc/UTC') return `${text}Z`;
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return `${text}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** .NET's DateTime range, which every store and every client can hold: 0001-01-01 to 9999-12-31 (UTC). */
const MIN_EPOCH_MS = Date.UTC(2000, 0, 1) - 730_119 * 86_400_000; // 0001-01-01T00:00:00Z
const MAX_EPOCH_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999); // with up to 9999 ticks below it

export function withinDotNetRange(instant: EventInstant): boolean {
  return instant.epochMs >= MIN_EPOCH_MS && instant.epochMs <= MAX_EPOCH_MS;
}
