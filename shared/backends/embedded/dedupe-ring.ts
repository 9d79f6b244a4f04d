/**
 * The embedded event log's resend-dedupe index: dedupe key → the first copy's id and arrival
 * time, oldest first, over one window (up to DEDUPE_MAX_KEYS entries, 1M by default).
 *
 * Kept compact because it holds an entry for every event of the window. Ids and times live in
 * typed arrays of a ring, and each key maps to a small integer. An earlier version used a Map of
 * entry objects holding BigInts: that made each event three live objects for every full garbage
 * collection to mark, and with a full index p99 at 70% load doubled (bench/LOG.md, 2026-11-22).
 *
 * An entry can carry a tag while it is pending (the commit group that will store it). A pending
 * entry is never pruned, so everything queued behind it stays too.
 */
export interface DedupeHit<T> {
  id: bigint;
  receivedAt: number;
  /** The tag given to add() until settle(); null once settled. */
  pending: T | null;
}

const INITIAL_CAPACITY = 1024;
/** Sequence numbers are rebased before they leave the small-integer range. */
const REBASE_AT = 2 ** 30;

export class DedupeRing<T> {
  /** `rebaseAt` is for tests: the real threshold needs 10^9 entries to reach. */
  constructor(private readonly rebaseAt = REBASE_AT) {}

  private capacity = INITIAL_CAPACITY;
  private keys: (string | undefined)[] = new Array<string | undefined>(INITIAL_CAPACITY);
  private ids = new BigInt64Array(INITIAL_CAPACITY);
  private times = new Float64Array(INITIAL_CAPACITY);
  /** key → sequence number of its slot (slot = seq mod capacity). */
  private readonly seqs = new Map<string, number>();
  /** seq → tag of the pending entries. */
  private readonly pending = new Map<number, T>();
  /** The oldest slot still in the ring (it may be a hole left by a replaced or forgotten key). */
  private head = 0;
  /** The next slot to fill. */
  private tail = 0;

  get size(): number {
    return this.seqs.size;
  }

  get(key: string): DedupeHit<T> | undefined {
    const seq = this.seqs.get(key);
    if (seq === undefined) return undefined;
    const slot = seq & (this.capacity - 1);
    return { id: this.ids[slot]!, receivedAt: this.times[slot]!, pending: this.pending.get(seq) ?? null };
  }

  /** Adds the newest entry for `key`; an existing entry for it is forgotten. */
  add(key: string, id: bigint, receivedAt: number, tag: T | null): void {
    this.remove(key);
    if (this.tail - this.head === this.capacity) this.grow();
    if (this.tail >= this.rebaseAt) this.rebase();
    const seq = this.tail++;
    const slot = seq & (this.capacity - 1);
    this.keys[slot] = key;
    this.ids[slot] = id;
    this.times[slot] = receivedAt;
    this.seqs.set(key, seq);
    if (tag !== null) this.pending.set(seq, tag);
  }

  /** The entry for `key` added with `tag` is durable now. */
  settle(key: string, tag: T): void {
    const seq = this.seqs.get(key);
    if (seq !== undefined && this.pending.get(seq) === tag) this.pending.delete(seq);
  }

  /** Forgets the entry for `key` if it is still the one added with `tag` (its commit failed). */
  forget(key: string, tag: T): void {
    const seq = this.seqs.get(key);
    if (seq !== undefined && this.pending.get(seq) === tag) this.remove(key);
  }

  /**
   * Drops entries from the oldest while they arrived at or before `cutoff` or the index holds
   * more than `max`; stops at the first entry to keep or still pending.
   */
  prune(cutoff: number, max: number): void {
    const mask = this.capacity - 1;
    while (this.head < this.tail) {
      const slot = this.head & mask;
      const key = this.keys[slot];
      if (key !== undefined) {
        if (this.pending.has(this.head)) break;
        if (this.times[slot]! > cutoff && this.seqs.size <= max) break;
        this.seqs.delete(key);
        this.keys[slot] = undefined;
      }
      this.head++;
    }
  }

  private remove(key: string): void {
    const seq = this.seqs.get(key);
    if (seq === undefined) return;
    this.seqs.delete(key);
    this.pending.delete(seq);
    // A hole: prune steps over it. Clear the key so the slot does not keep the string alive.
    this.keys[seq & (this.capacity - 1)] = undefined;
  }

  /** Doubles the ring; entries keep their sequence numbers, only their slots move. */
  private grow(): void {
    const oldMask = this.capacity - 1;
    const capacity = this.capacity * 2;
    const mask = capacity - 1;
    const keys = new Array<string | undefined>(capacity);
    const ids = new BigInt64Array(capacity);
    const times = new Float64Array(capacity);
    for (let seq = this.head; seq < this.tail; seq++) {
      const from = seq & oldMask;
      const to = seq & mask;
      keys[to] = this.keys[from];
      ids[to] = this.ids[from]!;
      times[to] = this.times[from]!;
    }
    this.capacity = capacity;
    this.keys = keys;
    this.ids = ids;
    this.times = times;
  }

  /**
   * Renumbers every sequence number down by a multiple of the capacity, which leaves every slot
   * where it is. Rare (once per about 10^9 entries); keeps the Map's values small integers, which
   * V8 stores without allocating.
   */
  private rebase(): void {
    const base = this.head - (this.head & (this.capacity - 1));
    if (base === 0) return;
    for (const [key, seq] of this.seqs) this.seqs.set(key, seq - base);
    const pending = [...this.pending];
    this.pending.clear();
    for (const [seq, tag] of pending) this.pending.set(seq - base, tag);
    this.head -= base;
    this.tail -= base;
  }
}
