import { hash } from 'node:crypto';
import { IntMap, mayFillGap } from '../../util/int-map.js';

/**
 * The embedded event log's resend-dedupe index: dedupe key → the first copy's id and arrival
 * time, oldest first, over one window (up to DEDUPE_MAX_KEYS entries, 1M by default).
 *
 * Kept compact because it holds an entry for every event of the window, and kept free of heap
 * objects per entry because a full garbage collection marks every one of them: an index of key
 * strings in a Map was most of a full GC's time, and its lookups a visible share of a ×100 batch's
 * CPU profile (bench/dedupe-ring.ts measures both; bench/LOG.md, 2026-11-22). So nothing per entry
 * is a JS object: ids, times and each key's 128-bit fingerprint live in typed arrays of a ring, and
 * an open-addressing table of ring sequence numbers finds them.
 *
 * The fingerprint of a key as the event log makes them (the base64 SHA-256 of the event's
 * identity, 44 characters) is the digest's first 16 bytes, decoded without allocation; any other
 * key (an old row, a test) is hashed with SHA-256 first. Two different keys share a fingerprint
 * only if SHA-256 collides on 128 bits, so the index answers by fingerprint alone.
 *
 * An entry can carry a tag while it is pending (the commit group that will store it). A pending
 * entry is never pruned, so everything queued behind it stays too.
 *
 * Nothing here may stop the event loop for long: a removal shifts the rest of its probe run back
 * instead of leaving a deleted marker (markers filled the table and forced a rehash of every entry
 * on the event loop, once per million events at the full window), and the ring is sized for the
 * expected window at once (growing copies and rehashes everything); bench/dedupe-ring.ts measures
 * it.
 */
interface DedupeHit<T> {
  id: bigint;
  receivedAt: number;
  /** The tag given to add() until settle(); null once settled. */
  pending: T | null;
}

const INITIAL_CAPACITY = 1024;
/** Sequence numbers are rebased before they leave the small-integer range. */
const REBASE_AT = 2 ** 30;
/** Table cells: 0 empty, else the entry's sequence number + 1. */
const EMPTY = 0;

/** The fingerprint of the key being looked up: four 32-bit words, reused by every call. */
const words = new Int32Array(4);

/** Standard base64 characters → their 6-bit values; -1 for anything else. */
const BASE64 = new Int8Array(128).fill(-1);
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
for (let i = 0; i < ALPHABET.length; i++) BASE64[ALPHABET.charCodeAt(i)] = i;

/** One base64 character's value, or -1 when it is not one. */
function sextet(key: string, i: number): number {
  const c = key.charCodeAt(i);
  return c < 128 ? BASE64[c]! : -1;
}

/** Four base64 characters from `i` as 24 bits, or -1 when one is not base64. */
function group(key: string, i: number): number {
  const a = sextet(key, i), b = sextet(key, i + 1), c = sextet(key, i + 2), d = sextet(key, i + 3);
  return (a | b | c | d) < 0 ? -1 : (a << 18) | (b << 12) | (c << 6) | d;
}

/**
 * For a key in the event log's form (44 characters ending in `=`, the first 22 base64: a SHA-256 digest), fills
 * `words` with the digest's first 16 bytes, decoded here rather than by a native call (a tenth of
 * its cost for this size), and answers true; false for any other key.
 */
function digestWords(key: string): boolean {
  // Only the 22 characters decoded are checked: the rest of a digest adds nothing to tell keys
  // apart, and every key of this form comes from the event log's own SHA-256.
  if (key.length !== 44 || key.charCodeAt(43) !== 61) return false;
  // Groups of four characters are three bytes: 5 groups and 2 characters cover the 16 bytes.
  const g0 = group(key, 0), g1 = group(key, 4), g2 = group(key, 8), g3 = group(key, 12), g4 = group(key, 16);
  const e = sextet(key, 20), f = sextet(key, 21);
  if ((g0 | g1 | g2 | g3 | g4 | e | f) < 0) return false;
  words[0] = (g0 << 8) | (g1 >>> 16);
  words[1] = ((g1 & 0xffff) << 16) | (g2 >>> 8);
  words[2] = ((g2 & 0xff) << 24) | g3;
  words[3] = (g4 << 8) | (e << 2) | (f >>> 4);
  return true;
}

