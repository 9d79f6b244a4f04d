import { type CivilDate, isValidDate } from './calendar.js';
import { Dtt, Flag, TM_NOT_SET, Tok } from './dotnet-datetime-lexer.js';

/**
 * What DateTime.Parse collects while it lexes (DateTimeRawInfo and DateTimeResult), and the
 * actions of the terminal states that turn the collected numbers into a date or a time
 * (DateTimeParse.GetDayOfNN and friends), for the invariant culture's date orders.
 */

// DS: parsing states. Non-terminal states index the transition table; terminal ones (> ERROR)
// fill the result and start over from BEGIN.
export const DS = {
  BEGIN: 0, N: 1, NN: 2, D_Nd: 3, D_NN: 4, D_NNd: 5, D_M: 6, D_MN: 7, D_NM: 8, D_MNd: 9, D_NDS: 10,
  D_Y: 11, D_YN: 12, D_YNd: 13, D_YM: 14, D_YMd: 15, D_S: 16, T_S: 17, T_Nt: 18, T_NNt: 19, ERROR: 20,
  DX_NN: 21, DX_NNN: 22, DX_MN: 23, DX_NM: 24, DX_MNN: 25, DX_DS: 26, DX_DSN: 27, DX_NDS: 28, DX_NNDS: 29,
  DX_YNN: 30, DX_YMN: 31, DX_YN: 32, DX_YM: 33, TX_N: 34, TX_NN: 35, TX_NNN: 36, TX_TS: 37, DX_NNY: 38,
} as const;

export class ParseState {
  /** DateTimeRawInfo: numbers not yet placed (at most 3), and names seen. */
  nums: number[] = [];
  rawMonth = -1;
  rawYear = -1;
  dayOfWeek = -1;
  timeMark = TM_NOT_SET;
  fraction = -1;
  /** DateTimeResult. */
  year = -1;
  month = -1;
  day = -1;
  hour = -1;
  minute = -1;
  second = -1;
  flags = 0;
  offsetMinutes = 0;
  /** The current token (DateTimeToken). */
  dtt: number = Dtt.Unk;
  num = 0;
  suffix: number = Tok.SepUnk;

  private todayValue: CivilDate | null = null;

  /** DateTime.Now's date, asked for only when the text lacks a date or a year. */
  constructor(private readonly todayOf: () => CivilDate) {}

  get today(): CivilDate {
    this.todayValue ??= this.todayOf();
    return this.todayValue;
  }

  n(i: number): number {
    return this.nums[i] ?? 0;
  }

  setDate(year: number, month: number, day: number): boolean {
    if (!isValidDate(year, month, day)) return false;
    this.year = year;
    this.month = month;
    this.day = day;
    return true;
  }

  defaultYear(): void {
    this.year = this.today.year;
    this.flags |= Flag.YearDefault;
  }
}

/** Calendar.ToFourDigitYear with TwoDigitYearMax 2029; null where .NET throws. */
export function fourDigitYear(year: number): number | null {
  if (year < 0 || year > 9999) return null;
  return year < 100 ? (year > 29 ? 1900 : 2000) + year : year;
}

function haveDate(s: ParseState): boolean {
  s.flags |= Flag.HaveDate;
  return true;
}

// The invariant culture's orders: month-day MD ("MMMM dd"), short date MDY ("MM/dd/yyyy") and
// year-month YM ("yyyy MMMM"), so only those branches of .NET's functions remain.
function dayOfNN(s: ParseState): boolean {
  if ((s.flags & Flag.HaveDate) !== 0) return false;
  s.defaultYear();
  return s.setDate(s.year, s.n(0), s.n(1)) && haveDate(s);
}

function dayOfNNN(s: ParseState): boolean {
  if ((s.flags & Flag.HaveDate) !== 0) return false;
  const year = fourDigitYear(s.n(2));
  return year !== null && s.setDate(year, s.n(0), s.n(1)) && haveDate(s);
}

function dayOfMN(s: ParseState): boolean {
  if ((s.flags & Flag.HaveDate) !== 0) return false;
  s.defaultYear();
  return s.setDate(s.year, s.rawMonth, s.n(0));
}

function dayOfNM(s: ParseState): boolean {
  if ((s.flags & Flag.HaveDate) !== 0) return false;
  // With "MMMM dd" and "yyyy MMMM", "21 Nov" reads as November 2021.
  const year = fourDigitYear(s.n(0));
  return year !== null && s.setDate(year, s.rawMonth, 1);
}

