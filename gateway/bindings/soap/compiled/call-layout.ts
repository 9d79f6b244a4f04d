import { Buffer } from 'node:buffer';
import type { ArrayParam } from '../../../../shared/catalogue/index.js';

/*
 * The layout of one operation's call in slots, as the scanner's sink (call-builder.ts) fills them
 * and the record (call-record.ts) holds them: name tables matched on bytes, and how the items of
 * an array parameter are laid out. The decoder (argument-decoder.ts) is made of these and reads
 * the slots back; neither the record nor the builder needs more of it than `CallLayout`.
 */

/** Buckets of a NameTable: a power of two well above the longest list (a dozen names). */
const BUCKETS = 64;

/**
 * The names one level of elements may have, matched on the UTF-8 bytes of an element's local name
 * where it lies in the scanner's buffer: no string per element. A name's bucket comes from its
 * length and its first and last bytes, so a lookup compares the bytes of one candidate, rarely two.
 */
export class NameTable {
  private readonly names: readonly Uint8Array[];
  private readonly heads = new Int32Array(BUCKETS).fill(-1);
  private readonly next: Int32Array;

  constructor(names: readonly string[]) {
    this.names = names.map((n) => Buffer.from(n, 'utf8'));
    this.next = new Int32Array(names.length).fill(-1);
    // Inserted last to first, so a bucket lists its names in declaration order.
    for (let k = this.names.length - 1; k >= 0; k--) {
      const name = this.names[k]!;
      const h = bucket(name, 0, name.length);
      this.next[k] = this.heads[h]!;
      this.heads[h] = k;
    }
  }

  /** The index of the name buf[start, end), or -1. */
  find(buf: Uint8Array, start: number, end: number): number {
    const length = end - start;
    if (length <= 0) return -1;
    for (let k = this.heads[bucket(buf, start, end)]!; k >= 0; k = this.next[k]!) {
      const name = this.names[k]!;
      if (name.length !== length) continue;
      let i = 0;
      while (i < length && buf[start + i] === name[i]) i++;
      if (i === length) return k;
    }
    return -1;
  }
}

function bucket(bytes: Uint8Array, start: number, end: number): number {
  return (Math.imul(end - start, 31) + Math.imul(bytes[start]!, 7) + bytes[end - 1]!) & (BUCKETS - 1);
}

/**
 * How the items of an array parameter are laid out in its slots: `stride` slots per item (one
 * for a scalar item, one per field for a complex one, in the type's field order).
 */
export class ItemLayout {
  readonly stride: number;
  /** A complex item's element name (other children are not items); null: every child is one. */
  readonly itemName: NameTable | null;
  /** A complex item's fields; null for scalar items. */
  readonly fields: NameTable | null;

  constructor(param: ArrayParam) {
    const item = param.type.item;
    this.stride = typeof item === 'string' ? 1 : item.fields.length;
    this.itemName = typeof item === 'string' ? null : new NameTable([item.name]);
    this.fields = typeof item === 'string' ? null : new NameTable(item.fields.map((f) => f.name));
  }
}

/** What a call's record and its builder read of the operation's decoder: its parameters' names and layouts, its place. */
export interface CallLayout {
  readonly params: NameTable;
  /** Per parameter: its items' layout, or null for a scalar parameter. */
  readonly layouts: readonly (ItemLayout | null)[];
  /** Position in the catalogue: where a CallBuilder keeps this operation's record. */
  readonly index: number;
}
