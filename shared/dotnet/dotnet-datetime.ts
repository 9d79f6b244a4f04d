import type { ParsedDateTime } from '../catalogue/types.js';
import {
  addTicks, type CivilDate, dayOfWeek, daysFromCivil, type DayTicks, inDotNetRange, isValidDate, TICKS_PER_MINUTE,
  TICKS_PER_SECOND, toParsedDateTime,
} from './calendar.js';
import { isLetter, isWhiteSpace } from './dotnet-chars.js';
import {
  Dtt, DTString, Flag, parseFraction, parseTimeZone, TM_AM, TM_NOT_SET, TM_PM, Tok, verifyValidPunctuation,
} from './dotnet-datetime-lexer.js';
import { DS, fourDigitYear, ParseState, processDateTimeSuffix, processTerminalState } from './dotnet-datetime-state.js';

/**
 * DateTime.Parse(text, CultureInfo.InvariantCulture): System.DateTimeParse.TryParse ported for the
 * invariant culture (short date MM/dd/yyyy, month-day "MMMM dd", year-month "yyyy MMMM", two-digit
 * years up to 2029), as Mono 6.8 runs it (the .NET Core code, which refuses offsets beyond ±14 h).
 *
 * The result keeps the wall clock as written and the offset, if any. .NET converts a value with an
 * offset to the server's local time; the gateway keeps the instant instead, and refuses one outside
 * 0001-01-01..9999-12-31 (where .NET wraps a time on 0001-01-01 within that day).
 * `today` stands for DateTime.Now, which fills in a missing date or year.
 */

const { BEGIN, N, NN, D_Nd, D_NN, D_NNd, D_M, D_MN, D_NM, D_MNd, D_NDS, D_Y, D_YN, D_YNd, D_YM, D_YMd, D_S, T_S, T_Nt, T_NNt } = DS;
const { DX_NN, DX_NNN, DX_MN, DX_NM, DX_MNN, DX_DS, DX_DSN, DX_NDS, DX_NNDS, DX_YNN, DX_YMN, DX_YN, DX_YM } = DS;
const { TX_N, TX_NN, TX_NNN, TX_TS, DX_NNY, ERROR } = DS;
const E = ERROR;

