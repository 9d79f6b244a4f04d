import { isAsciiDigit, isLetter, isWhiteSpace } from './dotnet-chars.js';

/**
 * The lexer of DateTime.Parse (System.DateTimeParse.Lex and __DTString) for the invariant culture,
 * ported statement by statement so odd inputs fail or succeed exactly as in .NET; see
 * dotnet-datetime.ts for the state machine it feeds. Hebrew numbers and Japanese/Taiwan eras are
 * left out: the invariant culture's token table has none.
 */

/** TokenType: regular tokens in the low byte, separators in the high byte. */
export const Tok = {
  Number: 1, YearNumber: 2, Am: 3, Pm: 4, Month: 5, EndOfString: 6, DayOfWeek: 7, TimeZone: 8, Era: 9,
  DateWord: 10, Unknown: 11, IgnorableSymbol: 15,
  SepUnk: 0x100, SepEnd: 0x200, SepSpace: 0x300, SepAm: 0x400, SepPm: 0x500, SepDate: 0x600, SepTime: 0x700,
  SepYearSuff: 0x800, SepMonthSuff: 0x900, SepDaySuff: 0xa00, SepHourSuff: 0xb00, SepMinuteSuff: 0xc00,
  SepSecondSuff: 0xd00, SepLocalTimeMark: 0xe00, SepDateOrOffset: 0xf00,
  RegularMask: 0xff, SeparatorMask: 0xff00,
} as const;

/** DTT: the token classes the state machine consumes. */
export const Dtt = {
  End: 0, NumEnd: 1, NumAmpm: 2, NumSpace: 3, NumDatesep: 4, NumTimesep: 5, MonthEnd: 6, MonthSpace: 7,
  MonthDatesep: 8, NumDatesuff: 9, NumTimesuff: 10, DayOfWeek: 11, YearSpace: 12, YearDateSep: 13, YearEnd: 14,
  TimeZone: 15, Era: 16, NumUTCTimeMark: 17, Unk: 18, NumLocalTimeMark: 19,
} as const;

export const TM_NOT_SET = -1;
export const TM_AM = 0;
export const TM_PM = 1;

export const Flag = {
  HaveYear: 0x1, HaveMonth: 0x2, HaveDay: 0x4, HaveHour: 0x8, HaveMinute: 0x10, HaveSecond: 0x20, HaveTime: 0x40,
  HaveDate: 0x80, TimeZoneUsed: 0x100, TimeZoneUtc: 0x200, YearDefault: 0x1000,
} as const;

interface TokenEntry {
  readonly text: string;
  readonly type: number;
  readonly value: number;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/**
 * DateTimeFormatInfo.CreateTokenHashTable for the invariant culture. The hash table keeps a token
 * ahead of its own prefixes, so a lookup finds the longest token that matches: lists per first
 * character, longest first, give the same answer.
 */
const TOKENS: ReadonlyMap<string, readonly TokenEntry[]> = (() => {
  const entries: TokenEntry[] = [
    { text: ',', type: Tok.IgnorableSymbol, value: 0 },
    { text: '.', type: Tok.IgnorableSymbol, value: 0 },
    { text: ':', type: Tok.SepTime, value: 0 },
    { text: 'AM', type: Tok.SepAm | Tok.Am, value: 0 },
    { text: 'PM', type: Tok.SepPm | Tok.Pm, value: 1 },
    // CJK and Korean date/time suffixes are in every culture's table.
    { text: '\u5e74', type: Tok.SepYearSuff, value: 0 },
    { text: '\ub144', type: Tok.SepYearSuff, value: 0 },
    { text: '\u6708', type: Tok.SepMonthSuff, value: 0 },
    { text: '\uc6d4', type: Tok.SepMonthSuff, value: 0 },
    { text: '\u65e5', type: Tok.SepDaySuff, value: 0 },
    { text: '\uc77c', type: Tok.SepDaySuff, value: 0 },
    { text: '\u6642', type: Tok.SepHourSuff, value: 0 },
    { text: '\u65f6', type: Tok.SepHourSuff, value: 0 },
    { text: '\u5206', type: Tok.SepMinuteSuff, value: 0 },
    { text: '\u79d2', type: Tok.SepSecondSuff, value: 0 },
    { text: '-', type: Tok.SepDateOrOffset, value: 0 },
    { text: '/', type: Tok.SepDate, value: 0 },
    ...MONTHS.flatMap((m, i) => [
      { text: m, type: Tok.Month, value: i + 1 },
      { text: m.slice(0, 3), type: Tok.Month, value: i + 1 },
    ]),
    ...DAYS.flatMap((d, i) => [
      { text: d, type: Tok.DayOfWeek, value: i },
      { text: d.slice(0, 3), type: Tok.DayOfWeek, value: i },
    ]),
    { text: 'A.D.', type: Tok.Era, value: 1 },
    { text: 'AD', type: Tok.Era, value: 1 },
    { text: 'T', type: Tok.SepLocalTimeMark, value: 0 },
    { text: 'GMT', type: Tok.TimeZone, value: 0 },
    { text: 'Z', type: Tok.TimeZone, value: 0 },
  ];
  const byFirst = new Map<string, TokenEntry[]>();
  for (const e of entries) {
    const key = e.text[0]!.toLowerCase();
    const list = byFirst.get(key) ?? [];
    if (!list.some((x) => x.text === e.text)) list.push(e);
    byFirst.set(key, list);
  }
  for (const list of byFirst.values()) list.sort((a, b) => b.text.length - a.text.length);
  return byFirst;
})();

function equalsIgnoreCase(s: string, start: number, token: string): boolean {
  for (let i = 0; i < token.length; i++) {
    const a = s[start + i]!;
    const b = token[i]!;
    if (a !== b && a.toLowerCase() !== b.toLowerCase()) return false;
  }
  return true;
}

interface SubString {
  /** 'number' (digits), 'other' (one character), 'invalid' (over 8 digits) or 'end'. */
  type: 'number' | 'other' | 'invalid' | 'end';
  index: number;
  length: number;
  value: number;
}

/** __DTString: the text, the index of the current character and that character (m_current). */
export class DTString {
  index = -1;
  current = 0;
  readonly len: number;

