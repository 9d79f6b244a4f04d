/** The embedded event log's compact dedupe index, against a plain Map model of the same rules. */
import v8 from 'node:v8';
import vm from 'node:vm';
import { hash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DedupeRing } from '../../../../../shared/backends/embedded/dedupe-ring.js';
import { seededRandom as random } from '../../../../helpers/seeded-random.js';

/** The rules as the event log had them with a Map of entry objects (insertion order = arrival order). */
class ModelIndex<T> {
  readonly map = new Map<string, { id: bigint; receivedAt: number; pending: T | null }>();
  get(key: string) {
    const e = this.map.get(key);
    return e === undefined ? undefined : { ...e };
  }
  add(key: string, id: bigint, receivedAt: number, tag: T | null): void {
    this.map.delete(key);
    this.map.set(key, { id, receivedAt, pending: tag });
  }
  settle(key: string, tag: T): void {
    const e = this.map.get(key);
    if (e !== undefined && e.pending === tag) e.pending = null;
  }
  forget(key: string, tag: T): void {
    const e = this.map.get(key);
    if (e !== undefined && e.pending === tag) this.map.delete(key);
  }
  settleAll(tag: T): void {
    for (const e of this.map.values()) if (e.pending === tag) e.pending = null;
  }
  forgetAll(tag: T): void {
    for (const [key, e] of this.map) if (e.pending === tag) this.map.delete(key);
  }
  prune(cutoff: number, max: number): void {
    for (const [key, e] of this.map) {
      if (e.pending !== null || (e.receivedAt > cutoff && this.map.size <= max)) break;
      this.map.delete(key);
    }
  }
}