// Columns: End NumEnd NumAmPm NumSpace NumDaySep NumTimesep MonthEnd MonthSpace MonthDSep NumDateSuff
// NumTimeSuff DayOfWeek YearSpace YearDateSep YearEnd TimeZone Era UTCTimeMark.
const STATES: readonly (readonly number[])[] = [
  /* BEGIN */ [BEGIN, E, TX_N, N, D_Nd, T_Nt, E, D_M, D_M, D_S, T_S, BEGIN, D_Y, D_Y, E, BEGIN, BEGIN, E],
  /* N     */ [E, DX_NN, E, NN, D_NNd, E, DX_NM, D_NM, D_MNd, D_NDS, E, N, D_YN, D_YNd, DX_YN, N, N, E],
  /* NN    */ [DX_NN, DX_NNN, TX_N, DX_NNN, E, T_Nt, DX_MNN, DX_MNN, E, E, T_S, NN, DX_NNY, E, DX_NNY, NN, NN, E],
  /* D_Nd  */ [E, DX_NN, E, D_NN, D_NNd, E, DX_NM, D_MN, D_MNd, E, E, D_Nd, D_YN, D_YNd, DX_YN, E, D_Nd, E],
  /* D_NN  */ [DX_NN, DX_NNN, TX_N, DX_NNN, E, T_Nt, DX_MNN, DX_MNN, E, DX_DS, T_S, D_NN, DX_NNY, E, DX_NNY, E, D_NN, E],
  /* D_NNd */ [E, DX_NNN, DX_NNN, DX_NNN, E, E, DX_MNN, DX_MNN, E, DX_DS, E, D_NNd, DX_NNY, E, DX_NNY, E, D_NNd, E],
  /* D_M   */ [E, DX_MN, E, D_MN, D_MNd, E, E, E, E, E, E, D_M, D_YM, D_YMd, DX_YM, E, D_M, E],
  /* D_MN  */ [DX_MN, DX_MNN, DX_MNN, DX_MNN, E, T_Nt, E, E, E, DX_DS, T_S, D_MN, DX_YMN, E, DX_YMN, E, D_MN, E],
  /* D_NM  */ [DX_NM, DX_MNN, DX_MNN, DX_MNN, E, T_Nt, E, E, E, DX_DS, T_S, D_NM, DX_YMN, E, DX_YMN, E, D_NM, E],
  /* D_MNd */ [E, DX_MNN, E, DX_MNN, E, E, E, E, E, E, E, D_MNd, DX_YMN, E, DX_YMN, E, D_MNd, E],
  /* D_NDS */ [DX_NDS, DX_NNDS, DX_NNDS, DX_NNDS, E, T_Nt, E, E, E, D_NDS, T_S, D_NDS, E, E, E, E, D_NDS, E],
  /* D_Y   */ [E, DX_YN, E, D_YN, D_YNd, E, DX_YM, D_YM, D_YMd, D_YM, E, D_Y, E, E, E, E, D_Y, E],
  /* D_YN  */ [DX_YN, DX_YNN, DX_YNN, DX_YNN, E, E, DX_YMN, DX_YMN, E, E, E, D_YN, E, E, E, E, D_YN, E],
  /* D_YNd */ [E, DX_YNN, DX_YNN, DX_YNN, E, E, DX_YMN, DX_YMN, E, E, E, D_YN, E, E, E, E, D_YN, E],
  /* D_YM  */ [DX_YM, DX_YMN, DX_YMN, DX_YMN, E, E, E, E, E, E, E, D_YM, E, E, E, E, D_YM, E],
  /* D_YMd */ [E, DX_YMN, DX_YMN, DX_YMN, E, E, E, E, E, E, E, D_YM, E, E, E, E, D_YM, E],
  /* D_S   */ [DX_DS, DX_DSN, TX_N, T_Nt, E, T_Nt, E, E, E, D_S, T_S, D_S, E, E, E, E, D_S, E],
  /* T_S   */ [TX_TS, TX_TS, TX_TS, T_Nt, D_Nd, E, E, E, E, D_S, T_S, T_S, E, E, E, T_S, T_S, E],
  /* T_Nt  */ [E, TX_NN, TX_NN, TX_NN, E, T_NNt, DX_NM, D_NM, E, E, T_S, E, E, E, E, T_Nt, T_Nt, TX_NN],
  /* T_NNt */ [E, TX_NNN, TX_NNN, TX_NNN, E, E, E, E, E, E, T_S, T_NNt, E, E, E, T_NNt, T_NNt, TX_NNN],
];

const next = (dps: number, dtt: number): number => STATES[dps]![dtt]!;

/** Bankers' rounding as Math.Round(double) computes it. */
function roundHalfEven(a: number): number {
  let r = Math.floor(a + 0.5);
  if (a === Math.floor(a) + 0.5 && r % 2 !== 0) r -= 1;
  return r;
}

function addNumber(s: ParseState, value: number): void {
  s.nums.push(value);
}

/** The DateOrOffset separator ('-'): a date separator, or the start of an offset after a complete date. */
function dateOrOffset(str: DTString, sep: { indexBefore: number; charBefore: number }, dps: number, asDate: number, asSpace: number): number {
  if (next(dps, asDate) === ERROR && next(dps, asSpace) > ERROR) {
    str.rollBack(sep.indexBefore, sep.charBefore);
    return asSpace;
  }
  return asDate;
}

function handleTimeZone(str: DTString, s: ParseState): boolean {
  if (str.index >= str.len - 1) return true;
  let ch = str.at(str.index);
  let white = 0;
  while (isWhiteSpace(ch) && str.index + white < str.len - 1) ch = str.at(str.index + ++white);
  if (ch !== 0x2b && ch !== 0x2d) return true;
  str.index += white;
  if ((s.flags & Flag.TimeZoneUsed) !== 0) return false;
  s.flags |= Flag.TimeZoneUsed;
  const offset = parseTimeZone(str);
  if (offset === null) return false;
  s.offsetMinutes = offset;
  return true;
}