  constructor(readonly value: string) {
    this.len = value.length;
  }

  at(i: number): number {
    return this.value.charCodeAt(i);
  }

  getNext(): boolean {
    this.index++;
    if (this.index < this.len) {
      this.current = this.at(this.index);
      return true;
    }
    return false;
  }

  atEnd(): boolean {
    return this.index >= this.len;
  }

  advance(count: number): boolean {
    this.index += count;
    if (this.index < this.len) {
      this.current = this.at(this.index);
      return true;
    }
    return false;
  }

  getRegularToken(): { type: number; value: number } {
    if (this.index >= this.len) return { type: Tok.EndOfString, value: 0 };
    for (;;) {
      if (isAsciiDigit(this.current)) {
        let value = this.current - 0x30;
        const start = this.index;
        while (++this.index < this.len) {
          this.current = this.at(this.index);
          if (!isAsciiDigit(this.current)) break;
          value = value * 10 + (this.current - 0x30);
        }
        const digits = this.index - start;
        if (digits > 8) return { type: Tok.Number, value: -1 };
        return { type: digits < 3 ? Tok.Number : Tok.YearNumber, value };
      }
      if (isWhiteSpace(this.current)) {
        let found = false;
        while (++this.index < this.len) {
          this.current = this.at(this.index);
          if (!isWhiteSpace(this.current)) {
            found = true;
            break;
          }
        }
        if (found) continue;
        return { type: Tok.EndOfString, value: 0 };
      }
      return this.tokenize(Tok.RegularMask) ?? { type: Tok.Unknown, value: 0 };
    }
  }

  /** DateTimeFormatInfo.Tokenize: the token at the current character, advancing past it. */
  tokenize(mask: number): { type: number; value: number } | null {
    const letter = isLetter(this.current);
    const first = String.fromCharCode(this.current);
    const candidates = TOKENS.get(letter ? first.toLowerCase() : first);
    if (candidates === undefined) return null;
    const remaining = this.len - this.index;
    for (const t of candidates) {
      if ((t.type & mask) === 0 || t.text.length > remaining) continue;
      if (!equalsIgnoreCase(this.value, this.index, t.text)) continue;
      // A word token must not run on into more letters ("Mayday" is no month).
      const next = this.index + t.text.length;
      if (letter && next < this.len && isLetter(this.at(next))) return null;
      this.advance(t.text.length);
      return { type: t.type & mask, value: t.value };
    }
    return null;
  }

  getSeparatorToken(): { type: number; indexBefore: number; charBefore: number } {
    const indexBefore = this.index;
    const charBefore = this.current;
    if (!this.skipWhiteSpaceCurrent()) return { type: Tok.SepEnd, indexBefore, charBefore };
    const type = isAsciiDigit(this.current) ? Tok.SepSpace : (this.tokenize(Tok.SeparatorMask)?.type ?? Tok.SepSpace);
    return { type, indexBefore, charBefore };
  }

