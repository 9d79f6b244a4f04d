import { isSpaceByte } from './chars.js';
import { NEED_MORE, type Cursor } from './cursor.js';
import { charLength, matchesAscii, scanName, skipSpaces, spaceLength } from './lexical.js';

// Byte values are module-local: V8 reads an imported binding through its module cell, with a
// hole check, on every use, which measurably slowed the scanning loops (bench/parse.ts).
const DQUOTE = 0x22;
const EQUALS = 0x3d;
const GT = 0x3e;
const MINUS = 0x2d;
const QUESTION = 0x3f;
const SQUOTE = 0x27;

/**
 * The markup that is neither an element nor character data: comments, processing instructions,
 * the XML declaration, and the `<!` forms (of which DOCTYPE is refused by the caller).
 */

export const BANG_COMMENT = 0;
export const BANG_CDATA = 1;
export const BANG_DOCTYPE = 2;
const BANG_FORMS = ['--', '[CDATA[', 'DOCTYPE'];

/** Which `<!` form starts at i: BANG_COMMENT, BANG_CDATA or BANG_DOCTYPE; anything else fails. */
export function bangForm(c: Cursor, i: number): number {
  const at = i + 2;
  const available = c.end - at;
  let possible = false;
  let longest = 0;
  for (let form = 0; form < BANG_FORMS.length; form++) {
    const text = BANG_FORMS[form]!;
    const n = Math.min(available, text.length);
    longest = Math.max(longest, commonPrefix(c.buf, at, text, n));
    if (!matchesAscii(c.buf, at, text.slice(0, n))) continue;
    if (n === text.length) return form;
    possible = true;
  }
  if (possible) return c.more(c.end);
  return c.fail(at + longest, 'incorrect syntax.');
}

/** How many of the first `n` bytes at `at` match `text`. */
function commonPrefix(buf: Uint8Array, at: number, text: string, n: number): number {
  let k = 0;
  while (k < n && buf[at + k] === text.charCodeAt(k)) k++;
  return k;
}

/** The comment whose `<!--` is at i: the offset after `-->`. `--` may not occur inside. */
export function scanComment(c: Cursor, i: number): number {
  const { buf, end } = c;
  let p = i + 4;
  for (;;) {
    if (p >= end) return c.more(p);
    if (buf[p] === MINUS) {
      if (p + 1 >= end) return c.more(p + 1);
      if (buf[p + 1] === MINUS) {
        if (p + 2 >= end) return c.more(p + 2);
        if (buf[p + 2] !== GT) c.fail(p + 2, 'malformed comment.');
        return p + 3;
      }
      p++;
      continue;
    }
    const n = charLength(c, p);
    if (n === NEED_MORE) return NEED_MORE;
    p += n;
  }
}

/** What the XML declaration said about the encoding: the name, or null when it has none. */
export interface Declaration {
  encoding: string | null;
}

/**
 * The processing instruction whose `<?` is at i, or the XML declaration when its target is
 * `xml` and it opens the document (`atStart`). Returns the offset after `?>`.
 */
export function scanProcessingInstruction(c: Cursor, i: number, atStart: boolean, decl: Declaration): number {
  const { buf, end } = c;
  const target = i + 2;
  if (target >= end) return c.more(target);
  const first = buf[target]!;
  if (first === QUESTION || isSpaceByte(first)) c.fail(target, 'processing instruction without a target.');
  const targetEnd = scanName(c, target, 'disallowed character in processing instruction name.');
  if (targetEnd === NEED_MORE) return NEED_MORE;
  if (targetEnd - target === 3 && matchesAscii(buf, target, 'xml')) {
    if (!atStart) c.fail(targetEnd - 1, 'an XML declaration must be at the start of the document.');
    return scanXmlDeclaration(c, targetEnd, decl);
  }
  if (targetEnd - target === 3 && c.utf8(target, targetEnd).toLowerCase() === 'xml') {
    c.fail(targetEnd - 1, 'the processing instruction target "xml" is reserved in any case.');
  }
  let p = targetEnd;
  if (buf[p] !== QUESTION) {
    const space = spaceLength(c, p);
    if (space === NEED_MORE) return NEED_MORE;
    if (space === 0) c.fail(p, 'disallowed character in processing instruction name.');
    p += space;
  } else {
    // Without white space after the target, only `?>` may follow (XML 1.0 production [16]).
    if (p + 1 >= end) return c.more(p + 1);
    if (buf[p + 1] !== GT) c.fail(p + 1, 'a processing instruction target must be followed by white space or "?>".');
    return p + 2;
  }
  for (;;) {
    if (p >= end) return c.more(p);
    if (buf[p] === QUESTION) {
      if (p + 1 >= end) return c.more(p + 1);
      if (buf[p + 1] === GT) return p + 2;
      p++;
      continue;
    }
    const n = charLength(c, p);
    if (n === NEED_MORE) return NEED_MORE;
    p += n;
  }
}

