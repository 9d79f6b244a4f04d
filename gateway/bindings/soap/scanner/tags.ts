import { scanAttributeValue } from './char-data.js';
import { NEED_MORE, type Cursor } from './cursor.js';
import type { ElementStack } from './element-stack.js';
import { matchesAscii, scanName, scanNameChars, scanReference, skipSpaces, spaceLength } from './lexical.js';

// Byte values are module-local: V8 reads an imported binding through its module cell, with a
// hole check, on every use, which measurably slowed the scanning loops (bench/parse.ts).
const AMP = 0x26;
const COLON = 0x3a;
const CR = 0x0d;
const DQUOTE = 0x22;
const EQUALS = 0x3d;
const GT = 0x3e;
const LF = 0x0a;
const NEL = 0x85;
const SLASH = 0x2f;
const SQUOTE = 0x27;
const TAB = 0x09;

/** Offsets of one attribute in StartTag.fields: name start/end, value start/end (inside the quotes). */
const FIELDS = 4;

/**
 * The start tag just read: offsets into the cursor's buffer, turned into strings only on request
 * (the envelope builder asks for the few names and values it keeps). Valid until the next token.
 */
export class StartTag {
  nameStart = 0;
  nameEnd = 0;
  /** Offset of the first colon in the name, or -1. */
  colon = -1;
  selfClosing = false;
  count = 0;
  private fields = new Int32Array(FIELDS * 8);
  /** Per attribute: 1 when the raw value is its value (no reference, no white space to normalize). */
  private plain = new Uint8Array(8);

  constructor(private readonly c: Cursor) {}

  add(nameStart: number, nameEnd: number, valueStart: number, valueEnd: number, plain: boolean): void {
    const k = this.count++;
    if (k * FIELDS === this.fields.length) {
      const fields = new Int32Array(this.fields.length * 2);
      fields.set(this.fields);
      this.fields = fields;
      const flags = new Uint8Array(this.plain.length * 2);
      flags.set(this.plain);
      this.plain = flags;
    }
    const f = this.fields;
    f[k * FIELDS] = nameStart;
    f[k * FIELDS + 1] = nameEnd;
    f[k * FIELDS + 2] = valueStart;
    f[k * FIELDS + 3] = valueEnd;
    this.plain[k] = plain ? 1 : 0;
  }

  name(): string {
    return this.c.utf8(this.nameStart, this.nameEnd);
  }

  /** The name after its first colon (the whole name without one). */
  localName(): string {
    return this.c.utf8(this.localStart(), this.nameEnd);
  }

  /** Where the local name starts in the cursor's buffer (it ends at nameEnd). */
  localStart(): number {
    return this.colon < 0 ? this.nameStart : this.colon + 1;
  }

  prefix(): string {
    return this.colon < 0 ? '' : this.c.utf8(this.nameStart, this.colon);
  }

  localIs(text: string): boolean {
    const start = this.localStart();
    return this.nameEnd - start === text.length && matchesAscii(this.c.buf, start, text);
  }

  attrName(k: number): string {
    return this.c.utf8(this.fields[k * FIELDS]!, this.fields[k * FIELDS + 1]!);
  }

  attrNameIs(k: number, text: string): boolean {
    if (!isAscii(text)) return this.attrName(k) === text;
    const start = this.fields[k * FIELDS]!;
    return this.fields[k * FIELDS + 1]! - start === text.length && matchesAscii(this.c.buf, start, text);
  }

  /** Whether attribute k's name starts with `text`. */
  attrNameStarts(k: number, text: string): boolean {
    const start = this.fields[k * FIELDS]!;
    return this.fields[k * FIELDS + 1]! - start >= text.length && matchesAscii(this.c.buf, start, text);
  }

  /**
   * Whether attribute k declares this tag's own prefix, by its name as written: `xmlns:<prefix>`,
   * or `xmlns` or `xmlns:` for a name without one (what a prefix → URI map of the tag's
   * declarations would look the prefix up under), compared as bytes.
   */
  declaresOwnPrefix(k: number): boolean {
    const buf = this.c.buf;
    const start = this.fields[k * FIELDS]!;
    const end = this.fields[k * FIELDS + 1]!;
    if (this.colon < 0) return (end - start === 5 && matchesAscii(buf, start, 'xmlns')) || (end - start === 6 && matchesAscii(buf, start, 'xmlns:'));
    return end - start > 6 && matchesAscii(buf, start, 'xmlns:') && sameBytes(buf, start + 6, end, this.nameStart, this.colon);
  }

  /** `nil` or `anything:nil`: an xsi:nil under any prefix. */
  attrIsNil(k: number): boolean {
    const start = this.fields[k * FIELDS]!;
    const end = this.fields[k * FIELDS + 1]!;
    if (end - start < 3 || !matchesAscii(this.c.buf, end - 3, 'nil')) return false;
    return end - start === 3 || this.c.buf[end - 4] === COLON;
  }

