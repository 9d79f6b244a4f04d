import {
  BYTE_CLASS,
  CR,
  decodeUtf8,
  GT,
  isNonAsciiChar,
  K_AMP,
  K_CONTROL,
  K_CR,
  K_DEL,
  K_HIGH,
  K_LF,
  K_LT,
  K_TAB,
  K_RBRACKET,
  LF,
  LS,
  NEL,
  RBRACKET,
  utf8Length,
} from './chars.js';
import { NEED_MORE, type Cursor } from './cursor.js';
import { charLength, scanReference, spaceLength, utf8Problem } from './lexical.js';

/**
 * Character data: the text between tags inside the root element, the white space allowed
 * outside it, and CDATA sections. Text is validated always and turned into a string only when
 * `keep` says the envelope needs it (an argument's value), with references resolved and line
 * ends normalized to LF as XML requires.
 */

/** Text from i to the next '<' (or the end of the input); the kept text goes to c.textOut. */
export function scanText(c: Cursor, i: number, keep: boolean): number {
  const { buf, end } = c;
  let out = '';
  let from = i;
  for (;;) {
    if (i >= end) {
      if (!c.final) return NEED_MORE;
      break;
    }
    const k = BYTE_CLASS[buf[i]!]!;
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