const VERSION_RE = /^1\.[0-9]+$/;
const ENCODING_RE = /^[A-Za-z][A-Za-z0-9._-]*$/;

/**
 * `<?xml` S `version` Eq VersionNum (S `encoding` Eq EncName)? (S `standalone` Eq (yes|no))? S? `?>`
 * from p (just after `xml`). A version other than 1.0 switches to XML 1.1 rules from there on, as
 * saxes does.
 */
function scanXmlDeclaration(c: Cursor, p: number, decl: Declaration): number {
  c.xml11 = false;
  decl.encoding = null;
  const expected = ['version', 'encoding', 'standalone'];
  let next = 0;
  for (;;) {
    // Here: right after `xml` or after a value; white space, then a name or `?>`.
    const space = spaceLength(c, p);
    if (space === NEED_MORE) return NEED_MORE;
    p = skipSpaces(c, p + space);
    if (p === NEED_MORE) return NEED_MORE;
    if (c.buf[p] === QUESTION) {
      if (next === 0) c.fail(p, 'XML declaration must contain a version.');
      if (p + 1 >= c.end) return c.more(p + 1);
      if (c.buf[p + 1] !== GT) c.fail(p + 1, 'the character ? is disallowed anywhere in XML declarations.');
      return p + 2;
    }
    if (space === 0) c.fail(p, 'whitespace required.');
    let found = -1;
    let longest = 0;
    for (let k = next; k < expected.length && found < 0; k++) {
      const name = expected[k]!;
      if (matchesAscii(c.buf, p, name)) found = k;
      else longest = Math.max(longest, commonPrefix(c.buf, p, name, Math.min(name.length, c.end - p)));
    }
    if (found < 0 || (next === 0 && found !== 0)) {
      if (p + 10 > c.end && !c.final) return NEED_MORE;
      c.fail(p + longest, `expected ${expected.slice(next).join(' or ')} in the XML declaration.`);
    }
    p += expected[found]!.length;
    p = skipSpaces(c, p);
    if (p === NEED_MORE) return NEED_MORE;
    if (c.buf[p] !== EQUALS) c.fail(p, 'value required.');
    p = skipSpaces(c, p + 1);
    if (p === NEED_MORE) return NEED_MORE;
    const valueEnd = scanDeclarationValue(c, p);
    if (valueEnd === NEED_MORE) return NEED_MORE;
    const value = c.utf8(p + 1, valueEnd);
    if (found === 0) {
      // '1.0' and 'utf-8' (nearly every request) match their RegExp: not run for them.
      if (value !== '1.0' && !VERSION_RE.test(value)) c.fail(valueEnd, 'version number must match /^1\\.[0-9]+$/.');
      c.xml11 = value !== '1.0';
    } else if (found === 1) {
      if (value !== 'utf-8' && value !== 'UTF-8' && !ENCODING_RE.test(value)) c.fail(valueEnd, 'encoding value must match /^[A-Za-z][A-Za-z0-9._-]*$/.');
      decl.encoding = value;
    } else if (value !== 'yes' && value !== 'no') {
      c.fail(valueEnd, 'standalone value must match "yes" or "no".');
    }
    next = found + 1;
    p = valueEnd + 1;
  }
}

/** A quoted pseudo-attribute value at p: the offset of its closing quote. */
function scanDeclarationValue(c: Cursor, p: number): number {
  if (p >= c.end) return c.more(p);
  const quote = c.buf[p]!;
  if (quote !== DQUOTE && quote !== SQUOTE) c.fail(p, 'value must be quoted.');
  for (let i = p + 1; ; i++) {
    if (i >= c.end) return c.more(i);
    const b = c.buf[i]!;
    if (b === quote) return i;
    // Versions, encoding names and yes/no are printable ASCII; `?` would end the declaration.
    if (b < 0x21 || b > 0x7e || b === QUESTION) c.fail(i, 'disallowed character in the XML declaration.');
  }
}
