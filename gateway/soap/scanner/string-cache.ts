import type { Buffer } from 'node:buffer';

/** Runs longer than this are decoded every time. */
const WIDTH = 32;
const SLOTS = 2048;

/**
 * Strings for short UTF-8 runs seen before: element names, indentation and repeated values
 * recur in every request, and comparing a few bytes in JS costs less than a native decode plus a
 * new string. Direct-mapped: a slot holds the last run that hashed to it, checked byte by byte.
 */
export class StringCache {
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
    const text = buf.toString('utf8', start, end);
    for (let i = start, j = at; i < end; i++, j++) keys[j] = buf[i]!;
    this.lengths[slot] = length;
    this.strings[slot] = text;
    return text;
  }
}

/** One cache for all scanners: they run on one thread, and the same names recur across them. */
export const SHARED_STRINGS = new StringCache();