  /** Attribute k's value: references resolved, TAB/LF/CR (and CR LF) normalized to a space. */
  attrValue(k: number): string {
    const c = this.c;
    const start = this.fields[k * FIELDS + 2]!;
    const end = this.fields[k * FIELDS + 3]!;
    if (this.plain[k] === 1) return c.utf8(start, end);
    const buf = c.buf;
    let out = '';
    let from = start;
    let i = start;
    while (i < end) {
      const b = buf[i]!;
      if (b === AMP) {
        const next = scanReference(c, i);
        out += c.utf8(from, i) + String.fromCodePoint(c.refCode);
        i = from = next;
      } else if (b === TAB || b === LF || b === CR) {
        out += `${c.utf8(from, i)} `;
        i += b === CR && buf[i + 1] === LF ? 2 : b === CR && c.xml11 && buf[i + 1] === 0xc2 && buf[i + 2] === NEL ? 3 : 1;
        from = i;
      } else if (c.xml11 && ((b === 0xc2 && buf[i + 1] === NEL) || (b === 0xe2 && buf[i + 1] === 0x80 && buf[i + 2] === 0xa8))) {
        out += `${c.utf8(from, i)} `;
        i += b === 0xc2 ? 2 : 3;
        from = i;
      } else i++;
    }
    return out + c.utf8(from, end);
  }

  /** Duplicate attribute names (compared as written, as saxes does without namespaces) are an error. */
  checkUnique(at: number): void {
    const n = this.count;
    if (n < 2) return;
    const f = this.fields;
    const buf = this.c.buf;
    if (n <= 8) {
      for (let k = 1; k < n; k++) {
        for (let j = 0; j < k; j++) {
          if (sameBytes(buf, f[k * FIELDS]!, f[k * FIELDS + 1]!, f[j * FIELDS]!, f[j * FIELDS + 1]!)) this.duplicate(at, k);
        }
      }
      return;
    }
    // Many attributes: a set, so a hostile tag cannot make this quadratic.
    const seen = new Set<string>();
    for (let k = 0; k < n; k++) {
      const name = this.attrName(k);
      if (seen.has(name)) this.duplicate(at, k);
      seen.add(name);
    }
  }

  private duplicate(at: number, k: number): never {
    return this.c.fail(at, `duplicate attribute: ${this.attrName(k)}.`);
  }
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

function sameBytes(buf: Uint8Array, a: number, aEnd: number, b: number, bEnd: number): boolean {
  if (aEnd - a !== bEnd - b) return false;
  for (; a < aEnd; a++, b++) if (buf[a] !== buf[b]) return false;
  return true;
}

/**
 * The start tag whose '<' is at i, into `tag`: `<` Name (S Attribute)* S? (`>` | `/>`), with
 * Attribute = Name S? `=` S? quoted value. Returns the offset after the tag.
 */
export function scanStartTag(c: Cursor, i: number, tag: StartTag): number {
  const nameEnd = scanName(c, i + 1, 'disallowed character in tag name.');
  if (nameEnd === NEED_MORE) return NEED_MORE;
  tag.nameStart = i + 1;
  tag.nameEnd = nameEnd;
  tag.colon = c.nameColon;
  tag.count = 0;
  const { buf, end } = c;
  let p = nameEnd;
  for (;;) {
    if (p >= end) return c.more(p);
    const b = buf[p]!;
    if (b === GT) {
      tag.selfClosing = false;
      tag.checkUnique(p);
      return p + 1;
    }
    if (b === SLASH) {
      if (p + 1 >= end) return c.more(p + 1);
      if (buf[p + 1] !== GT) c.fail(p + 1, 'forward-slash in opening tag not followed by >.');
      tag.selfClosing = true;
      tag.checkUnique(p + 1);
      return p + 2;
    }
    const space = spaceLength(c, p);
    if (space === NEED_MORE) return NEED_MORE;
    if (space === 0) c.fail(p, tag.count === 0 ? 'disallowed character in tag name.' : 'no whitespace between attributes.');
    p = skipSpaces(c, p + space);
    if (p === NEED_MORE) return NEED_MORE;
    const next = buf[p]!;
    if (next === GT || next === SLASH) continue;
    p = scanAttribute(c, p, tag);
    if (p === NEED_MORE) return NEED_MORE;
  }
}

function scanAttribute(c: Cursor, i: number, tag: StartTag): number {
  const nameEnd = scanName(c, i, 'disallowed character in attribute name.');
  if (nameEnd === NEED_MORE) return NEED_MORE;
  let p = skipSpaces(c, nameEnd);
  if (p === NEED_MORE) return NEED_MORE;
  if (c.buf[p] !== EQUALS) c.fail(p, 'attribute without value.');
  p = skipSpaces(c, p + 1);
  if (p === NEED_MORE) return NEED_MORE;
  const quote = c.buf[p]!;
  if (quote !== DQUOTE && quote !== SQUOTE) c.fail(p, 'unquoted attribute value.');
  const close = scanAttributeValue(c, p + 1, quote);
  if (close === NEED_MORE) return NEED_MORE;
  tag.add(i, nameEnd, p + 1, close, c.plain);
  return close + 1;
}

/** The end tag whose `</` is at i: it must close the innermost open element. */
export function scanEndTag(c: Cursor, i: number, stack: ElementStack): number {
  const start = i + 2;
  if (stack.depth > 0) {
    const after = stack.closesTop(c.buf, c.base, start, c.end);
    if (after >= 0) {
      stack.pop();
      return after;
    }
  }
  const nameEnd = scanNameChars(c, start, -1);
  if (nameEnd === NEED_MORE) return NEED_MORE;
  const p = skipSpaces(c, nameEnd);
  if (p === NEED_MORE) return NEED_MORE;
  if (c.buf[p] !== GT) c.fail(p, 'disallowed character in closing tag.');
  if (nameEnd === start) c.fail(p, 'weird empty close tag.');
  if (stack.depth === 0) c.fail(p, `unmatched closing tag: ${c.utf8(start, nameEnd)}.`);
  if (!stack.matchesTop(c.buf, c.base, start, nameEnd)) c.fail(p, 'unexpected close tag.');
  stack.pop();
  return p + 1;
}
