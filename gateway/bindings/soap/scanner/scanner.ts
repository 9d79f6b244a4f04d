import { scanCData, scanOutsideText, scanText } from './char-data.js';
import { Cursor, NEED_MORE, WAIT_FOR_MORE } from './cursor.js';
import { ElementStack } from './element-stack.js';
import type { EnvelopeSink } from './envelope-levels.js';
import { HeldBytes } from './held-bytes.js';
import { BANG_CDATA, BANG_COMMENT, bangForm, scanComment, scanProcessingInstruction, type Declaration } from './markup.js';
import { scanName } from './lexical.js';
import { DTD_PROHIBITED } from '../envelope.js';
import { scanEndTag, scanStartTag, StartTag } from './tags.js';

// Byte values are module-local: V8 reads an imported binding through its module cell, with a
// hole check, on every use, which measurably slowed the scanning loops (bench/parse.ts).
const BANG = 0x21;
const LT = 0x3c;
const QUESTION = 0x3f;
const SLASH = 0x2f;

interface ScannerOptions {
  /** A leading EF BB BF is the encoding signature (raw UTF-8 input), not a character. */
  readonly bom: boolean;
  /**
   * Stop at an XML declaration that names an encoding other than UTF-8 (the body was sent without
   * a charset and must be decoded as the declaration says): `foreignEncoding` tells which.
   */
  readonly stopOnForeignEncoding: boolean;
}

/** TextDecoder's labels of UTF-8 (https://encoding.spec.whatwg.org/#names-and-labels). */
const UTF8_LABELS = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'x-unicode20utf8']);

export function isUtf8Label(label: string): boolean {
  // What nearly every request sends, answered without trimming, lowering and a RegExp per request.
  if (label === 'utf-8' || label === 'UTF-8') return true;
  return UTF8_LABELS.has(label.trim().toLowerCase().replace(/^"|"$/g, ''));
}

/**
 * A streaming, strict XML reader of one SOAP envelope over UTF-8 bytes: `write` chunks as they
 * arrive (split anywhere), then `end`. It checks well-formedness as saxes does (XML 1.0 fifth
 * edition; 1.1 rules when declared), refuses any DOCTYPE, and builds the same SoapEnvelope as the
 * saxes-based EnvelopeReader without decoding the body into one string or making an object per
 * element: only the operation's subtree becomes strings.
 *
 * Tokens (a tag, a text run, a comment...) are read whole from one contiguous buffer. A token cut
 * by the end of a chunk is kept and read again once the bytes buffered since have doubled, so a
 * body trickling in byte by byte costs linear time, not quadratic. Reusable after `reset`.
 */
export class XmlEnvelopeScanner<E> {
  /** Set (and the scan stopped) when stopOnForeignEncoding found a non-UTF-8 declaration. */
  foreignEncoding: string | null = null;
  private readonly c = new Cursor();
  private readonly tag = new StartTag(this.c);
  private readonly stack = new ElementStack();
  private readonly decl: Declaration = { encoding: null };
  private options: ScannerOptions = { bom: true, stopOnForeignEncoding: false };
  private readonly held = new HeldBytes();
  private started = false;
  private docStart = 0;
  private sawRoot = false;
  private rootClosed = false;
  private firstToken = true;
  private error: Error | null = null;

  constructor(private readonly builder: EnvelopeSink<E>) {}

  reset(options: ScannerOptions): void {
    this.options = options;
    this.foreignEncoding = null;
    this.c.reset();
    this.stack.reset();
    this.builder.reset();
    this.decl.encoding = null;
    this.held.clear();
    this.started = false;
    this.docStart = 0;
    this.sawRoot = false;
    this.rootClosed = false;
    this.firstToken = true;
    this.error = null;
  }

  /** Whether the encoding question is closed: the first token is read (or a BOM fixed it as UTF-8). */
  get encodingSettled(): boolean {
    return !this.firstToken || this.docStart > 0;
  }

  /** Reads `chunk`; the caller may reuse its memory afterwards. Throws the first error found. */
  write(chunk: Uint8Array): void {
    if (this.error !== null) throw this.error;
    if (this.foreignEncoding !== null || chunk.length === 0) return;
    const held = this.held;
    if (held.length === 0) {
      this.run(chunk, chunk.length, false, true);
      return;
    }
    held.append(this.c.wrap(chunk), 0, chunk.length);
    if (held.due) this.run(held.store, held.length, false, false);
  }

  end(): E {
    if (this.error !== null) throw this.error;
    try {
      this.run(this.held.store, this.held.length, true, false);
      const c = this.c;
      if (!this.sawRoot) c.fail(c.end, 'document must contain a root element.');
      if (this.stack.depth > 0) c.fail(c.end, `unclosed tag: ${this.stack.topName(c.buf, c.base)}`);
      return this.builder.finish();
    } catch (err) {
      this.error = asError(err);
      throw err;
    }
  }

