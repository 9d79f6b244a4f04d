import { Buffer } from 'node:buffer';

/** A store that grew past this for one large body is not kept for the next (pooled scanners). */
const KEEP_LIMIT = 64 * 1024;

/**
 * Bytes received but not read yet, in one reusable buffer: the start of a token that a chunk's end
 * cut, then the chunks that arrived since. Reading them again waits until the held bytes have
 * doubled (`due`), so a token trickling in byte by byte is re-read a logarithmic number of times.
 */
export class HeldBytes {
  store: Buffer = Buffer.allocUnsafe(1024);
  length = 0;
  private retryAt = 0;

  clear(): void {
    if (this.store.length > KEEP_LIMIT) this.store = Buffer.allocUnsafe(1024);
    this.length = 0;
    this.retryAt = 0;
  }

  /** Appends source[from, to). */
  append(source: Buffer, from: number, to: number): void {
    const needed = this.length + (to - from);
    if (needed > this.store.length) {
      let size = this.store.length * 2;
      while (size < needed) size *= 2;
      const store = Buffer.allocUnsafe(size);
      this.store.copy(store, 0, 0, this.length);
      this.store = store;
    }
    source.copy(this.store, this.length, from, to);
    this.length = needed;
  }

  get due(): boolean {
    return this.length >= this.retryAt;
  }

  /** After a read of the held bytes: keep only those from `read` on, and wait for them to double. */
  keepFrom(read: number): void {
    if (read > 0) this.store.copy(this.store, 0, read, this.length);
    this.length -= read;
    this.retryAt = 2 * this.length;
  }
}