describe('DedupeRing', () => {
  it('prefaults only while empty, and works as before after it', () => {
    const ring = new DedupeRing<string>({ expectedKeys: 5000 });
    expect(ring.bytes).toBe(8192 * (16 + 8 + 8 + 1 + 8));
    ring.prefault();
    ring.add('a', 1n, 100, null);
    expect(ring.get('a')).toEqual({ id: 1n, receivedAt: 100, pending: null });
    expect(() => ring.prefault()).toThrow(/only an empty ring/);
    expect(ring.get('a')?.id).toBe(1n);
  });

  it('answers, replaces, settles, forgets and prunes oldest first', () => {
    const ring = new DedupeRing<string>();
    ring.add('a', 1n, 100, null);
    ring.add('b', 2n, 200, 'g1');
    ring.add('c', 3n, 300, 'g1');
    expect(ring.get('a')).toEqual({ id: 1n, receivedAt: 100, pending: null });
    expect(ring.get('b')).toEqual({ id: 2n, receivedAt: 200, pending: 'g1' });
    expect(ring.get('zz')).toBeUndefined();

    // A pending entry stops pruning, even of older-than-cutoff entries behind it.
    ring.prune(1000, 10);
    expect(ring.size).toBe(2);
    expect(ring.get('a')).toBeUndefined();
    ring.settle('b', 'other-group'); // not its group: still pending
    ring.prune(1000, 10);
    expect(ring.get('b')?.pending).toBe('g1');
    ring.settle('b', 'g1');
    ring.forget('c', 'g1'); // its commit failed
    expect(ring.get('c')).toBeUndefined();
    ring.prune(150, 10);
    expect(ring.get('b')).toEqual({ id: 2n, receivedAt: 200, pending: null }); // inside the window
    ring.prune(200, 10);
    expect(ring.size).toBe(0);

    // Re-adding a key moves it to the newest position; the cap drops the oldest.
    ring.add('x', 10n, 1, null);
    ring.add('y', 11n, 2, null);
    ring.add('x', 12n, 3, null);
    ring.prune(0, 1);
    expect(ring.get('y')).toBeUndefined();
    expect(ring.get('x')).toEqual({ id: 12n, receivedAt: 3, pending: null });
  });

  it('keeps ids exact beyond 2^53', () => {
    const ring = new DedupeRing<string>();
    const big = 2n ** 62n + 12345n;
    ring.add('k', big, 1, null);
    expect(ring.get('k')?.id).toBe(big);
  });

  it.each([
    { name: 'small window, frequent pruning (crosses the rebase threshold many times)', keySpace: 3000, pruneShare: 0.17, rebaseAt: 5000 },
    { name: 'large window, rare pruning (the ring grows several times, and rebases)', keySpace: 40_000, pruneShare: 0.005, rebaseAt: 10_000 },
  ])('behaves like the Map model over a long random run: $name', ({ keySpace, pruneShare, rebaseAt }) => {
    const next = random(42);
    const ring = new DedupeRing<number>({ rebaseAt });
    const model = new ModelIndex<number>();
    let now = 0;
    let id = 1n;
    const groups = [1, 2, 3];
    // Keys as the event log makes them (base64 SHA-256), so the run takes the ring's fast path.
    const keys = Array.from({ length: keySpace }, (_, i) => hash('sha256', `k${i}`, 'base64'));
    for (let step = 0; step < 25_000; step++) {
      now += Math.floor(next() * 3);
      const key = keys[Math.floor(next() * keySpace)]!;
      const r = next();
      const group = groups[Math.floor(next() * groups.length)]!;
      if (r < 0.6) {
        const tag = next() < 0.3 ? group : null;
        ring.add(key, id, now, tag);
        model.add(key, id, now, tag);
        id++;
      } else if (r < 0.75) {
        ring.settle(key, group);
        model.settle(key, group);
      } else if (r < 0.8) {
        ring.forget(key, group);
        model.forget(key, group);
      } else if (r < 0.81) {
        // A whole commit group at once, as the event log settles or fails one.
        if (next() < 0.8) {
          ring.settleAll(group);
          model.settleAll(group);
        } else {
          ring.forgetAll(group);
          model.forgetAll(group);
        }
      } else if (r < 1 - pruneShare) {
        // Settle everything now and then, so pruning can move.
        if (next() < 0.05) {
          for (const k of model.map.keys()) for (const g of groups) {
            ring.settle(k, g);
            model.settle(k, g);
          }
        }
      } else {
        const cutoff = now - 500 * Math.ceil(keySpace / 3000);
        const max = keySpace / 15 + Math.floor(next() * keySpace);
        ring.prune(cutoff, max);
        model.prune(cutoff, max);
      }
      // expect() only on a difference: 25,000 steps of matchers dominated the file's time.
      const got = ring.get(key);
      const want = model.get(key);
      if (!isDeepStrictEqual(got, want)) expect(got).toEqual(want);
      if (ring.size !== model.map.size) expect(ring.size).toBe(model.map.size);
    }
    for (const key of model.map.keys()) expect(ring.get(key)).toEqual(model.get(key));
  });

  it('tells apart keys in and out of the event log\'s form, including near misses of it', () => {
    const ring = new DedupeRing<string>();
    const digest = hash('sha256', 'event', 'base64');
    const variants = [
      digest,
      digest.slice(0, 43), // no padding: not the event log's form, hashed first
      `${digest.slice(0, 21)}*${digest.slice(22)}`, // a character outside base64
      digest.toLowerCase(),
      '',
      'k',
    ];
    variants.forEach((key, i) => ring.add(key, BigInt(i + 1), i, null));
    expect(ring.size).toBe(variants.length);
    variants.forEach((key, i) => expect(ring.get(key)?.id).toBe(BigInt(i + 1)));
    expect(ring.get(hash('sha256', 'other', 'base64'))).toBeUndefined();
    // Keys of the event log's form are told apart by the digest's first 16 bytes (SHA-256 never
    // gives two digests agreeing on 128 bits): a key that differs only past them is the same key.
    expect(ring.get(`${digest.slice(0, 22)}${digest.slice(22, 42) === 'A'.repeat(20) ? 'B' : 'A'.repeat(20)}${digest.slice(42)}`)?.id).toBe(1n);
  });

  it('holds no JS object per entry: a million keys stay in typed arrays', () => {
    // Measured after full collections: the base64 keys made below are garbage, whose collection
    // V8 may defer past the measurement (it failed that way once in a hundred runs on Node 24).
    const gc = fullGc();
    gc();
    const ring = new DedupeRing<string>();
    const before = process.memoryUsage();
    const n = 200_000;
    const digest = Buffer.alloc(32);
    for (let i = 0; i < n; i++) {
      digest.writeUInt32LE(i, 0);
      digest.writeUInt32LE(Math.imul(i, 2654435761) >>> 0, 4);
      ring.add(digest.toString('base64'), BigInt(i + 1), i, null);
    }
    expect(ring.size).toBe(n);
    digest.writeUInt32LE(12345, 0);
    digest.writeUInt32LE(Math.imul(12345, 2654435761) >>> 0, 4);
    expect(ring.get(digest.toString('base64'))?.id).toBe(12346n);
    // Typed arrays live outside the JS heap: the heap does not grow with the entries.
    gc();
    const heapGrowth = process.memoryUsage().heapUsed - before.heapUsed;
    expect(heapGrowth).toBeLessThan(n * 40);
  });
});

/** V8's full collection, exposed for this thread only (a unit test may not start node with flags). */
function fullGc(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}
