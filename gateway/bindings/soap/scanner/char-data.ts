import { decodeUtf8, isNonAsciiChar, utf8Length } from './chars.js';
import { NEED_MORE, type Cursor } from './cursor.js';
import { charLength, scanReference, spaceLength, utf8Problem } from './lexical.js';

/**
 * Character data: the text between tags inside the root element, the white space allowed
 * outside it, CDATA sections, and attribute values. Text is validated always and turned into a
 * string only when `keep` says the envelope needs it (an argument's value), with references
 * resolved and line ends normalized to LF as XML requires.
 */

// Byte values are module-local: V8 reads an imported binding through its module cell, with a
// hole check, on every use, which measurably slowed the scanning loops (bench/parse.ts).
const TAB = 0x09;
const SPACE = 0x20;
const CR = 0x0d;
const GT = 0x3e;
const LT = 0x3c;
const AMP = 0x26;
const DEL = 0x7f;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const LF = 0x0a;
const LS = 0x2028;
const NEL = 0x85;
const RBRACKET = 0x5d;

/**
 * Byte classes for character data and attribute values: up to K_TAB needs no attention in text;
 * the rest stop the fast loops. Controls other than TAB/LF/CR are never allowed raw; DEL only in 1.0.
 */
const PLAIN = 0;
const K_QUOTE = 1;
const K_TAB = 2;
const K_RBRACKET = 3;
const K_LT = 4;
const K_AMP = 5;
const K_LF = 6;
const K_CR = 7;
const K_CONTROL = 8;
const K_DEL = 9;
const K_HIGH = 10;

const BYTE_CLASS: Uint8Array = (() => {
  const t = new Uint8Array(256);
  for (let b = 0; b < 0x20; b++) t[b] = K_CONTROL;
  t[LT] = K_LT;
  t[AMP] = K_AMP;
  t[RBRACKET] = K_RBRACKET;
  t[LF] = K_LF;
  t[CR] = K_CR;
  t[TAB] = K_TAB;
  t[DEL] = K_DEL;
  t[DQUOTE] = K_QUOTE;
  t[SQUOTE] = K_QUOTE;
  for (let b = 0x80; b < 0x100; b++) t[b] = K_HIGH;
  return t;
})();


/** "\n" followed by 0 to 63 spaces: the indentation between tags of most bodies. */
const INDENTATION = Array.from({ length: 64 }, (_, n) => `\n${' '.repeat(n)}`);

/** Text from i to the next '<' (or the end of the input); the kept text goes to c.textOut. */
export function scanText(c: Cursor, i: number, keep: boolean): number {
  const { buf, end } = c;
  if (buf[i] === LF) {
    // Indentation before a tag is most of the text in a pretty-printed body: one tight loop.
    let j = i + 1;
    while (j < end && buf[j] === SPACE) j++;
    if (j < end && buf[j] === LT && j - i <= INDENTATION.length) {
      c.newline(i);
      if (keep) c.textOut = INDENTATION[j - i - 1]!;
      return j;
    }
  }
  const classes = BYTE_CLASS;
  let out = '';
  let from = i;
  for (;;) {
    if (i >= end) {
      if (!c.final) return NEED_MORE;
      break;
    }
    const k = classes[buf[i]!]!;
    if (k <= K_TAB) {
      i++;
      continue;
    }
    if (k === K_LT) break;
    switch (k) {
      case K_AMP: {
        const next = scanReference(c, i);
        if (next === NEED_MORE) return NEED_MORE;
        if (keep) out += c.utf8(from, i) + String.fromCodePoint(c.refCode);
        i = from = next;
        continue;
      }
      case K_RBRACKET:
        if (i + 2 >= end) {
          // Cannot tell `]]>` yet; at the very end a lone `]` or `]]` is plain text.
          if (!c.final) return NEED_MORE;
        } else if (buf[i + 1] === RBRACKET && buf[i + 2] === GT) {
          c.fail(i + 2, 'the string "]]>" is disallowed in char data.');
        }
        i++;
        continue;
      case K_LF:
        c.newline(i);
        i++;
        continue;
      case K_CR: {
        const next = lineEnd(c, i);
        if (next === NEED_MORE) return NEED_MORE;
        if (keep) out += c.utf8(from, i) + '\n';
        i = from = next;
        continue;
      }
      case K_CONTROL:
        return c.fail(i, 'disallowed character.');
      case K_DEL:
        if (c.xml11) c.fail(i, 'disallowed character.');
        i++;
        continue;
      default: {
        // K_HIGH: a non-ASCII character.
        const cp = decodeUtf8(buf, i, end);
        if (cp < 0) return utf8Problem(c, i, cp);
        if (!isNonAsciiChar(cp, c.xml11)) c.fail(i, 'disallowed character.');
        const length = utf8Length(cp);
        if (c.xml11 && (cp === NEL || cp === LS)) {
          c.newline(i + length - 1);
          if (keep) out += c.utf8(from, i) + '\n';
          from = i + length;
        }
        i += length;
      }
    }
  }
  if (keep) c.textOut = from === i ? out : out + c.utf8(from, i);
  return i;
}