function dayOfMNN(s: ParseState): boolean {
  if ((s.flags & Flag.HaveDate) !== 0) return false;
  const year = fourDigitYear(s.n(1));
  if (year !== null && isValidDate(year, s.rawMonth, s.n(0))) return s.setDate(year, s.rawMonth, s.n(0)) && haveDate(s);
  const year2 = fourDigitYear(s.n(0));
  if (year2 !== null && isValidDate(year2, s.rawMonth, s.n(1))) return s.setDate(year2, s.rawMonth, s.n(1)) && haveDate(s);
  return false;
}

function dayWithYear(s: ParseState, month: number, day: number): boolean {
  if ((s.flags & Flag.HaveDate) !== 0) return false;
  return s.setDate(s.rawYear, month, day) && haveDate(s);
}

function dateOfDSN(s: ParseState): boolean {
  if (s.nums.length !== 1 || s.day !== -1) return false;
  s.day = s.n(0);
  return true;
}

function dateOfNDS(s: ParseState): boolean {
  if (s.month === -1 || s.year !== -1) return false;
  const year = fourDigitYear(s.n(0));
  if (year === null) return false;
  s.year = year;
  s.day = 1;
  return true;
}

function dateOfNNDS(s: ParseState): boolean {
  const has = (flag: number): boolean => (s.flags & flag) !== 0;
  if (has(Flag.HaveYear)) {
    if (!has(Flag.HaveMonth) && !has(Flag.HaveDay)) {
      const year = fourDigitYear(s.rawYear);
      if (year !== null && s.setDate(year, s.n(0), s.n(1))) return true;
    }
  } else if (has(Flag.HaveMonth) && !has(Flag.HaveDay)) {
    const year = fourDigitYear(s.n(1));
    if (year !== null && s.setDate(year, s.month, s.n(0))) return true;
  }
  return false;
}

function timeOf(s: ParseState, count: number): boolean {
  if ((s.flags & Flag.HaveTime) !== 0) return false;
  // A lone number is an hour only with AM or PM.
  if (count === 1 && s.timeMark === TM_NOT_SET) return false;
  s.hour = s.n(0);
  if (count > 1) s.minute = s.n(1);
  if (count > 2) s.second = s.n(2);
  s.flags |= Flag.HaveTime;
  return true;
}

function terminalAction(dps: number, s: ParseState): boolean {
  switch (dps) {
    case DS.DX_NN: return dayOfNN(s);
    case DS.DX_NNN: return dayOfNNN(s);
    case DS.DX_MN: return dayOfMN(s);
    case DS.DX_NM: return dayOfNM(s);
    case DS.DX_MNN: return dayOfMNN(s);
    case DS.DX_DS: return true;
    case DS.DX_YNN: return dayWithYear(s, s.n(0), s.n(1));
    case DS.DX_NNY: return dayWithYear(s, s.n(0), s.n(1));
    case DS.DX_YMN: return dayWithYear(s, s.rawMonth, s.n(0));
    case DS.DX_YN: return dayWithYear(s, s.n(0), 1);
    case DS.DX_YM: return dayWithYear(s, s.rawMonth, 1);
    case DS.TX_N: return timeOf(s, 1);
    case DS.TX_NN: return timeOf(s, 2);
    case DS.TX_NNN: return timeOf(s, 3);
    case DS.TX_TS: return true;
    case DS.DX_DSN: return dateOfDSN(s);
    case DS.DX_NDS: return dateOfNDS(s);
    case DS.DX_NNDS: return dateOfNNDS(s);
    default: return true;
  }
}

/** ProcessTerminalState: run the state's action; a terminal state also forgets the numbers. */
export function processTerminalState(dps: number, s: ParseState): boolean {
  if (!terminalAction(dps, s)) return false;
  if (dps > DS.ERROR) s.nums = [];
  return true;
}

/** ProcessDateTimeSuffix: a CJK suffix says which field the number is. */
export function processDateTimeSuffix(s: ParseState): boolean {
  const set = (flag: number, apply: () => void): boolean => {
    if ((s.flags & flag) !== 0) return false;
    s.flags |= flag;
    apply();
    return true;
  };
  switch (s.suffix) {
    case Tok.SepYearSuff: return set(Flag.HaveYear, () => { s.year = s.rawYear = s.num; });
    case Tok.SepMonthSuff: return set(Flag.HaveMonth, () => { s.month = s.rawMonth = s.num; });
    case Tok.SepDaySuff: return set(Flag.HaveDay, () => { s.day = s.num; });
    case Tok.SepHourSuff: return set(Flag.HaveHour, () => { s.hour = s.num; });
    case Tok.SepMinuteSuff: return set(Flag.HaveMinute, () => { s.minute = s.num; });
    case Tok.SepSecondSuff: return set(Flag.HaveSecond, () => { s.second = s.num; });
    default: return true;
  }
}