/**
 * The first table cell to probe: the fingerprint mixed (a digest is uniform already; mixing keeps
 * a skewed key set from piling up in one run of cells).
 */
function cellOf(w0: number, w1: number, mask: number): number {
  let h = Math.imul(w0 ^ Math.imul(w1, 0x85ebca6b), 0x9e3779b1);
  h ^= h >>> 15;
  return h & mask;
}

/** The key whose fingerprint `words` holds: `add` right after `get` of the same key decodes nothing. */
let wordsOf: string | null = null;

/** Fills `words` with the key's fingerprint. */
function fingerprint(key: string): void {
  if (key === wordsOf) return;
  if (!digestWords(key)) digestWords(hash('sha256', key, 'base64'));
  wordsOf = key;
}

interface DedupeRingOptions {
  /**
   * The most keys the window keeps (the event log's DEDUPE_MAX_KEYS): the ring starts that large
   * so that filling it never stops to grow. Typed arrays are zeroed by the OS page by page as they
   * are first written, so the memory is taken as entries arrive, not at once.
   */
  expectedKeys?: number;
  /** For tests: the real threshold needs 10^9 entries to reach. */
  rebaseAt?: number;
}

export class DedupeRing<T> {
  private readonly rebaseAt: number;
  private capacity: number;
  /** Per ring slot: the key's fingerprint (4 words), or a hole when `live` is 0. */
  private prints: Int32Array;
  private ids: BigInt64Array;
  private times: Float64Array;
  private live: Uint8Array;
  /** Linear probing by the mixed fingerprint; at least twice the ring, so never more than half full. */
  private table: Int32Array;
  private count = 0;
  /** seq → tag of the pending entries (an IntMap, not a Map: see there why). */
  private readonly pending = new IntMap<T>();
  /** The oldest slot still in the ring (it may be a hole left by a replaced or forgotten key). */
  private head = 0;
  /** The next slot to fill. */
  private tail = 0;

  constructor(options: DedupeRingOptions = {}) {
    this.rebaseAt = options.rebaseAt ?? REBASE_AT;
    // Room for the window plus the holes replaced keys leave in it (a slot per key, rounded up to a power of two).
    let capacity = INITIAL_CAPACITY;
    while (capacity < (options.expectedKeys ?? 0) * 1.25) capacity *= 2;
    this.capacity = capacity;
    this.prints = new Int32Array(capacity * 4);
    this.ids = new BigInt64Array(capacity);
    this.times = new Float64Array(capacity);
    this.live = new Uint8Array(capacity);
    this.table = new Int32Array(capacity * 2);
  }

  get size(): number {
    return this.count;
  }

  /** Bytes the ring and its table hold at their current capacity (taken page by page as entries arrive, or at once by prefault). */
  get bytes(): number {
    return this.prints.byteLength + this.ids.byteLength + this.times.byteLength + this.live.byteLength + this.table.byteLength;
  }

  /**
   * Touches every page of the ring and its table now: a process launched for serving takes the
   * index's whole memory at start (82 MB at DEDUPE_MAX_KEYS 1M, about 50 ms) instead of a page
   * fault every few dozen inserts until the ring has gone round once, which at 30,000 inserts/s is
   * the first minute and more (0.04 faults per insert at first, 95% of the gateway's faults after
   * 30 s of load: bench/perf.ts PERF_EVENT=page-faults). Only while empty: it writes zeros.
   */
  prefault(): void {
    if (this.tail !== 0) throw new Error('DedupeRing.prefault: only an empty ring (it writes zeros)');
    for (const array of [this.prints, this.times, this.live, this.table]) {
      for (let i = 0; i < array.length; i += 4096 / array.BYTES_PER_ELEMENT) array[i] = 0;
    }
    for (let i = 0; i < this.ids.length; i += 4096 / 8) this.ids[i] = 0n;
  }

