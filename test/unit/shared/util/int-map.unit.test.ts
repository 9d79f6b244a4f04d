/** IntMap against a Map over long random runs: the same answers, whatever the order of operations. */
import { describe, expect, it } from 'vitest';
import { IntMap } from '../../../../shared/util/int-map.js';
import { seededRandom as random } from '../../../helpers/seeded-random.js';


function entries(map: IntMap<string>): [number, string][] {
  const out: [number, string][] = [];
  map.forEach((value, key) => out.push([key, value]));
  return out.sort((a, b) => a[0] - b[0]);
}


/** expect() only on a difference: tens of thousands of matchers dominated the file's time. */
function same<T>(ours: T, model: T): void {
  if (ours !== model) expect(ours).toBe(model);
}
describe('IntMap', () => {
  it.each([
    { name: 'sequential keys, as sequence numbers arrive', keys: (i: number) => i, space: 0 },
    { name: 'random keys from a small space (long probe runs, wrap-around)', keys: (_: number, r: () => number) => Math.floor(r() * 300), space: 300 },
    { name: 'random keys up to 2^31 - 2', keys: (_: number, r: () => number) => Math.floor(r() * (2 ** 31 - 1)), space: 2 ** 31 - 1 },
  ])('behaves like a Map: $name', ({ keys }) => {
    const next = random(7);
    const map = new IntMap<string>(4);
    const model = new Map<number, string>();
    let sequence = 0;
    const live: number[] = [];
    for (let step = 0; step < 40_000; step++) {
      const r = next();
      if (r < 0.5) {
        const key = keys(sequence++, next);
        map.set(key, `v${step}`);
        model.set(key, `v${step}`);
        live.push(key);
      } else if (r < 0.9 && live.length > 0) {
        // Mostly the oldest, as answers come back in order; sometimes any.
        const at = next() < 0.7 ? 0 : Math.floor(next() * live.length);
        const key = live.splice(at, 1)[0]!;
        same(map.delete(key), model.delete(key));
      } else if (r < 0.97) {
        const key = keys(Math.floor(next() * (sequence + 1)), next);
        same(map.get(key), model.get(key));
        same(map.has(key), model.has(key));
      } else if (r < 0.995) {
        // forEach deleting every entry it is given that matches, as settleAll does.
        const cut = `v${Math.floor(next() * step)}`;
        map.forEach((value, key) => {
          if (value < cut) map.delete(key);
        });
        for (const [key, value] of model) if (value < cut) model.delete(key);
      } else {
        map.clear();
        model.clear();
        live.length = 0;
      }
      same(map.size, model.size);
    }
    expect(entries(map)).toEqual([...model].sort((a, b) => a[0] - b[0]));
  });

  it('visits every entry once, even when each visit deletes it', () => {
    const map = new IntMap<number>(8);
    for (let k = 0; k < 1000; k++) map.set(k * 37, k);
    const seen: number[] = [];
    map.forEach((value, key) => {
      seen.push(value);
      map.delete(key);
    });
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 1000 }, (_, k) => k));
    expect(map.size).toBe(0);
  });

  it('lets go of a value once its entry is deleted or the table grew', () => {
    const map = new IntMap<object>(2);
    const values = Array.from({ length: 100 }, () => ({}));
    values.forEach((v, k) => map.set(k, v));
    for (let k = 0; k < 100; k++) map.delete(k);
    // Nothing reachable through the map's arrays: every cell emptied.
    const internals = map as unknown as { values: unknown[] };
    expect(internals.values.every((v) => v === undefined)).toBe(true);
  });
});
