/**
 * One reused byte buffer for a hot path that writes a short message and hands it on at once (a
 * response to uWS, a digest's input to SHA-256), and its views by length, made once each: a view
 * per call was an object per request. Whatever is written is valid until the next `reserve`.
 */
export class ScratchBytes {
  buf: Buffer;
  private views: (Buffer | undefined)[] = [];

  constructor(initial = 1024) {
    this.buf = Buffer.allocUnsafe(initial);
  }

  /** Room for `size` bytes (growing, which forgets the views, only past the largest so far). */
  reserve(size: number): Buffer {
    if (this.buf.length < size) {
      this.buf = Buffer.allocUnsafe(Math.max(size, this.buf.length * 2));
      this.views = [];
    }
    return this.buf;
  }

  /** The first `length` bytes. */
  view(length: number): Buffer {
    let view = this.views[length];
    if (view === undefined) this.views[length] = view = this.buf.subarray(0, length);
    return view;
  }
}
