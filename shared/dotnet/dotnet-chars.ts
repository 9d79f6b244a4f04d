/** .NET's character classes, by UTF-16 code unit as .NET sees strings. */

const UNICODE_SPACE = /[\p{Zs}\p{Zl}\p{Zp}]/u;
const UNICODE_LETTER = /\p{L}/u;

/** Char.IsWhiteSpace: tab..CR, NEL, NBSP and the Unicode space/line/paragraph separators. */
export function isWhiteSpace(c: number): boolean {
  if (c < 0x100) return c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0x85 || c === 0xa0;
  return UNICODE_SPACE.test(String.fromCharCode(c));
}

/** Char.IsLetter (categories Lu, Ll, Lt, Lm, Lo); a lone surrogate is not a letter. */
export function isLetter(c: number): boolean {
  if (c < 0x80) return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
  return UNICODE_LETTER.test(String.fromCharCode(c));
}

export function isAsciiDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** String.Trim(): Char.IsWhiteSpace at both ends. */
export function trimWhiteSpace(s: string, alsoNul = false): string {
  const trims = (c: number): boolean => isWhiteSpace(c) || (alsoNul && c === 0);
  let start = 0;
  let end = s.length;
  while (start < end && trims(s.charCodeAt(start))) start++;
  while (end > start && trims(s.charCodeAt(end - 1))) end--;
  return s.slice(start, end);
}
