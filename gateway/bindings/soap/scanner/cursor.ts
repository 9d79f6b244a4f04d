import { Buffer } from 'node:buffer';
import { InvalidEncodingError } from '../../../transport/body-decoder.js';
import { decodeUtf8, INVALID, TRUNCATED } from './chars.js';
import { XmlSyntaxError } from '../envelope.js';
import { SHARED_STRINGS } from './string-cache.js';

// Byte values are module-local: V8 reads an imported binding through its module cell, with a
// hole check, on every use, which measurably slowed the scanning loops (bench/parse.ts).
const LF = 0x0a;

/** A token function's answer when the buffer ends before the token does (more input may complete it). */
export const NEED_MORE = -1;

/**
 * Thrown by `fail` when the offending byte starts a UTF-8 sequence the buffer cuts: whether it is
 * a syntax or an encoding error is known only with the next chunk. The scanner treats it as NEED_MORE.
 */
export const WAIT_FOR_MORE = new Error('the token continues in the next chunk');

const EMPTY = Buffer.alloc(0);

/**
 * The bytes being scanned and where the scan is in the document: shared by the token functions.
 * Offsets given to its methods are indexes into `buf`; `base` is the document offset of buf[0].
 * Lines are counted as tokens are read, so an error can say line:column without keeping the
 * bytes of earlier chunks.
 */
export class Cursor {
  buf: Buffer = EMPTY;
  end = 0;
  /** No input follows `buf`: a token cut by its end is an error, not a wait. */
  final = false;
  /** XML 1.1 rules (any declared version but 1.0, as saxes): NEL and LS end lines, C1 controls are refused. */
  xml11 = false;
  base = 0;
  line = 1;
  /** Document offset where the current line starts. */
  lineStart = 0;
  /** Characters of the current line that lie before `base` (it started in an earlier buffer). */
  columnCarry = 0;
  /** Code point of the last reference read by scanReference. */
  refCode = 0;
  /** Offset of the first colon of the last name read by scanName, or -1. */
  nameColon = -1;
  /** Whether the last attribute value read is its own value (no reference or white space to normalize). */
  plain = true;
  /** Text the last character-data token produced (when asked to keep it). */
  textOut = '';

  reset(): void {
    this.buf = EMPTY;
    this.end = 0;
    this.final = false;
    this.xml11 = false;
    this.base = 0;
    this.line = 1;
    this.lineStart = 0;
    this.columnCarry = 0;
    this.refCode = 0;
    this.nameColon = -1;
    this.textOut = '';
  }

  /** Scans next[0, end) from now on; its first byte is at document offset `base`. */
  replace(next: Uint8Array, end: number): void {
    this.buf = this.wrap(next);
    this.end = end;
  }

  /** A Buffer over the same memory (for its native string decoding), without copying. */
  wrap(bytes: Uint8Array): Buffer {
    return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /**
   * The first `read` bytes of the buffer are done with; the next buffer starts after them. Columns
   * of the current line are carried over, since the bytes they were counted from go away.
   */
  advance(read: number): void {
    if (this.lineStart < this.base + read) {
      const from = this.lineStart >= this.base ? this.lineStart - this.base : 0;
      this.columnCarry = (this.lineStart >= this.base ? 0 : this.columnCarry) + countChars(this.buf, from, read);
    }
    this.base += read;
    this.buf = EMPTY;
    this.end = 0;
  }

  /** A line ends with the byte at i (LF, or CR not followed by LF, or NEL/LS in XML 1.1). */
  newline(i: number): void {
    this.line++;
    this.lineStart = this.base + i + 1;
  }

  /** Counts the line end if the CR at i is not the first half of CR LF. */
  carriageReturn(i: number): void {
    if (i + 1 >= this.end || this.buf[i + 1] !== LF) this.newline(i);
  }

  /** The token continues past the buffer: wait for more input, or fail when there is none. */
  more(i: number): number {
    if (this.final) this.fail(i, 'unexpected end.');
    return NEED_MORE;
  }

  /** A UTF-8 sequence is cut by the buffer end. */
  truncated(i: number): number {
    if (this.final) this.invalidUtf8(i);
    return NEED_MORE;
  }

  /** Bytes at i that are not UTF-8: refused as the body decoder refuses them (docs/protocol.md §Encodings). */
  invalidUtf8(i: number): never {
    throw new InvalidEncodingError(
      `Invalid character in the given encoding (utf-8), line ${this.line}, column ${this.column(i)} (byte ${this.base + i + 1} of the body).`,
    );
  }

  /**
   * A syntax error at the byte at i; but bytes that are not UTF-8 are an encoding error first,
   * wherever they are (a decoding reader never gets to parse them).
   */
  fail(i: number, message: string): never {
    if (i < this.end && this.buf[i]! >= 0x80) {
      const cp = decodeUtf8(this.buf, i, this.end);
      if (cp === INVALID || (cp === TRUNCATED && this.final)) this.invalidUtf8(i);
      if (cp === TRUNCATED) throw WAIT_FOR_MORE;
    }
    throw new XmlSyntaxError(`${this.line}:${this.column(i)}: ${message}`, this.base + i);
  }

  /** 1-based column of the character starting at byte i, counted in code points as saxes does. */
  column(i: number): number {
    const upTo = Math.min(i, this.end);
    if (this.lineStart >= this.base) return countChars(this.buf, this.lineStart - this.base, upTo) + 1;
    return this.columnCarry + countChars(this.buf, 0, upTo) + 1;
  }

  /** The text of buf[start, end) (valid UTF-8: the scanner checked it). */
  utf8(start: number, end: number): string {
    return start === end ? '' : SHARED_STRINGS.get(this.buf, start, end);
  }
}

/** Code points in buf[from, to): every byte that is not a UTF-8 continuation byte. */
function countChars(buf: Uint8Array, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if ((buf[i]! & 0xc0) !== 0x80) n++;
  return n;
}

