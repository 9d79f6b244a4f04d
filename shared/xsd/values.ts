import type { DateTimeValue, ParsedDateTime } from '../catalogue/types.js';

/**
 * Parsing of XML Schema scalar values as the deployed service accepts them (XmlConvert rules,
 * made a little more lenient, docs/protocol.md §Value conversion). Parsers return `undefined` for text they cannot
 * read, never throw: the caller decides whether that is a fault or an invalid event (-3).
 */

const INT_RE = /^[+-]?\d+$/;
const DOUBLE_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const DATETIME_RE =
  /^(-?\d{4,})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})?$/;

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;

export function parseInt32(text: string): number | undefined {
  const t = text.trim();
  if (!INT_RE.test(t)) return undefined;
  const n = Number(t);
  return n >= INT_MIN && n <= INT_MAX ? n : undefined;
}

/** `true`/`false` in any case, and `1`/`0`. */
export function parseBoolean(text: string): boolean | undefined {
  const t = text.trim().toLowerCase();
  if (t === 'true' || t === '1') return true;
  if (t === 'false' || t === '0') return false;
  return undefined;
}

/** Invariant culture; INF, -INF and NaN as XmlConvert writes them. NaN for unreadable text. */
export function parseDouble(text: string): number {
  const t = text.trim();
  if (DOUBLE_RE.test(t)) return Number(t);
  if (t === 'INF' || t === '+INF') return Infinity;
  if (t === '-INF') return -Infinity;
  return NaN;
}

/** Days of months 1-12 in a common year. */
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeap(year) ? 29 : (MONTH_DAYS[month - 1] ?? 0);
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** xs:dateTime with 0 to 7+ fraction digits and `Z`, an offset or nothing; a space for `T`. */
export function parseDateTimeText(text: string): ParsedDateTime | null {
  const m = DATETIME_RE.exec(text.trim());
  if (m === null) return null;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  // .NET keeps 7 fraction digits (100 ns ticks); further digits are dropped.
  const ticks = frac === undefined ? 0 : Number(frac.slice(0, 7).padEnd(7, '0'));
  let offsetMinutes: number | null = null;
  if (zone === 'Z') offsetMinutes = 0;
  else if (zone !== undefined) {
    const sign = zone[0] === '-' ? -1 : 1;
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(4, 6));
    if (oh > 14 || om > 59) return null;
    offsetMinutes = sign * (oh * 60 + om);
  }
  return { year, month, day, hour, minute, second, ticks, offsetMinutes };
}

export function readDateTime(text: string): DateTimeValue {
  return { text, parsed: parseDateTimeText(text) };
}