function lexNumber(dps: number, str: DTString, s: ParseState, type: number, value: number): boolean {
  if (s.nums.length === 3 || value === -1) return false;
  if (dps === T_NNt && str.index < str.len - 1 && str.at(str.index) === 0x2e) s.fraction = parseFraction(str).fraction;
  if ((dps === T_NNt || dps === T_Nt) && str.index < str.len - 1 && !handleTimeZone(str, s)) return false;
  s.num = value;
  if (type === Tok.YearNumber) {
    if (s.rawYear !== -1) return false;
    s.rawYear = value;
    const sep = str.getSeparatorToken();
    switch (sep.type) {
      case Tok.SepEnd: s.dtt = Dtt.YearEnd; break;
      case Tok.SepAm:
      case Tok.SepPm:
        // .NET records a failure here but lexes on with an unknown token.
        if (s.timeMark === TM_NOT_SET) {
          s.timeMark = sep.type === Tok.SepAm ? TM_AM : TM_PM;
          s.dtt = Dtt.YearSpace;
        }
        break;
      case Tok.SepSpace: s.dtt = Dtt.YearSpace; break;
      case Tok.SepDate: s.dtt = Dtt.YearDateSep; break;
      case Tok.SepDateOrOffset: s.dtt = dateOrOffset(str, sep, dps, Dtt.YearDateSep, Dtt.YearSpace); break;
      case Tok.SepYearSuff: case Tok.SepMonthSuff: case Tok.SepDaySuff:
        s.dtt = Dtt.NumDatesuff;
        s.suffix = sep.type;
        break;
      case Tok.SepHourSuff: case Tok.SepMinuteSuff: case Tok.SepSecondSuff:
        s.dtt = Dtt.NumTimesuff;
        s.suffix = sep.type;
        break;
      default: return false;
    }
    return true;
  }
  const sep = str.getSeparatorToken();
  switch (sep.type) {
    case Tok.SepEnd: s.dtt = Dtt.NumEnd; addNumber(s, value); break;
    case Tok.SepAm:
    case Tok.SepPm:
      if (s.timeMark !== TM_NOT_SET) break;
      s.timeMark = sep.type === Tok.SepAm ? TM_AM : TM_PM;
      s.dtt = Dtt.NumAmpm;
      // "1/10 5 AM": the two numbers before are a month and day.
      if (dps === D_NN && !processTerminalState(DX_NN, s)) return false;
      addNumber(s, value);
      if ((dps === T_NNt || dps === T_Nt) && !handleTimeZone(str, s)) return false;
      break;
    case Tok.SepSpace: s.dtt = Dtt.NumSpace; addNumber(s, value); break;
    case Tok.SepDate: s.dtt = Dtt.NumDatesep; addNumber(s, value); break;
    case Tok.SepDateOrOffset: s.dtt = dateOrOffset(str, sep, dps, Dtt.NumDatesep, Dtt.NumSpace); addNumber(s, value); break;
    case Tok.SepTime: s.dtt = Dtt.NumTimesep; addNumber(s, value); break;
    case Tok.SepYearSuff: {
      const year = fourDigitYear(value);
      if (year === null) return false;
      s.num = year;
      s.dtt = Dtt.NumDatesuff;
      s.suffix = sep.type;
      break;
    }
    case Tok.SepMonthSuff: case Tok.SepDaySuff: s.dtt = Dtt.NumDatesuff; s.suffix = sep.type; break;
    case Tok.SepHourSuff: case Tok.SepMinuteSuff: case Tok.SepSecondSuff: s.dtt = Dtt.NumTimesuff; s.suffix = sep.type; break;
    case Tok.SepLocalTimeMark: s.dtt = Dtt.NumLocalTimeMark; addNumber(s, value); break;
    default: return false;
  }
  return true;
}

