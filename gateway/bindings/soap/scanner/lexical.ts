import { decodeUtf8, isNameCode, isNameStartCode, isNonAsciiChar, isReferableChar, NAME_ASCII, NAME_START_ASCII, utf8Length } from './chars.js';
import { NEED_MORE, type Cursor } from './cursor.js';

// Byte values are module-local: V8 reads an imported binding through its module cell, with a
// hole check, on every use, which measurably slowed the scanning loops (bench/parse.ts).
const COLON = 0x3a;
const CR = 0x0d;
const HASH = 0x23;
const LF = 0x0a;
const LS = 0x2028;
const NEL = 0x85;
const SEMICOLON = 0x3b;
const SPACE = 0x20;
const TAB = 0x09;
const TRUNCATED = -2;

/**
 * The lexical pieces every token is made of: names, white space, references and single
 * characters. Each takes the cursor and an offset and returns the offset after what it read,
 * or NEED_MORE when the buffer ends first; malformed input fails with line:column.
 */

/** A decodeUtf8 failure at i: wait for the rest of a cut sequence, or refuse a bad one. */
export function utf8Problem(c: Cursor, i: number, code: number): number {
  if (code === TRUNCATED) return c.truncated(i);
  return c.invalidUtf8(i);
}

/** A Name at i (fails with `message` when buf[i] cannot start one); sets c.nameColon. */
export function scanName(c: Cursor, i: number, message: string): number {
  const { buf, end } = c;
  if (i >= end) return c.more(i);
  const b = buf[i]!;
  let colon = -1;
  if (b < 0x80) {
    if (NAME_START_ASCII[b] === 0) c.fail(i, message);
    if (b === COLON) colon = i;
    return scanNameChars(c, i + 1, colon);
  }
  const cp = decodeUtf8(buf, i, end);
  if (cp < 0) return utf8Problem(c, i, cp);
  if (!isNameStartCode(cp)) c.fail(i, message);
  return scanNameChars(c, i + utf8Length(cp), colon);
}

/** NameChar* from i (a name only ends at a byte that is not one, so the buffer end means wait). */
export function scanNameChars(c: Cursor, i: number, colon: number): number {
  const { buf, end } = c;
  const nameBytes = NAME_ASCII;
  for (;;) {
    if (i >= end) return c.more(i);
    const b = buf[i]!;
    if (b < 0x80) {
      if (nameBytes[b] === 0) break;
      if (b === COLON && colon < 0) colon = i;
      i++;
      continue;
    }
    const cp = decodeUtf8(buf, i, end);
    if (cp < 0) return utf8Problem(c, i, cp);
    if (!isNameCode(cp)) break;
    i += utf8Length(cp);
  }
  c.nameColon = colon;
  return i;
}

/** Bytes of the S character at i (NEL and LS are S in XML 1.1, after line-end normalization), 0 if none. */
export function spaceLength(c: Cursor, i: number): number {
  if (i >= c.end) return c.more(i);
  const b = c.buf[i]!;
  if (b === SPACE || b === TAB) return 1;
  if (b === LF) {
    c.newline(i);
    return 1;
  }
  if (b === CR) {
    c.carriageReturn(i);
    return 1;
  }
  if (!c.xml11 || (b !== 0xc2 && b !== 0xe2)) return 0;
  const cp = decodeUtf8(c.buf, i, c.end);
  if (cp === TRUNCATED) return c.truncated(i);
  if (cp !== NEL && cp !== LS) return 0;
  const length = utf8Length(cp);
  c.newline(i + length - 1);
  return length;
}

/** Position of the first non-S character at or after i. */
export function skipSpaces(c: Cursor, i: number): number {
  for (;;) {
    const n = spaceLength(c, i);
    if (n === NEED_MORE) return NEED_MORE;
    if (n === 0) return i;
    i += n;
  }
}

/**
 * One character of comment, PI or CDATA content at i, validated: its length in bytes. Line ends
 * are counted; what they normalize to is the caller's business.
 */
export function charLength(c: Cursor, i: number): number {
  const b = c.buf[i]!;
  if (b >= 0x20) {
    if (b < 0x7f || (b === 0x7f && !c.xml11)) return 1;
    if (b === 0x7f) return c.fail(i, 'disallowed character.');
    const cp = decodeUtf8(c.buf, i, c.end);
    if (cp < 0) return utf8Problem(c, i, cp);
    if (!isNonAsciiChar(cp, c.xml11)) c.fail(i, 'disallowed character.');
    const length = utf8Length(cp);
    if (c.xml11 && (cp === NEL || cp === LS)) c.newline(i + length - 1);
    return length;
  }
  if (b === LF) c.newline(i);
  else if (b === CR) c.carriageReturn(i);
  else if (b !== TAB) c.fail(i, 'disallowed character.');
  return 1;
}

const ENTITIES: readonly (readonly [string, number])[] = [
  ['amp', 0x26],
  ['lt', 0x3c],
  ['gt', 0x3e],
  ['quot', 0x22],
  ['apos', 0x27],
];

/**
 * The reference whose '&' is at i: one of the five predefined entities or a character reference
 * to a Char (there is no DTD, so nothing else is declared). Sets c.refCode to its code point.
 */
export function scanReference(c: Cursor, i: number): number {
  const { buf, end } = c;
  const p = i + 1;
  if (p >= end) return c.more(p);
  if (buf[p] === HASH) return scanCharReference(c, p + 1);
  if (buf[p] === SEMICOLON) c.fail(p, 'empty entity name.');
  const after = scanName(c, p, 'disallowed character in entity name.');
  if (after === NEED_MORE) return NEED_MORE;
  if (buf[after] !== SEMICOLON) c.fail(after, 'disallowed character in entity name.');
  for (const [name, code] of ENTITIES) {
    if (after - p === name.length && matchesAscii(buf, p, name)) {
      c.refCode = code;
      return after + 1;
    }
  }
  return c.fail(after, 'undefined entity.');
}

function scanCharReference(c: Cursor, p: number): number {
  const { buf, end } = c;
  if (p >= end) return c.more(p);
  const hex = buf[p] === 0x78;
  if (hex) p++;
  let value = 0;
  let digits = 0;
  for (;;) {
    if (p >= end) return c.more(p);
    const b = buf[p]!;
    let d: number;
    if (b >= 0x30 && b <= 0x39) d = b - 0x30;
    else if (hex && b >= 0x61 && b <= 0x66) d = b - 0x57;
    else if (hex && b >= 0x41 && b <= 0x46) d = b - 0x37;
    else break;
    // Past U+10FFFF the value only has to stay invalid, not exact.
    value = Math.min(value * (hex ? 16 : 10) + d, 0x110000);
    digits++;
    p++;
  }
  if (buf[p] !== SEMICOLON || digits === 0 || !isReferableChar(value, c.xml11)) c.fail(p, 'malformed character entity.');
  c.refCode = value;
  return p + 1;
}

export function matchesAscii(buf: Uint8Array, at: number, text: string): boolean {
  for (let k = 0; k < text.length; k++) if (buf[at + k] !== text.charCodeAt(k)) return false;
  return true;
}