  rollBack(index: number, current: number): void {
    this.index = index;
    this.current = current;
  }

  /** Advances onto `ch` if it is the next character; at the end the index still moves. */
  match(ch: number): boolean {
    if (++this.index >= this.len) return false;
    if (this.at(this.index) === ch) {
      this.current = ch;
      return true;
    }
    this.index--;
    return false;
  }

  getNextDigit(): boolean {
    if (++this.index >= this.len) return false;
    return isAsciiDigit(this.at(this.index));
  }

  skipWhiteSpaces(): void {
    while (this.index + 1 < this.len && isWhiteSpace(this.at(this.index + 1))) this.index++;
  }

  skipWhiteSpaceCurrent(): boolean {
    if (this.index >= this.len) return false;
    if (!isWhiteSpace(this.current)) return true;
    while (++this.index < this.len) {
      this.current = this.at(this.index);
      if (!isWhiteSpace(this.current)) return true;
    }
    return false;
  }

  getSubString(): SubString {
    const sub: SubString = { type: 'end', index: this.index, length: 0, value: 0 };
    while (this.index + sub.length < this.len) {
      const ch = this.at(this.index + sub.length);
      const type = isAsciiDigit(ch) ? 'number' : 'other';
      if (sub.length === 0) sub.type = type;
      else if (sub.type !== type) break;
      sub.length++;
      if (type === 'other') break;
      if (sub.length > 8) {
        sub.type = 'invalid';
        return sub;
      }
      sub.value = sub.value * 10 + (ch - 0x30);
    }
    return sub;
  }

  consume(sub: SubString): void {
    this.index = sub.index + sub.length;
    if (this.index < this.len) this.current = this.at(this.index);
  }
}

/** ParseTimeZone: "+8", "+08", "+0800", "+8:00", "+08:00"; the offset in minutes. */
export function parseTimeZone(str: DTString): number | null {
  let sub = str.getSubString();
  if (sub.length !== 1) return null;
  const sign = str.at(sub.index);
  if (sign !== 0x2b && sign !== 0x2d) return null;
  str.consume(sub);
  sub = str.getSubString();
  if (sub.type !== 'number') return null;
  let hours: number;
  let minutes = 0;
  if (sub.length === 1 || sub.length === 2) {
    hours = sub.value;
    str.consume(sub);
    sub = str.getSubString();
    if (sub.length === 1 && str.at(sub.index) === 0x3a) {
      str.consume(sub);
      sub = str.getSubString();
      if (sub.type !== 'number' || sub.length < 1 || sub.length > 2) return null;
      minutes = sub.value;
      str.consume(sub);
    }
  } else if (sub.length === 3 || sub.length === 4) {
    hours = Math.floor(sub.value / 100);
    minutes = sub.value % 100;
    str.consume(sub);
  } else return null;
  if (minutes >= 60) return null;
  const offset = hours * 60 + minutes;
  return sign === 0x2d && offset !== 0 ? -offset : offset;
}

/** ParseFraction: the digits after the '.' at the current index, as a double like .NET sums them. */
export function parseFraction(str: DTString): { fraction: number; found: boolean } {
  let fraction = 0;
  let base = 0.1;
  let digits = 0;
  while (str.getNext() && isAsciiDigit(str.current)) {
    fraction += (str.current - 0x30) * base;
    base *= 0.1;
    digits++;
  }
  return { fraction, found: digits > 0 };
}

/** VerifyValidPunctuation: VB-style "#…#" around the text, or trailing NULs. */
export function verifyValidPunctuation(str: DTString): boolean {
  const ch = str.at(str.index);
  if (ch === 0x23) {
    let foundStart = false;
    let foundEnd = false;
    for (let i = 0; i < str.len; i++) {
      const c = str.at(i);
      if (c === 0x23) {
        if (foundStart) {
          if (foundEnd) return false;
          foundEnd = true;
        } else foundStart = true;
      } else if (c === 0) {
        if (!foundEnd) return false;
      } else if (!isWhiteSpace(c) && (!foundStart || foundEnd)) return false;
    }
    if (!foundEnd) return false;
    str.getNext();
    return true;
  }
  if (ch === 0) {
    for (let i = str.index; i < str.len; i++) if (str.at(i) !== 0) return false;
    str.index = str.len;
    return true;
  }
  return false;
}