function lex(dps: number, str: DTString, s: ParseState): boolean {
  s.dtt = Dtt.Unk;
  const token = str.getRegularToken();
  switch (token.type) {
    case Tok.Number:
    case Tok.YearNumber:
      return lexNumber(dps, str, s, token.type, token.value);
    case Tok.DayOfWeek:
      if (s.dayOfWeek !== -1) return false;
      s.dayOfWeek = token.value;
      s.dtt = Dtt.DayOfWeek;
      return true;
    case Tok.Month: {
      if (s.rawMonth !== -1) return false;
      const sep = str.getSeparatorToken();
      if (sep.type === Tok.SepEnd) s.dtt = Dtt.MonthEnd;
      else if (sep.type === Tok.SepSpace) s.dtt = Dtt.MonthSpace;
      else if (sep.type === Tok.SepDate) s.dtt = Dtt.MonthDatesep;
      else if (sep.type === Tok.SepDateOrOffset) s.dtt = dateOrOffset(str, sep, dps, Dtt.MonthDatesep, Dtt.MonthSpace);
      else return false;
      s.rawMonth = token.value;
      return true;
    }
    case Tok.Era:
      s.dtt = Dtt.Era;
      return true;
    case Tok.TimeZone:
      if ((s.flags & Flag.TimeZoneUsed) !== 0) return false;
      s.dtt = Dtt.TimeZone;
      s.flags |= Flag.TimeZoneUsed | Flag.TimeZoneUtc;
      s.offsetMinutes = 0;
      return true;
    case Tok.EndOfString:
      s.dtt = Dtt.End;
      return true;
    case Tok.DateWord:
    case Tok.IgnorableSymbol:
      return true;
    case Tok.Am:
    case Tok.Pm:
      if (s.timeMark !== TM_NOT_SET) return false;
      s.timeMark = token.type === Tok.Am ? TM_AM : TM_PM;
      return true;
    default:
      return lexUnknown(str, s);
  }
}

function lexUnknown(str: DTString, s: ParseState): boolean {
  // A letter here starts an unknown word ("The string was not recognized ... unknown word").
  if (isLetter(str.current)) return false;
  if ((str.current === 0x2d || str.current === 0x2b) && (s.flags & Flag.TimeZoneUsed) === 0) {
    const start = str.index;
    const offset = parseTimeZone(str);
    if (offset !== null) {
      s.flags |= Flag.TimeZoneUsed;
      s.offsetMinutes = offset;
      return true;
    }
    str.index = start;
  }
  return verifyValidPunctuation(str);
}

/** ParseDigits(str, 2): exactly two digits after the current index. */
function twoDigits(str: DTString): number | null {
  const start = str.index;
  let value = 0;
  let length = 0;
  while (length < 2) {
    if (!str.getNextDigit()) {
      str.index--;
      break;
    }
    value = value * 10 + (str.at(str.index) - 0x30);
    length++;
  }
  if (length < 2) {
    str.index = start;
    return null;
  }
  return value;
}

/** The wall clock and offset; with an offset, the instant must lie within .NET's range. */
function finish(value: DayTicks, s: ParseState): ParsedDateTime | null {
  if ((s.flags & Flag.TimeZoneUsed) === 0) return toParsedDateTime(value, null);
  if (Math.abs(s.offsetMinutes) > 14 * 60) return null;
  if (!inDotNetRange(addTicks(value, -s.offsetMinutes * TICKS_PER_MINUTE))) return null;
  return toParsedDateTime(value, s.offsetMinutes);
}

function dateTimeOf(year: number, month: number, day: number, hour: number, minute: number, second: number, fraction: number): DayTicks | null {
  if (!isValidDate(year, month, day) || hour > 23 || minute > 59 || second > 59) return null;
  let value: DayTicks = { days: daysFromCivil(year, month, day), ticks: ((hour * 60 + minute) * 60 + second) * TICKS_PER_SECOND };
  if (fraction > 0) value = addTicks(value, roundHalfEven(fraction * TICKS_PER_SECOND));
  return inDotNetRange(value) ? value : null;
}