/**
 * The CR at i and what it forms a line end with (LF, or NEL in XML 1.1): the offset after it.
 * NEED_MORE when the buffer ends right after the CR and the pair cannot be told yet.
 */
function lineEnd(c: Cursor, i: number): number {
  const { buf, end } = c;
  if (i + 1 >= end) {
    if (!c.final) return NEED_MORE;
    c.newline(i);
    return i + 1;
  }
  if (buf[i + 1] === LF) {
    c.newline(i + 1);
    return i + 2;
  }
  if (c.xml11 && buf[i + 1] === 0xc2) {
    if (i + 2 >= end && !c.final) return NEED_MORE;
    if (buf[i + 2] === NEL) {
      c.newline(i + 2);
      return i + 3;
    }
  }
  c.newline(i);
  return i + 1;
}

/** White space between markup outside the root element; anything else there is an error. */
export function scanOutsideText(c: Cursor, i: number): number {
  for (;;) {
    if (i >= c.end) return c.final ? i : NEED_MORE;
    if (c.buf[i] === 0x3c) return i;
    const n = spaceLength(c, i);
    if (n === NEED_MORE) return NEED_MORE;
    if (n === 0) c.fail(i, 'text data outside of root node.');
    i += n;
  }
}

/** CDATA content from i (just after `<![CDATA[`) to `]]>`: the offset after it; kept text to c.textOut. */
export function scanCData(c: Cursor, i: number, keep: boolean): number {
  const { buf, end } = c;
  let out = '';
  let from = i;
  for (;;) {
    if (i >= end) return c.more(i);
    const b = buf[i]!;
    if (b === RBRACKET) {
      if (i + 2 >= end) return c.more(end);
      if (buf[i + 1] === RBRACKET && buf[i + 2] === GT) {
        if (keep) c.textOut = out + c.utf8(from, i);
        return i + 3;
      }
      i++;
      continue;
    }
    if (b === CR) {
      const next = lineEnd(c, i);
      if (next === NEED_MORE) return NEED_MORE;
      if (keep) out += c.utf8(from, i) + '\n';
      i = from = next;
      continue;
    }
    const length = charLength(c, i);
    if (length === NEED_MORE) return NEED_MORE;
    if (keep && c.xml11 && length > 1 && isXml11LineEnd(buf, i)) {
      out += c.utf8(from, i) + '\n';
      from = i + length;
    }
    i += length;
  }
}

function isXml11LineEnd(buf: Uint8Array, i: number): boolean {
  return (buf[i] === 0xc2 && buf[i + 1] === NEL) || (buf[i] === 0xe2 && buf[i + 1] === 0x80 && buf[i + 2] === 0xa8);
}

/** An attribute value from i to its closing quote (returned); sets c.plain. */
export function scanAttributeValue(c: Cursor, i: number, quote: number): number {
  const { buf, end } = c;
  const classes = BYTE_CLASS;
  let plain = true;
  for (;;) {
    if (i >= end) return c.more(i);
    const b = buf[i]!;
    const k = classes[b]!;
    if (k === PLAIN || k === K_RBRACKET || (k === K_QUOTE && b !== quote)) {
      i++;
      continue;
    }
    switch (k) {
      case K_QUOTE:
        c.plain = plain;
        return i;
      case K_LT:
        return c.fail(i, 'disallowed character.');
      case K_AMP: {
        const next = scanReference(c, i);
        if (next === NEED_MORE) return NEED_MORE;
        plain = false;
        i = next;
        continue;
      }
      case K_LF:
        c.newline(i);
        plain = false;
        i++;
        continue;
      case K_CR:
        c.carriageReturn(i);
        plain = false;
        i++;
        continue;
      case K_TAB:
        plain = false;
        i++;
        continue;
      case K_CONTROL:
        return c.fail(i, 'disallowed character.');
      case K_DEL:
        if (c.xml11) c.fail(i, 'disallowed character.');
        i++;
        continue;
      case K_HIGH: {
        const cp = decodeUtf8(buf, i, end);
        if (cp < 0) return utf8Problem(c, i, cp);
        if (!isNonAsciiChar(cp, c.xml11)) c.fail(i, 'disallowed character.');
        const length = utf8Length(cp);
        if (c.xml11 && (cp === NEL || cp === LS)) {
          c.newline(i + length - 1);
          plain = false;
        }
        i += length;
        continue;
      }
      default:
        i++;
    }
  }
}
