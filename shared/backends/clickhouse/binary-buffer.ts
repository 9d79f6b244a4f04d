/**
 * A growing byte buffer with the writes ClickHouse's `RowBinary` format is made of: little-endian
 * fixed-width integers and floats, and strings as a LEB128 length followed by their UTF-8 bytes.
 * The worker writes every row of a batch into one of these, with no object per row or per value.
 */

const TWO_32 = 4_294_967_296;

export class BinaryBuffer {
  private buf: Buffer;
  private pos = 0;

  constructor(initialBytes = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(initialBytes);
  }

  get length(): number {
    return this.pos;
  }

  /** The bytes written so far (a view: the buffer must not be written after this). */
  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  u8(v: number): void {
    this.room(1);
    this.buf[this.pos++] = v;
  }

  u16(v: number): void {
    this.room(2);
    this.buf.writeUInt16LE(v, this.pos);
    this.pos += 2;
  }

  u32(v: number): void {
    this.room(4);
    this.buf.writeUInt32LE(v, this.pos);
    this.pos += 4;
  }

  f64(v: number): void {
    this.room(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  /** A whole number within ±2^53 as a two's-complement Int64 (no BigInt per value). */
  i64(v: number): void {
    const high = Math.floor(v / TWO_32);
    this.int64Parts(high, v - high * TWO_32);
  }

  /** An Int64 given as `high * 2^32 + low`, low in [0, 2^32). */
  int64Parts(high: number, low: number): void {
    this.room(8);
    this.buf.writeUInt32LE(low, this.pos);
    this.buf.writeInt32LE(high, this.pos + 4);
    this.pos += 8;
  }

  /** `epochMs * 10_000 + ticks` as an Int64 (a DateTime64(7)), exact over years 1..9999. */
  ticks64(epochMs: number, ticks: number): void {
    const msHigh = Math.floor(epochMs / TWO_32);
    const low = (epochMs - msHigh * TWO_32) * 10_000 + ticks; // < 2^46: exact
    const carry = Math.floor(low / TWO_32);
    this.int64Parts(msHigh * 10_000 + carry, low - carry * TWO_32);
  }

  u64(v: bigint): void {
    this.room(8);
    this.buf.writeBigUInt64LE(v, this.pos);
    this.pos += 8;
  }

  /** Eight bytes of `source` from `offset`, reversed: a big-endian UInt64 written as RowBinary's little-endian. */
  u64FromBigEndian(source: Uint8Array, offset = 0): void {
    this.room(8);
    for (let i = 0; i < 8; i++) this.buf[this.pos + i] = source[offset + 7 - i]!;
    this.pos += 8;
  }

  /** A LEB128 unsigned integer: a String's length, an Array's item count. */
  count(v: number): void {
    this.room(5);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.pos++] = v;
  }

  /** A String: its UTF-8 length, then the bytes. Lone surrogates become U+FFFD, as in every store. */
  str(s: string): void {
    // Most values are short: at most 3 bytes per UTF-16 unit, so under 128 bytes the length is one
    // byte, written after the text (no separate byteLength pass).
    if (s.length <= 42) {
      this.room(1 + s.length * 3);
      const n = this.buf.write(s, this.pos + 1, 'utf8');
      this.buf[this.pos] = n;
      this.pos += 1 + n;
      return;
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.count(n);
    this.room(n);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }
}
