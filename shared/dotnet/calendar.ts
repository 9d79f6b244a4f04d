import type { ParsedDateTime } from '../catalogue/types.js';

/**
 * Proleptic Gregorian arithmetic in .NET's terms: a DateTime is a count of 100 ns ticks since
 * 0001-01-01T00:00, within 0001-01-01..9999-12-31. Ticks beyond 2^53 do not fit a double, so a
 * value is kept as whole days plus the ticks of its day.
 */
export const TICKS_PER_SECOND = 10_000_000;
export const TICKS_PER_MINUTE = 60 * TICKS_PER_SECOND;
const TICKS_PER_DAY = 86_400 * TICKS_PER_SECOND;

export interface CivilDate {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

/** A DateTime value: days since 0001-01-01 and the ticks into that day (0..TICKS_PER_DAY-1). */
export interface DayTicks {
  readonly days: number;
  readonly ticks: number;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

export function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : (MONTH_DAYS[month - 1] ?? 0);
}

/** GregorianCalendar.IsValidDay for the one Gregorian era. */
export function isValidDate(year: number, month: number, day: number): boolean {
  return year >= 1 && year <= 9999 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/** Days from 0001-01-01 to the given date (which may lie outside .NET's range). */
export function daysFromCivil(year: number, month: number, day: number): number {
  // Shift the year to start in March so the leap day is the last day of the year.
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  // 306 = days from 0000-03-01 to 0001-01-01.
  return era * 146_097 + doe - 306;
}

function civilFromDays(days: number): CivilDate {
  const z = days + 306;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: era * 400 + yoe + (month <= 2 ? 1 : 0), month, day };
}

/** .NET DayOfWeek: 0 = Sunday; 0001-01-01 was a Monday. */
export function dayOfWeek(days: number): number {
  return (((days + 1) % 7) + 7) % 7;
}

const MAX_DAYS = daysFromCivil(9999, 12, 31);

/** Adds ticks (any sign, |ticks| < 2^53), carrying whole days. */
export function addTicks(value: DayTicks, ticks: number): DayTicks {
  const total = value.ticks + ticks;
  const carry = Math.floor(total / TICKS_PER_DAY);
  return { days: value.days + carry, ticks: total - carry * TICKS_PER_DAY };
}

export function inDotNetRange(value: DayTicks): boolean {
  return value.days >= 0 && value.days <= MAX_DAYS;
}

/**
 * The value as the gateway keeps it: wall-clock fields as sent, plus the offset when the text
 * had one (the instant is then the wall clock minus the offset).
 */
export function toParsedDateTime(value: DayTicks, offsetMinutes: number | null): ParsedDateTime {
  const { year, month, day } = civilFromDays(value.days);
  const secondsOfDay = Math.floor(value.ticks / TICKS_PER_SECOND);
  return {
    year,
    month,
    day,
    hour: Math.floor(secondsOfDay / 3600),
    minute: Math.floor(secondsOfDay / 60) % 60,
    second: secondsOfDay % 60,
    ticks: value.ticks % TICKS_PER_SECOND,
    offsetMinutes,
  };
}

const dateFormats = new Map<string, Intl.DateTimeFormat>();

/** The civil date of `epochMs` in the IANA zone `zone` ("today" for values without a date). */
export function civilDateIn(epochMs: number, zone: string): CivilDate {
  let format = dateFormats.get(zone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, year: 'numeric', month: 'numeric', day: 'numeric' });
    dateFormats.set(zone, format);
  }
  const parts = format.formatToParts(new Date(epochMs));
  const get = (type: Intl.DateTimeFormatPartTypes): number => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return { year: get('year'), month: get('month'), day: get('day') };
}
