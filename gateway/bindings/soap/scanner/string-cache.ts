import type { Buffer } from 'node:buffer';

/** Runs longer than this are decoded every time. */
const WIDTH = 32;
const SLOTS = 2048;

/**
 * Strings for short UTF-8 runs seen before: element names, indentation and repeated values
 * recur in every request, and comparing a few bytes in JS costs less than a native decode plus a
 * new string. Direct-mapped: a slot holds the last run that hashed to it, checked byte by byte.
 */
class StringCache {
  private readonly strings: (string | undefined)[] = new Array<string | undefined>(SLOTS);
  private readonly lengths = new Uint8Array(SLOTS);
  private readonly keys = new Uint8Array(SLOTS * WIDTH);

  get(buf: Buffer, start: number, end: number): string {
    const length = end - start;
    if (length > WIDTH) return buf.toString('utf8', start, end);
    // The length and the bytes at both ends tell runs apart well enough; equality is checked below.
    const head = buf[start]! | (buf[start + (length >> 1)]! << 8);
    const tail = buf[end - 1]! | (buf[end - 2 >= start ? end - 2 : start]! << 8);
    const h = Math.imul(Math.imul(length ^ head, 0x9e3779b1) ^ tail, 0x85ebca6b);
    const slot = (h >>> 21) & (SLOTS - 1);
    const keys = this.keys;
    const at = slot * WIDTH;
    const cached = this.strings[slot];
    if (cached !== undefined && this.lengths[slot] === length) {
      let same = true;
      for (let i = start, j = at; i < end; i++, j++) {
        if (keys[j] !== buf[i]) {
          same = false;
          break;
        }
      }
      if (same) return cached;
    }
    let high = 0;
    for (let i = start, j = at; i < end; i++, j++) high |= keys[j] = buf[i]!;
    const text = high < 0x80 && length <= 16 ? shortAscii(buf, start, length) : buf.toString('utf8', start, end);
    this.lengths[slot] = length;
    this.strings[slot] = text;
    return text;
  }
}

/** One cache for all scanners: they run on one thread, and the same names recur across them. */
export const SHARED_STRINGS = new StringCache();

/**
 * An ASCII run of 1 to 16 bytes as a string: String.fromCharCode with the bytes as arguments costs
 * less than a native decode at these lengths (bench/parse.ts readers suite).
 */
function shortAscii(b: Buffer, s: number, length: number): string {
  switch (length) {
    case 1:
      return String.fromCharCode(b[s]!);
    case 2:
      return String.fromCharCode(b[s]!, b[s + 1]!);
    case 3:
      return String.fromCharCode(b[s]!, b[s + 1]!, b[s + 2]!);
    case 4:
      return String.fromCharCode(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!);
    case 5:
      return String.fromCharCode(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!);
    case 6:
      return String.fromCharCode(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!);
    case 7:
      return String.fromCharCode(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!);
    case 8:
      return String.fromCharCode(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!, b[s + 7]!);
    case 9:
      return String.fromCharCode(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!, b[s + 7]!, b[s + 8]!);
    case 10:
      return String.fromCharCode(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!, b[s + 7]!, b[s + 8]!, b[s + 9]!);
    case 11:
      return String.fromCharCode(
        b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!, b[s + 7]!,
        b[s + 8]!, b[s + 9]!, b[s + 10]!,
      );
    case 12:
      return String.fromCharCode(
        b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!, b[s + 7]!,
        b[s + 8]!, b[s + 9]!, b[s + 10]!, b[s + 11]!,
      );
    case 13:
      return String.fromCharCode(
        b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!, b[s + 7]!,
        b[s + 8]!, b[s + 9]!, b[s + 10]!, b[s + 11]!, b[s + 12]!,
      );
    case 14:
      return String.fromCharCode(
        b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!, b[s + 7]!,
        b[s + 8]!, b[s + 9]!, b[s + 10]!, b[s + 11]!, b[s + 12]!, b[s + 13]!,
      );
    case 15:
      return String.fromCharCode(
        b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!, b[s + 7]!,
        b[s + 8]!, b[s + 9]!, b[s + 10]!, b[s + 11]!, b[s + 12]!, b[s + 13]!, b[s + 14]!,
      );
    case 16:
      return String.fromCharCode(
        b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!, b[s + 7]!,
        b[s + 8]!, b[s + 9]!, b[s + 10]!, b[s + 11]!, b[s + 12]!, b[s + 13]!, b[s + 14]!, b[s + 15]!,
      );
    default:
      return b.toString('latin1', s, s + length);
  }
}
