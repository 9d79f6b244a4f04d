import type { ParsedDateTime } from '../catalogue/types.js';
import {
  addTicks, type CivilDate, daysFromCivil, daysInMonth, type DayTicks, inDotNetRange, TICKS_PER_MINUTE, TICKS_PER_SECOND,
  toParsedDateTime,
} from './calendar.js';
import { isWhiteSpace } from './dotnet-chars.js';

/**
 * XmlConvert.ToDateTime(text, XmlDateTimeSerializationMode.RoundtripKind), which XmlSerializer runs
 * on every SOAP dateTime: System.Xml.Schema.XsdDateTime's parser, ported. It takes every XML Schema
 * date/time form: dateTime, time (today's date), date, gYearMonth, gYear, gMonthDay (year 1904),
 * gMonth and gDay (this year); Z or ±hh:mm with hh and mm up to 99; any number of fraction digits,
 * rounded half to even at the 7th; white space around.
 *
 * .NET converts a value with an offset to the server's local time, and where the instant falls
 * outside 0001..9999 it clamps to DateTime.MinValue/MaxValue; the gateway keeps the instant and
 * refuses those (null).
 */

const KIND = { Unspecified: 0, Zulu: 1, West: 2, East: 3 } as const;
type Kind = (typeof KIND)[keyof typeof KIND];
type TypeCode = 'dateTime' | 'time' | 'date' | 'gYearMonth' | 'gYear' | 'gMonthDay' | 'gDay' | 'gMonth';

/** XML Schema gives gMonthDay and friends a leap year so --02-29 is valid. */
const LEAP_YEAR = 1904;
const MAX_FRACTION_DIGITS = 7;
/** 10^(7 − digits read): a table, since `10 ** n` with n unknown is a call to pow (bench/perf.ts). */
const FRACTION_SCALE = Array.from({ length: MAX_FRACTION_DIGITS }, (_, count) => 10 ** (MAX_FRACTION_DIGITS - count));

/** XsdDateTime.Parser: fields are shared by the attempts, as in .NET. */
class XsdParser {
  year = 0;
  month = 0;
  day = 0;
  hour = 0;
  minute = 0;
  second = 0;
  fraction = 0;
  kind: Kind = KIND.Unspecified;
  zoneHour = 0;
  zoneMinute = 0;
  private text = '';
  private length = 0;

  /** Parses `text` from scratch: every field is set again (one parser serves every call, see PARSER). */
  parse(text: string): TypeCode | null {
    this.text = text;
    this.length = text.length;
    this.year = this.month = this.day = this.hour = this.minute = this.second = this.fraction = 0;
    this.kind = KIND.Unspecified;
    this.zoneHour = this.zoneMinute = 0;
    let start = 0;
    while (start < this.length && isWhiteSpace(this.text.charCodeAt(start))) start++;
    if (this.parseDate(start)) {
      if (this.char(start + 10, 'T') && this.parseTimeAndZone(start + 11)) return 'dateTime';
      if (this.parseZoneAndWhitespace(start + 10)) return 'date';
    }
    if (this.parseTimeAndZone(start)) {
      this.setDate(LEAP_YEAR, 1, 1);
      return 'time';
    }
    const year = this.digits(start, 4);
    if (year !== null && year >= 1) {
      this.year = year;
      const month = this.digits(start + 5, 2);
      if (this.char(start + 4, '-') && month !== null && month >= 1 && month <= 12 && this.parseZoneAndWhitespace(start + 7)) {
        this.setDate(year, month, 1);
        return 'gYearMonth';
      }
      if (this.parseZoneAndWhitespace(start + 4)) {
        this.setDate(year, 1, 1);
        return 'gYear';
      }
    }
    const month = this.digits(start + 2, 2);
    if (this.char(start, '-') && this.char(start + 1, '-') && month !== null && month >= 1 && month <= 12) {
      const day = this.digits(start + 5, 2);
      if (this.char(start + 4, '-') && day !== null && day >= 1 && day <= daysInMonth(LEAP_YEAR, month) && this.parseZoneAndWhitespace(start + 7)) {
        this.setDate(LEAP_YEAR, month, day);
        return 'gMonthDay';
      }
      if (this.parseZoneAndWhitespace(start + 4) || (this.char(start + 4, '-') && this.char(start + 5, '-') && this.parseZoneAndWhitespace(start + 6))) {
        this.setDate(LEAP_YEAR, month, 1);
        return 'gMonth';
      }
    }
    const day = this.digits(start + 3, 2);
    if (this.char(start, '-') && this.char(start + 1, '-') && this.char(start + 2, '-') && day !== null && day >= 1 && day <= 31 && this.parseZoneAndWhitespace(start + 5)) {
      this.setDate(LEAP_YEAR, 1, day);
      return 'gDay';
    }
    return null;
  }

  private setDate(year: number, month: number, day: number): void {
    this.year = year;
    this.month = month;
    this.day = day;
  }

  private parseDate(start: number): boolean {
    const year = this.digits(start, 4);
    if (year === null || year < 1 || !this.char(start + 4, '-')) return false;
    this.year = year;
    const month = this.digits(start + 5, 2);
    if (month === null || month < 1 || month > 12 || !this.char(start + 7, '-')) return false;
    this.month = month;
    const day = this.digits(start + 8, 2);
    if (day === null || day < 1 || day > daysInMonth(year, month)) return false;
    this.day = day;
    return true;
  }