  get(key: string): DedupeHit<T> | undefined {
    fingerprint(key);
    const cell = this.find();
    if (cell < 0) return undefined;
    const seq = this.table[cell]! - 1;
    const slot = seq & (this.capacity - 1);
    return { id: this.ids[slot]!, receivedAt: this.times[slot]!, pending: this.pending.get(seq) ?? null };
  }

  /** Adds the newest entry for `key`; an existing entry for it is forgotten. */
  add(key: string, id: bigint, receivedAt: number, tag: T | null): void {
    fingerprint(key);
    const cell = this.find();
    if (cell >= 0) this.removeAt(cell);
    if (this.tail - this.head === this.capacity) this.grow();
    if (this.tail >= this.rebaseAt) this.rebase();
    const seq = this.tail++;
    const slot = seq & (this.capacity - 1);
    const at = slot * 4;
    this.prints[at] = words[0]!;
    this.prints[at + 1] = words[1]!;
    this.prints[at + 2] = words[2]!;
    this.prints[at + 3] = words[3]!;
    this.ids[slot] = id;
    this.times[slot] = receivedAt;
    this.live[slot] = 1;
    this.insertCell(seq, words[0]!, words[1]!);
    this.count++;
    if (tag !== null) this.pending.set(seq, tag);
  }

  /** The entry for `key` added with `tag` is durable now. */
  settle(key: string, tag: T): void {
    fingerprint(key);
    const cell = this.find();
    if (cell < 0) return;
    const seq = this.table[cell]! - 1;
    if (this.pending.get(seq) === tag) this.pending.delete(seq);
  }

  /** Forgets the entry for `key` if it is still the one added with `tag` (its commit failed). */
  forget(key: string, tag: T): void {
    fingerprint(key);
    const cell = this.find();
    if (cell >= 0 && this.pending.get(this.table[cell]! - 1) === tag) this.removeAt(cell);
  }

  /** Every entry added with `tag` is durable now (its commit group): one pass over the pending entries, no key decoded. */
  settleAll(tag: T): void {
    // Deleting the visited entry is allowed.
    this.pending.forEach((pending, seq) => {
      if (pending === tag) this.pending.delete(seq);
    });
  }

  /** Forgets every entry still pending with `tag` (its commit failed). */
  forgetAll(tag: T): void {
    const mask = this.capacity - 1;
    // removeAt deletes the visited entry only, which forEach allows.
    this.pending.forEach((pending, seq) => {
      if (pending !== tag) return;
      const at = (seq & mask) * 4;
      wordsOf = null;
      words[0] = this.prints[at]!;
      words[1] = this.prints[at + 1]!;
      words[2] = this.prints[at + 2]!;
      words[3] = this.prints[at + 3]!;
      const cell = this.find();
      if (cell >= 0 && this.table[cell]! - 1 === seq) this.removeAt(cell);
    });
  }

  /**
   * Drops entries from the oldest while they arrived at or before `cutoff` or the index holds
   * more than `max`; stops at the first entry to keep or still pending.
   */
  prune(cutoff: number, max: number): void {
    const mask = this.capacity - 1;
    while (this.head < this.tail) {
      const slot = this.head & mask;
      if (this.live[slot] === 1) {
        if (this.pending.has(this.head)) break;
        if (this.times[slot]! > cutoff && this.count <= max) break;
        const at = slot * 4;
        wordsOf = null;
        words[0] = this.prints[at]!;
        words[1] = this.prints[at + 1]!;
        words[2] = this.prints[at + 2]!;
        words[3] = this.prints[at + 3]!;
        this.removeAt(this.find());
      }
      this.head++;
    }
  }

  /** The table cell of the entry whose fingerprint is in `words`, or -1. */
  private find(): number {
    const table = this.table;
    const mask = table.length - 1;
    const prints = this.prints;
    const slotMask = this.capacity - 1;
    const w0 = words[0]!;
    for (let cell = cellOf(w0, words[1]!, mask); ; cell = (cell + 1) & mask) {
      const entry = table[cell]!;
      if (entry === EMPTY) return -1;
      const at = ((entry - 1) & slotMask) * 4;
      if (prints[at] === w0 && prints[at + 1] === words[1] && prints[at + 2] === words[2] && prints[at + 3] === words[3]) return cell;
    }
  }

