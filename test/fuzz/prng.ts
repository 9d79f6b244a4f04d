import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

type Generator = ReturnType<typeof xoroshiro128plus>;

/**
 * The fuzzer's only source of randomness. Every case gets its own generator derived from
 * (run seed, case number), so `--seed S --case N` rebuilds case N alone, byte for byte, without
 * replaying the cases before it.
 */
export class Rng {
  private readonly gen: Generator;

  constructor(seed: number, stream = 0) {
    // Mix the case number into the seed so neighbouring cases do not share a prefix.
    this.gen = xoroshiro128plus(mix32(seed ^ mix32(stream + 0x9e3779b9)));
  }

  /** An integer in [0, n). */
  int(n: number): number {
    if (n <= 1) return 0;
    return uniformInt(this.gen, 0, n - 1);
  }

  /** An integer in [min, max]. */
  range(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(p: number): boolean {
    return this.int(1_000_000) < p * 1_000_000;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(items.length)]!;
  }

  /** Picks by weight: `[[weight, value], ...]`. */
  weighted<T>(items: readonly (readonly [number, T])[]): T {
    const total = items.reduce((s, [w]) => s + w, 0);
    let r = this.int(total);
    for (const [w, v] of items) {
      if (r < w) return v;
      r -= w;
    }
    return items[items.length - 1]![1];
  }

  bytes(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) out[i] = this.int(256);
    return out;
  }
}

/** A 32-bit finalizer (murmur3's): spreads nearby inputs over the whole range. */
function mix32(x: number): number {
  let h = x | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}
