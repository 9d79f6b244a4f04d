import type { ParsedDateTime } from '../catalogue/types.js';
import type { EventInstant } from '../events/instant.js';
import { daysFromCivil } from './calendar.js';

/**
 * Time-zone arithmetic on the platform's IANA database (Intl), so zone rules stay current with
 * Node's ICU without a bundled tz library. Formatters are cached per zone.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

/** Writes only the offset that matters: `1/15/2027, GMT-05:00` (`GMT` alone for +00:00; seconds for some old LMTs). */
function formatterFor(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
    formatters.set(zone, f);
  }
  return f;
}

/** `GMT` then, unless the offset is 0, a sign (ICU may write U+2212), hours, minutes and maybe seconds. */
const LONG_OFFSET = /GMT(?:([+\-\u2212])(\d\d):(\d\d)(?::(\d\d))?)?$/;

/**
 * Offset of `zone` from UTC at the instant `epochMs`, in minutes (east positive; an old local mean
 * time's seconds rounded). format() rather than formatToParts(): a quarter of the cost.
 */
function offsetMinutesAt(zone: string, epochMs: number): number {
  if (zone === 'UTC' || zone === 'Etc/UTC') return 0;
  const text = formatterFor(zone).format(epochMs);
  const m = LONG_OFFSET.exec(text);
  if (m === null) throw new Error(`Unexpected time-zone offset text from Intl: ${text}`);
  if (m[1] === undefined) return 0;
  const seconds = Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4] ?? 0);
  return Math.round((m[1] === '+' ? seconds : -seconds) / 60);
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
 * Every UTC offset a zone has had since 1900 lies within these bounds (minutes), so the instant a
 * local time denotes is between local - EASTMOST and local - WESTMOST. Probing the two ends
 * assumes no zone changed its offset and changed it back within those 26 hours.
 */
const WESTMOST_OFFSET = -12 * 60;
const EASTMOST_OFFSET = 14 * 60;

/**
 * The offset .NET gives local time `local` (epoch ms of the wall clock read as UTC) of `zone`:
 * DateTime.ToUniversalTime() of an Unspecified DateTime, which is TimeZoneInfo.ConvertTimeToUtc
 * with NoThrowOnInvalidTime. A time valid once takes its one offset; a time a change repeated or
 * skipped takes the smaller of the offsets around the change: for a daylight-saving change that
 * is standard time (the repeated hour's second occurrence; a skipped time read with the offset
 * before the change, so it lands after it). docs/protocol.md §Local times and clock changes.
 */
function resolveLocalOffset(zone: string, local: number): number {
  // The offsets in effect at the earliest and the latest instant `local` can denote.
  const earliest = offsetMinutesAt(zone, local - EASTMOST_OFFSET * 60_000);
  const latest = offsetMinutesAt(zone, local - WESTMOST_OFFSET * 60_000);
  const earliestValid = offsetMinutesAt(zone, local - earliest * 60_000) === earliest;
  if (earliest === latest && earliestValid) return earliest;
  const latestValid = offsetMinutesAt(zone, local - latest * 60_000) === latest;
  if (earliestValid !== latestValid) return earliestValid ? earliest : latest;
  // Both valid (repeated) or neither (skipped): the smaller offset.
  return Math.min(earliest, latest);
}

const HOUR_MS = 3_600_000;
/** Per zone, local hours (epoch ms / 1 h) with no offset change within reach, and their offset. */
const plainHours = new Map<string, Map<number, number>>();
/** Hours kept per zone: events come near the present, so a few suffice; a full map starts over. */
const PLAIN_HOURS_KEPT = 4096;

/**
 * resolveLocalOffset, remembered per local hour when the zone keeps one offset from the earliest
 * instant the hour's first minute can denote to the latest its last can: each probe is an Intl
 * call of about 4 µs, and an event carries two times.
 */
function localOffsetMinutes(zone: string, local: number): number {
  const hour = Math.floor(local / HOUR_MS);
  let hours = plainHours.get(zone);
  const known = hours?.get(hour);
  if (known !== undefined) return known;
  const offset = resolveLocalOffset(zone, local);
  const start = hour * HOUR_MS;
  if (offsetMinutesAt(zone, start - EASTMOST_OFFSET * 60_000) === offset && offsetMinutesAt(zone, start + HOUR_MS - WESTMOST_OFFSET * 60_000) === offset) {
    if (hours === undefined) plainHours.set(zone, (hours = new Map<number, number>()));
    else if (hours.size >= PLAIN_HOURS_KEPT) hours.clear();
    hours.set(hour, offset);
  }
  return offset;
}

/**
 * The instant a received dateTime denotes. Without an offset the text is local time of `zone`
 * (the provider's, else the service's), resolved as .NET resolves it (localOffsetMinutes).
 */
export function resolveInstant(dt: ParsedDateTime, zone: string): EventInstant {
  const ms = Math.floor(dt.ticks / 10_000);
  const subMsTicks = dt.ticks % 10_000;
  const local = utcMs(dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second, ms);
  if (dt.offsetMinutes !== null) return { epochMs: local - dt.offsetMinutes * 60_000, subMsTicks };
  if (zone === 'UTC' || zone === 'Etc/UTC') return { epochMs: local, subMsTicks };
  return { epochMs: local - localOffsetMinutes(zone, local) * 60_000, subMsTicks };
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
