/**
 * Names of the open elements, as bytes, so an end tag can be matched after the chunk that held
 * its start tag is gone. One growing byte array; no object per element.
 */
export class ElementStack {
  depth = 0;
  private bytes = new Uint8Array(512);
  private used = 0;
  private starts = new Int32Array(64);

  reset(): void {
    this.depth = 0;
    this.used = 0;
  }

  push(buf: Uint8Array, start: number, end: number): void {
    const length = end - start;
    if (this.used + length > this.bytes.length) this.bytes = grow(this.bytes, this.used + length);
    if (this.depth === this.starts.length) {
      const starts = new Int32Array(this.starts.length * 2);
      starts.set(this.starts);
      this.starts = starts;
    }
    const bytes = this.bytes;
    let at = this.used;
    for (let i = start; i < end; i++) bytes[at++] = buf[i]!;
    this.starts[this.depth++] = this.used;
    this.used = at;
  }

  /** Whether buf[start, end) is the name of the innermost open element. */
  matchesTop(buf: Uint8Array, start: number, end: number): boolean {
    const from = this.starts[this.depth - 1]!;
    if (this.used - from !== end - start) return false;
    const bytes = this.bytes;
    for (let i = start, j = from; i < end; i++, j++) if (bytes[j] !== buf[i]) return false;
    return true;
  }

  pop(): void {
    this.used = this.starts[--this.depth]!;
  }

  topName(): string {
    return Buffer.from(this.bytes.buffer, this.starts[this.depth - 1]!, this.used - this.starts[this.depth - 1]!).toString('utf8');
  }
}

function grow(bytes: Uint8Array, needed: number): Uint8Array<ArrayBuffer> {
  let size = bytes.length * 2;
  while (size < needed) size *= 2;
  const next = new Uint8Array(size);
  next.set(bytes);
  return next;
}
