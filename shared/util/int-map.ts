/**
 * A map from small non-negative integers to values, for the hot path's tables whose entries come
 * and go with every request (a request's sequence number → its waiter, an event's ring slot → its
 * commit group).
 *
 * Why not a Map: V8 rebuilds a Map's hash table as entries are added and deleted, and the table it
 * leaves behind keeps its entries and a link to its successor (for iterators still walking it).
 * Once one of those tables has been promoted to the old generation, every later table and every
 * value they hold is reachable from it until the next full collection, so each scavenge copied
 * and promoted whole requests that had long been answered, lengthening every pause
 * (bench/allocations.ts measures the scavenges; bench/LOG.md §2026-11-26 (third session)).
 * Here one pair of arrays is written in place (linear probing, deletion by shifting the rest of
 * the run back) and replaced only when it must grow.
 */
export class IntMap<V> {
  /** Key + 1 per cell; 0 is an empty cell. */
  private keys: Int32Array;
  private values: (V | undefined)[];
  private count = 0;

  constructor(initialCapacity = 64) {
    let capacity = 16;
    while (capacity < initialCapacity * 2) capacity *= 2;
    this.keys = new Int32Array(capacity);
    this.values = new Array<V | undefined>(capacity).fill(undefined);
  }

  get size(): number {
    return this.count;
  }

  get(key: number): V | undefined {
    const cell = this.find(key);
    return cell < 0 ? undefined : this.values[cell];
  }

  has(key: number): boolean {
    return this.find(key) >= 0;
  }

  /** Keys are integers in 0 … 2^31 − 2. */
  set(key: number, value: V): void {
    const cell = this.find(key);
    if (cell >= 0) {
      this.values[cell] = value;
      return;
    }
    if ((this.count + 1) * 2 > this.keys.length) this.grow();
    const keys = this.keys;
    const mask = keys.length - 1;
    let at = home(key, mask);
    while (keys[at] !== 0) at = (at + 1) & mask;
    keys[at] = key + 1;
    this.values[at] = value;
    this.count++;
  }

  delete(key: number): boolean {
    const cell = this.find(key);
    if (cell < 0) return false;
    this.removeAt(cell);
    return true;
  }

  clear(): void {
    this.keys.fill(0);
    this.values.fill(undefined);
    this.count = 0;
  }

  /**
   * Calls `fn` once per entry. `fn` may delete the entry it is given (no other, and add none): the walk
   * starts after an empty cell, so a deletion only moves entries it has not reached yet.
   */
  forEach(fn: (value: V, key: number) => void): void {
    const keys = this.keys;
    const mask = keys.length - 1;
    let start = 0;
    while (keys[start] !== 0) start++;
    for (let step = 1; step <= keys.length; ) {
      const cell = (start + step) & mask;
      const stored = keys[cell]!;
      if (stored === 0) {
        step++;
        continue;
      }
      fn(this.values[cell] as V, stored - 1);
      // Deleted: the cell now holds the next entry of its run (or nothing); look at it again.
      if (keys[cell] === stored) step++;
    }
  }

  private find(key: number): number {
    const keys = this.keys;
    const mask = keys.length - 1;
    const stored = key + 1;
    for (let at = home(key, mask); ; at = (at + 1) & mask) {
      const k = keys[at]!;
      if (k === stored) return at;
      if (k === 0) return -1;
    }
  }

  private removeAt(cell: number): void {
    const keys = this.keys;
    const values = this.values;
    const mask = keys.length - 1;
    let gap = cell;
    for (let next = (gap + 1) & mask; keys[next] !== 0; next = (next + 1) & mask) {
      if (mayFillGap(gap, next, home(keys[next]! - 1, mask))) {
        keys[gap] = keys[next]!;
        values[gap] = values[next];
        gap = next;
      }
    }
    keys[gap] = 0;
    values[gap] = undefined;
    this.count--;
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldValues = this.values;
    this.keys = new Int32Array(oldKeys.length * 2);
    this.values = new Array<V | undefined>(oldKeys.length * 2).fill(undefined);
    this.count = 0;
    for (let i = 0; i < oldKeys.length; i++) if (oldKeys[i] !== 0) this.set(oldKeys[i]! - 1, oldValues[i] as V);
    // The old arrays may be old-generation garbage by now: they must not keep the values alive.
    oldValues.fill(undefined);
  }
}

/**
 * Linear probing's deletion rule (this map and the dedupe ring's table): the entry at cell `next`,
 * whose probe starts at `home`, may move back into the empty cell `gap` before it unless its home
 * lies cyclically within (gap, next], where the gap would come before its start.
 */
export function mayFillGap(gap: number, next: number, home: number): boolean {
  return gap <= next ? home <= gap || home > next : home <= gap && home > next;
}

/**
 * The first cell to probe for `key`: multiplying by an odd constant permutes the low bits, so
 * consecutive keys (sequence numbers, what this holds) never share a first cell.
 */
function home(key: number, mask: number): number {
  return Math.imul(key, 0x9e3779b1) & mask;
}
