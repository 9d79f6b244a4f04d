/**
 * Character classes of XML 1.0 (fifth edition) and 1.1 over UTF-8 bytes, and a strict UTF-8
 * decoder (the WHATWG rules TextDecoder's fatal mode applies: no overlongs, no surrogates,
 * nothing above U+10FFFF). ASCII goes through lookup tables; only non-ASCII bytes are decoded.
 */

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const MINUS = 0x2d;
const COLON = 0x3a;
/** An XML 1.1 line end besides CR and LF. */
const NEL = 0x85;

/** decodeUtf8 results that are not code points. */
export const INVALID = -1;
/** The buffer ends inside a sequence that is valid so far. */
export const TRUNCATED = -2;

/**
 * Code point of the UTF-8 sequence whose lead byte (>= 0x80) is at buf[i], INVALID, or
 * TRUNCATED when `end` cuts a sequence that is valid so far.
 */
export function decodeUtf8(buf: Uint8Array, i: number, end: number): number {
  const b0 = buf[i]!;
  if (b0 < 0xc2) return INVALID;
  if (i + 1 >= end) return TRUNCATED;
  const b1 = buf[i + 1]!;
  if (b0 < 0xe0) {
    if ((b1 & 0xc0) !== 0x80) return INVALID;
    return ((b0 & 0x1f) << 6) | (b1 & 0x3f);
  }
  if (b0 < 0xf0) {
    if (b1 < (b0 === 0xe0 ? 0xa0 : 0x80) || b1 > (b0 === 0xed ? 0x9f : 0xbf)) return INVALID;
    if (i + 2 >= end) return TRUNCATED;
    const b2 = buf[i + 2]!;
    if ((b2 & 0xc0) !== 0x80) return INVALID;
    return ((b0 & 0x0f) << 12) | ((b1 & 0x3f) << 6) | (b2 & 0x3f);
  }
  if (b0 < 0xf5) {
    if (b1 < (b0 === 0xf0 ? 0x90 : 0x80) || b1 > (b0 === 0xf4 ? 0x8f : 0xbf)) return INVALID;
    if (i + 2 >= end) return TRUNCATED;
    const b2 = buf[i + 2]!;
    if ((b2 & 0xc0) !== 0x80) return INVALID;
    if (i + 3 >= end) return TRUNCATED;
    const b3 = buf[i + 3]!;
    if ((b3 & 0xc0) !== 0x80) return INVALID;
    return ((b0 & 0x07) << 18) | ((b1 & 0x3f) << 12) | ((b2 & 0x3f) << 6) | (b3 & 0x3f);
  }
  return INVALID;
}

/** Bytes of the UTF-8 sequence of a non-ASCII code point decodeUtf8 returned. */
export function utf8Length(cp: number): number {
  return cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/**
 * Char of XML 1.0 for a decoded non-ASCII code point (decodeUtf8 never yields surrogates or
 * values above U+10FFFF). XML 1.1 also forbids C1 controls but NEL (a line end).
 */
export function isNonAsciiChar(cp: number, xml11: boolean): boolean {
  if (cp === 0xfffe || cp === 0xffff) return false;
  return !xml11 || cp > 0x9f || cp === NEL;
}

/** A character reference's code point: Char of the document's XML version. */
export function isReferableChar(cp: number, xml11: boolean): boolean {
  if (cp >= 0x20) return cp <= 0xd7ff || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
  return xml11 ? cp >= 1 : cp === TAB || cp === LF || cp === CR;
}

export function isNameStartCode(c: number): boolean {
  return (
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x61 && c <= 0x7a) ||
    c === COLON ||
    c === 0x5f ||
    (c >= 0xc0 && c <= 0xd6) ||
    (c >= 0xd8 && c <= 0xf6) ||
    (c >= 0xf8 && c <= 0x2ff) ||
    (c >= 0x370 && c <= 0x37d) ||
    (c >= 0x37f && c <= 0x1fff) ||
    c === 0x200c ||
    c === 0x200d ||
    (c >= 0x2070 && c <= 0x218f) ||
    (c >= 0x2c00 && c <= 0x2fef) ||
    (c >= 0x3001 && c <= 0xd7ff) ||
    (c >= 0xf900 && c <= 0xfdcf) ||
    (c >= 0xfdf0 && c <= 0xfffd) ||
    (c >= 0x10000 && c <= 0xeffff)
  );
}

export function isNameCode(c: number): boolean {
  return (
    isNameStartCode(c) ||
    c === MINUS ||
    c === 0x2e ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0xb7 ||
    (c >= 0x300 && c <= 0x36f) ||
    c === 0x203f ||
    c === 0x2040
  );
}

function asciiTable(test: (c: number) => boolean): Uint8Array {
  const t = new Uint8Array(128);
  for (let c = 0; c < 128; c++) t[c] = test(c) ? 1 : 0;
  return t;
}

/** ASCII NameStartChar / NameChar: 1 when the byte is one. */
export const NAME_START_ASCII = asciiTable(isNameStartCode);
export const NAME_ASCII = asciiTable(isNameCode);

export function isSpaceByte(b: number): boolean {
  return b === SPACE || b === LF || b === TAB || b === CR;
}