  private parseTimeAndZone(start: number): boolean {
    const end = this.parseTime(start);
    return end !== null && this.parseZoneAndWhitespace(end);
  }

  /** HH:mm:ss[.f…]; the index after it, or null. */
  private parseTime(start: number): number | null {
    const hour = this.digits(start, 2);
    const minute = this.digits(start + 3, 2);
    const second = this.digits(start + 6, 2);
    if (hour === null || hour >= 24 || !this.char(start + 2, ':') || minute === null || minute >= 60) return this.noTime();
    if (!this.char(start + 5, ':') || second === null || second >= 60) return this.noTime();
    this.hour = hour;
    this.minute = minute;
    this.second = second;
    let i = start + 8;
    if (this.char(i, '.')) {
      // Any number of digits; the 8th and later round the 7th half to even.
      this.fraction = 0;
      let count = 0;
      let round = 0;
      while (++i < this.length) {
        const d = this.text.charCodeAt(i) - 0x30;
        if (d < 0 || d > 9) break;
        if (count < MAX_FRACTION_DIGITS) this.fraction = this.fraction * 10 + d;
        else if (count === MAX_FRACTION_DIGITS) round = d > 5 ? 1 : d === 5 ? -1 : 0;
        else if (round < 0 && d !== 0) round = 1;
        count++;
      }
      if (count < MAX_FRACTION_DIGITS) {
        if (count === 0) return null;
        this.fraction *= FRACTION_SCALE[count]!;
      } else {
        if (round < 0) round = this.fraction & 1;
        this.fraction += round;
      }
    }
    return i;
  }

  /** .NET resets the hour when a time does not parse (it would clash with gYear). */
  private noTime(): null {
    this.hour = 0;
    return null;
  }

  private parseZoneAndWhitespace(start: number): boolean {
    let i = start;
    if (i < this.length) {
      const ch = this.text[i];
      if (ch === 'Z' || ch === 'z') {
        this.kind = KIND.Zulu;
        i++;
      } else if (i + 5 < this.length) {
        const zoneHour = this.digits(i + 1, 2);
        if (zoneHour !== null) this.zoneHour = zoneHour;
        const zoneMinute = zoneHour !== null && this.char(i + 3, ':') ? this.digits(i + 4, 2) : null;
        if (zoneMinute !== null) {
          this.zoneMinute = zoneMinute;
          if (ch === '-') {
            this.kind = KIND.West;
            i += 6;
          } else if (ch === '+') {
            this.kind = KIND.East;
            i += 6;
          }
        }
      }
    }
    while (i < this.length && isWhiteSpace(this.text.charCodeAt(i))) i++;
    return i === this.length;
  }

  private digits(start: number, count: number): number | null {
    if (start + count > this.length) return null;
    let value = 0;
    for (let i = start; i < start + count; i++) {
      const d = this.text.charCodeAt(i) - 0x30;
      if (d < 0 || d > 9) return null;
      value = value * 10 + d;
    }
    return value;
  }

  private char(index: number, ch: string): boolean {
    return index < this.length && this.text[index] === ch;
  }
}

/** Parsing is synchronous and never re-entered, so one parser serves every call: two fewer objects per event. */
const PARSER = new XsdParser();

function strict(text: string, todayOf: () => CivilDate): ParsedDateTime | null {
  const p = PARSER;
  const type = p.parse(text);
  if (type === null) return null;
  let value: DayTicks = {
    days: daysFromCivil(p.year, p.month, p.day),
    ticks: ((p.hour * 60 + p.minute) * 60 + p.second) * TICKS_PER_SECOND,
  };
  // new DateTime(...).AddTicks(fraction) throws past 9999-12-31.
  value = addTicks(value, p.fraction);
  if (!inDotNetRange(value)) return null;
  const today = type === 'time' || type === 'gMonth' || type === 'gDay' ? todayOf() : null;
  if (today !== null && type === 'time') value = { days: value.days + daysFromCivil(today.year, today.month, today.day) - daysFromCivil(LEAP_YEAR, 1, 1), ticks: value.ticks };
  else if (today !== null) {
    if (p.day > daysInMonth(today.year, p.month)) return null;
    value = { days: daysFromCivil(today.year, p.month, p.day), ticks: 0 };
  }
  if (p.kind === KIND.Unspecified) return toParsedDateTime(value, null);
  const zone = p.zoneHour * 60 + p.zoneMinute;
  const offset = p.kind === KIND.Zulu ? 0 : p.kind === KIND.West ? -zone : zone;
  if (!inDotNetRange(addTicks(value, -offset * TICKS_PER_MINUTE))) return null;
  return toParsedDateTime(value, offset === 0 ? 0 : offset);
}

interface XmlDateTimeOptions {
  /** Also take "2026-11-22 10:00:08" (a space for the T), which XmlConvert refuses. */
  readonly spaceForT?: boolean;
}

/** XmlConvert.ToDateTime(text, RoundtripKind), or null where it throws. `today` stands for DateTime.Now. */
export function parseXmlDateTime(text: string, today: () => CivilDate, options: XmlDateTimeOptions = {}): ParsedDateTime | null {
  const parsed = strict(text, today);
  if (parsed !== null || options.spaceForT !== true) return parsed;
  let start = 0;
  while (start < text.length && isWhiteSpace(text.charCodeAt(start))) start++;
  const t = start + 10;
  return text[t] === ' ' ? strict(`${text.slice(0, t)}T${text.slice(t + 1)}`, today) : null;
}