  /** Stores `seq` in the table under its fingerprint. */
  private insertCell(seq: number, w0: number, w1: number): void {
    const table = this.table;
    const mask = table.length - 1;
    let cell = cellOf(w0, w1, mask);
    while (table[cell] !== EMPTY) cell = (cell + 1) & mask;
    table[cell] = seq + 1;
  }

  /** Removes the entry of a table cell; its ring slot becomes a hole prune steps over. */
  private removeAt(cell: number): void {
    const seq = this.table[cell]! - 1;
    this.clearCell(cell);
    this.live[seq & (this.capacity - 1)] = 0;
    this.pending.delete(seq);
    this.count--;
  }

  /**
   * Empties a cell, moving each later entry of its probe run that may sit there back into the gap
   * (linear probing's deletion without markers), so that every lookup still finds its entry.
   */
  private clearCell(cell: number): void {
    const table = this.table;
    const mask = table.length - 1;
    const slotMask = this.capacity - 1;
    const prints = this.prints;
    let gap = cell;
    for (let next = (gap + 1) & mask; table[next] !== EMPTY; next = (next + 1) & mask) {
      const entry = table[next]!;
      const at = ((entry - 1) & slotMask) * 4;
      if (mayFillGap(gap, next, cellOf(prints[at]!, prints[at + 1]!, mask))) {
        table[gap] = entry;
        gap = next;
      }
    }
    table[gap] = EMPTY;
  }

  /** A fresh table of at least `atLeast` cells from the live entries (the ring grew). */
  private rebuildTable(atLeast: number): void {
    let size = atLeast;
    while (size < this.count * 4) size *= 2;
    this.table = new Int32Array(size);
    const mask = this.capacity - 1;
    for (let seq = this.head; seq < this.tail; seq++) {
      const slot = seq & mask;
      if (this.live[slot] === 1) this.insertCell(seq, this.prints[slot * 4]!, this.prints[slot * 4 + 1]!);
    }
  }

  /** Doubles the ring; entries keep their sequence numbers, only their slots move. */
  private grow(): void {
    const oldMask = this.capacity - 1;
    const capacity = this.capacity * 2;
    const mask = capacity - 1;
    const prints = new Int32Array(capacity * 4);
    const ids = new BigInt64Array(capacity);
    const times = new Float64Array(capacity);
    const live = new Uint8Array(capacity);
    for (let seq = this.head; seq < this.tail; seq++) {
      const from = seq & oldMask;
      const to = seq & mask;
      for (let w = 0; w < 4; w++) prints[to * 4 + w] = this.prints[from * 4 + w]!;
      ids[to] = this.ids[from]!;
      times[to] = this.times[from]!;
      live[to] = this.live[from]!;
    }
    this.capacity = capacity;
    this.prints = prints;
    this.ids = ids;
    this.times = times;
    this.live = live;
    // The table's cells hold sequence numbers, which did not change; keep it at least twice the ring.
    this.rebuildTable(Math.max(this.table.length, capacity * 2));
  }

  /**
   * Renumbers every sequence number down by a multiple of the capacity, which leaves every slot
   * where it is. Rare (once per about 10^9 entries); keeps sequence numbers within an Int32 cell.
   */
  private rebase(): void {
    const base = this.head - (this.head & (this.capacity - 1));
    if (base === 0) return;
    const table = this.table;
    for (let cell = 0; cell < table.length; cell++) if (table[cell]! > 0) table[cell] = table[cell]! - base;
    const pending: [number, T][] = [];
    this.pending.forEach((tag, seq) => pending.push([seq, tag]));
    this.pending.clear();
    for (const [seq, tag] of pending) this.pending.set(seq - base, tag);
    this.head -= base;
    this.tail -= base;
  }
}
