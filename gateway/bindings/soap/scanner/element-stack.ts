import { Buffer } from 'node:buffer';

/**
 * Names of the open elements, so an end tag can be matched. A name is compared where its start
 * tag lies in the buffer being scanned; only when that buffer is about to go (`detach`) are the
 * names still open copied into one growing byte array. A body that arrives in one chunk copies
 * nothing; there is no object per element either way.
 */
export class ElementStack {
  depth = 0;
  /** Per open element: where its name starts (a document offset, or an offset in `saved`) and its length. */
  private starts = new Float64Array(64);
  private lengths = new Int32Array(64);
  /** How many of the innermost elements' names are in `saved` rather than the live buffer. */
  private savedDepth = 0;
  private saved = new Uint8Array(256);
  private savedUsed = 0;

  reset(): void {
    this.depth = 0;
    this.savedDepth = 0;
    this.savedUsed = 0;
  }

  /** An element whose name is at document offset `at`, `length` bytes, opens. */
  push(at: number, length: number): void {
    if (this.depth === this.starts.length) {
      const starts = new Float64Array(this.starts.length * 2);
      starts.set(this.starts);
      this.starts = starts;
      const lengths = new Int32Array(this.lengths.length * 2);
      lengths.set(this.lengths);
      this.lengths = lengths;
    }
    this.starts[this.depth] = at;
    this.lengths[this.depth++] = length;
  }

  /** Whether buf[start, end) is the name of the innermost open element; `base` is buf[0]'s document offset. */
  matchesTop(buf: Uint8Array, base: number, start: number, end: number): boolean {
    const top = this.depth - 1;
    const length = this.lengths[top]!;
    if (length !== end - start) return false;
    const from = this.starts[top]!;
    const source = top < this.savedDepth ? this.saved : buf;
    const offset = top < this.savedDepth ? from : from - base;
    for (let i = start, j = offset; i < end; i++, j++) if (source[j] !== buf[i]) return false;
    return true;
  }

  /**
   * The common case of an end tag, in one pass: when buf[start, limit) begins with the innermost
   * open element's name and `>`, the offset after the `>`; else -1 (the caller reads it fully).
   */
  closesTop(buf: Uint8Array, base: number, start: number, limit: number): number {
    const top = this.depth - 1;
    const length = this.lengths[top]!;
    const close = start + length;
    if (close >= limit || buf[close] !== 0x3e) return -1;
    const saved = top < this.savedDepth;
    const source = saved ? this.saved : buf;
    let j = saved ? this.starts[top]! : this.starts[top]! - base;
    for (let i = start; i < close; i++, j++) if (source[j] !== buf[i]) return -1;
    return close + 1;
  }

  pop(): void {
    const top = --this.depth;
    if (top < this.savedDepth) {
      this.savedDepth = top;
      this.savedUsed = this.starts[top]!;
    }
  }

  /** The buffer starting at document offset `base` goes away: copy the open names that lie in it. */
  detach(buf: Uint8Array, base: number): void {
    for (let k = this.savedDepth; k < this.depth; k++) {
      const length = this.lengths[k]!;
      if (this.savedUsed + length > this.saved.length) this.saved = grow(this.saved, this.savedUsed + length);
      const from = this.starts[k]! - base;
      this.saved.set(buf.subarray(from, from + length), this.savedUsed);
      this.starts[k] = this.savedUsed;
      this.savedUsed += length;
    }
    this.savedDepth = this.depth;
  }

  /** The innermost open element's name (for an error message); `buf` starts at document offset `base`. */
  topName(buf: Uint8Array, base: number): string {
    const top = this.depth - 1;
    const source = top < this.savedDepth ? this.saved : buf;
    const from = top < this.savedDepth ? this.starts[top]! : this.starts[top]! - base;
    return Buffer.from(source.buffer, source.byteOffset + from, this.lengths[top]).toString('utf8');
  }
}

function grow(bytes: Uint8Array, needed: number): Uint8Array<ArrayBuffer> {
  let size = bytes.length * 2;
  while (size < needed) size *= 2;
  const next = new Uint8Array(size);
  next.set(bytes);
  return next;
}