  /** Scans buf[0, end): the caller's chunk, or the held bytes. Holds what a cut token left unread. */
  private run(buf: Uint8Array, end: number, final: boolean, borrowed: boolean): void {
    const c = this.c;
    c.replace(buf, end);
    c.final = final;
    let read: number;
    try {
      read = this.scan();
    } catch (err) {
      this.error = asError(err);
      throw err;
    }
    if (this.foreignEncoding !== null) read = end;
    const scanned = c.buf;
    // Open elements whose names lie in this buffer must not point into it once it is gone.
    this.stack.detach(scanned, c.base);
    c.advance(read);
    if (!borrowed) this.held.keepFrom(read);
    else if (read < end) {
      this.held.append(scanned, read, end);
      this.held.keepFrom(0);
    }
  }

  private scan(): number {
    const c = this.c;
    let i = 0;
    if (!this.started) {
      i = this.signature();
      if (i === NEED_MORE) return 0;
    }
    while (i < c.end) {
      const line = c.line;
      const lineStart = c.lineStart;
      let next: number;
      try {
        next = this.token(i);
      } catch (err) {
        if (err !== WAIT_FOR_MORE) throw err;
        next = NEED_MORE;
      }
      if (next === NEED_MORE) {
        c.line = line;
        c.lineStart = lineStart;
        return i;
      }
      i = next;
      this.firstToken = false;
      if (this.foreignEncoding !== null) return i;
    }
    return i;
  }

  /** Skips the UTF-8 byte order mark at the start of the input. */
  private signature(): number {
    const c = this.c;
    const bom = [0xef, 0xbb, 0xbf];
    let n = 0;
    if (this.options.bom) while (n < 3 && n < c.end && c.buf[n] === bom[n]) n++;
    if (n > 0 && n < 3 && n === c.end && !c.final) return NEED_MORE;
    this.started = true;
    this.docStart = n === 3 ? 3 : 0;
    return this.docStart;
  }

  private token(i: number): number {
    const c = this.c;
    const buf = c.buf;
    if (buf[i] !== LT) {
      if (this.stack.depth === 0) return scanOutsideText(c, i);
      const keep = this.builder.keepsText;
      const next = scanText(c, i, keep);
      if (keep && next !== NEED_MORE) this.builder.text(c.textOut);
      return next;
    }
    if (i + 1 >= c.end) return c.more(i + 1);
    switch (buf[i + 1]) {
      case SLASH: {
        const next = scanEndTag(c, i, this.stack);
        if (next === NEED_MORE) return NEED_MORE;
        this.builder.close();
        if (this.stack.depth === 0) this.rootClosed = true;
        return next;
      }
      case BANG:
        return this.bang(i);
      case QUESTION:
        return this.processingInstruction(i);
      default:
        return this.startTag(i);
    }
  }

  private startTag(i: number): number {
    const c = this.c;
    if (this.rootClosed) {
      // As saxes: refused once the name is read, before its attributes.
      const nameEnd = scanName(c, i + 1, 'disallowed character in tag name.');
      if (nameEnd === NEED_MORE) return NEED_MORE;
      c.fail(nameEnd, 'documents may contain only one root.');
    }
    const tag = this.tag;
    const next = scanStartTag(c, i, tag);
    if (next === NEED_MORE) return NEED_MORE;
    this.sawRoot = true;
    this.builder.open(tag, c);
    if (tag.selfClosing) {
      this.builder.close();
      if (this.stack.depth === 0) this.rootClosed = true;
    } else this.stack.push(c.base + tag.nameStart, tag.nameEnd - tag.nameStart);
    return next;
  }

  private bang(i: number): number {
    const c = this.c;
    const form = bangForm(c, i);
    if (form === NEED_MORE) return NEED_MORE;
    if (form === BANG_COMMENT) return scanComment(c, i);
    if (form !== BANG_CDATA) return c.fail(i + 8, DTD_PROHIBITED);
    if (this.stack.depth === 0) c.fail(i + 8, 'text data outside of root node.');
    const keep = this.builder.keepsText;
    const next = scanCData(c, i + 9, keep);
    if (keep && next !== NEED_MORE) this.builder.text(c.textOut);
    return next;
  }

  private processingInstruction(i: number): number {
    const c = this.c;
    const next = scanProcessingInstruction(c, i, c.base + i === this.docStart, this.decl);
    if (next === NEED_MORE) return NEED_MORE;
    const encoding = this.decl.encoding;
    if (this.firstToken && encoding !== null && this.options.stopOnForeignEncoding && this.docStart === 0 && !isUtf8Label(encoding)) {
      this.foreignEncoding = encoding;
    }
    return next;
  }
}

/** What the scanner keeps to throw again: its own errors are Errors; anything else is wrapped. */
function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