/** "yyyy-MM-ddT…": after the T, HH:mm[:ss[.fff…]] then an optional Z or offset, nothing else. */
function parseIso8601(str: DTString, s: ParseState): ParsedDateTime | null {
  str.index--;
  str.skipWhiteSpaces();
  const hour = twoDigits(str);
  if (hour === null) return null;
  str.skipWhiteSpaces();
  if (!str.match(0x3a)) return null;
  str.skipWhiteSpaces();
  const minute = twoDigits(str);
  if (minute === null) return null;
  str.skipWhiteSpaces();
  let second = 0;
  let fraction = 0;
  if (str.match(0x3a)) {
    str.skipWhiteSpaces();
    const digits = twoDigits(str);
    if (digits === null) return null;
    second = digits;
    if (str.match(0x2e)) {
      const parsed = parseFraction(str);
      if (!parsed.found) return null;
      fraction = parsed.fraction;
      str.index--;
    }
    str.skipWhiteSpaces();
  }
  if (str.getNext()) {
    const ch = str.at(str.index);
    if (ch === 0x2b || ch === 0x2d) {
      s.flags |= Flag.TimeZoneUsed;
      const offset = parseTimeZone(str);
      if (offset === null) return null;
      s.offsetMinutes = offset;
    } else if (ch === 0x5a || ch === 0x7a) {
      s.flags |= Flag.TimeZoneUsed | Flag.TimeZoneUtc;
      s.offsetMinutes = 0;
    } else str.index--;
    str.skipWhiteSpaces();
    if (str.match(0x23)) {
      if (!verifyValidPunctuation(str)) return null;
      str.skipWhiteSpaces();
    }
    if (str.match(0) && !verifyValidPunctuation(str)) return null;
    if (str.getNext()) return null;
  }
  const value = dateTimeOf(s.rawYear, s.n(0), s.n(1), hour, minute, second, fraction);
  return value === null ? null : finish(value, s);
}

function tryParse(text: string, today: () => CivilDate): ParsedDateTime | null {
  if (text.length === 0) return null;
  const s = new ParseState(today);
  const str = new DTString(text);
  str.getNext();
  let dps: number = BEGIN;
  let reachedTerminal = false;
  do {
    if (!lex(dps, str, s)) return null;
    if (s.dtt === Dtt.Unk) continue;
    if (s.suffix !== Tok.SepUnk) {
      if (!processDateTimeSuffix(s)) return null;
      s.suffix = Tok.SepUnk;
    }
    if (s.dtt === Dtt.NumLocalTimeMark) return dps === D_YNd || dps === D_YN ? parseIso8601(str, s) : null;
    dps = next(dps, s.dtt);
    if (dps === ERROR) return null;
    if (dps > ERROR) {
      if (!processTerminalState(dps, s)) return null;
      reachedTerminal = true;
      dps = BEGIN;
    }
  } while (s.dtt !== Dtt.End && s.dtt !== Dtt.NumEnd && s.dtt !== Dtt.MonthEnd);
  if (!reachedTerminal) return null;
  // AdjustHour: AM takes 0..12 (12 AM is midnight), PM adds 12 below noon.
  if (s.timeMark === TM_AM) {
    if (s.hour < 0 || s.hour > 12) return null;
    if (s.hour === 12) s.hour = 0;
  } else if (s.timeMark === TM_PM) {
    if (s.hour < 0 || s.hour > 23) return null;
    if (s.hour < 12) s.hour += 12;
  }
  // CheckDefaultDateTime: a missing date is today; a missing year this year; month and day 1.
  if (s.year === -1 && s.month === -1 && s.day === -1) {
    s.year = s.today.year;
    s.month = s.today.month;
    s.day = s.today.day;
  } else if (s.month === -1 && s.day === -1) {
    s.month = 1;
    s.day = 1;
  } else {
    if (s.year === -1) s.year = s.today.year;
    if (s.month === -1) s.month = 1;
    if (s.day === -1) s.day = 1;
  }
  const value = dateTimeOf(s.year, s.month, s.day, Math.max(s.hour, 0), Math.max(s.minute, 0), Math.max(s.second, 0), s.fraction);
  if (value === null) return null;
  if (s.dayOfWeek !== -1 && s.dayOfWeek !== dayOfWeek(value.days)) return null;
  return finish(value, s);
}

/**
 * DateTime.Parse(text, CultureInfo.InvariantCulture), or null where it throws. `today` is the
 * date DateTime.Now would give (for "10:00" or "Nov 21").
 */
export function parseDotNetDateTime(text: string, today: () => CivilDate): ParsedDateTime | null {
  return tryParse(text, today);
}
