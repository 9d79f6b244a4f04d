/**
 * The floor rule of the scale-out event ids (shared/backends/ids/floor.ts): the Redis marker of a
 * checked id-blocks topic, the floor a topic that cannot be trusted is raised to, and the check that
 * combines them, with its Redis and stored-id readers replaced by plain functions.
 */
import { describe, expect, it } from 'vitest';
import { checkedMarker, floorAbove, floorCheckedBefore, topicCheck, type TopicCheckDeps } from '../../../../../shared/backends/ids/floor.js';

describe('the checked id-blocks topic marker', () => {
  it("takes the checker's floor when it is higher than the gateway's own", () => {
    const marker = checkedMarker('topic-B', 5_000n);
    // The race a CI run hit: the checker raised the floor and set the marker before any block
    // record carried it; a gateway still on floor 0 must not issue from 0.
    expect(floorCheckedBefore(marker, 'topic-B', 0n)).toBe(5_000n);
    expect(floorCheckedBefore(marker, 'topic-B', 9_000n)).toBe(9_000n);
    expect(floorCheckedBefore(checkedMarker('t', 2n ** 62n), 't', 1n)).toBe(2n ** 62n);
  });

  it('checks again for another topic, no marker, or a marker without a floor (an older release)', () => {
    expect(floorCheckedBefore(checkedMarker('topic-A', 5_000n), 'topic-B', 0n)).toBeNull();
    expect(floorCheckedBefore(null, 'topic-B', 0n)).toBeNull();
    expect(floorCheckedBefore('topic-B', 'topic-B', 0n)).toBeNull();
    expect(floorCheckedBefore('topic-B -1', 'topic-B', 0n)).toBeNull();
    expect(floorCheckedBefore('topic-B 12x', 'topic-B', 0n)).toBeNull();
  });
});

describe('floorAbove', () => {
  it('raises the floor so the next block starts at least the margin above the highest stored id', () => {
    // Next block is offset 7 of blocks of 100: its first id is floor + 701.
    const floor = floorAbove(50_000n, 1_000n, 7n, 100, 0n);
    expect(floor).toBe(50_000n + 1_000n - 700n);
    expect(floor + 7n * 100n + 1n).toBeGreaterThan(50_000n + 1_000n - 1n);
  });

  it('never lowers the floor, and leaves it when the topic is already far enough ahead', () => {
    expect(floorAbove(50_000n, 1_000n, 7n, 100, 90_000n)).toBe(90_000n);
    expect(floorAbove(50_000n, 1_000n, 1_000n, 100, 0n)).toBe(0n); // offset 1000 x 100 = 100,000 > 51,000
  });

  it('keeps the floor when nothing is stored (a new deployment)', () => {
    expect(floorAbove(0n, 1_000_000n, 0n, 1000, 0n)).toBe(0n);
    expect(floorAbove(0n, 1_000_000n, 0n, 1000, 42n)).toBe(42n);
  });

  it('is exact past 2^53', () => {
    const highest = 2n ** 62n + 12_345n;
    expect(floorAbove(highest, 1_000_000n, 3n, 1000, 0n)).toBe(highest + 1_000_000n - 3_000n);
  });
});

describe('topicCheck', () => {
  function deps(over: Partial<TopicCheckDeps> & { marker?: string | null; highest?: bigint } = {}) {
    const state = { marker: over.marker ?? null, highestReads: 0, warnings: [] as string[] };
    const d: TopicCheckDeps = {
      readMarker: () => Promise.resolve(state.marker),
      writeMarker: (m) => {
        state.marker = m;
        return Promise.resolve();
      },
      highestStored: () => {
        state.highestReads++;
        return Promise.resolve(over.highest ?? 0n);
      },
      margin: 1_000n,
      topic: 'ids',
      logger: { warn: (_o, m) => state.warnings.push(m) },
      ...over,
    };
    return { check: topicCheck(d), state };
  }
  const position = (topicId: string, end: bigint) => ({ topicId, end, start: 0n });

  it('checks an unmarked topic against the stored ids, raises the floor, and marks it with that floor', async () => {
    const { check, state } = deps({ highest: 10_000n });
    expect(await check(position('T1', 2n), 0n, 100)).toBe(10_800n);
    expect(state.marker).toBe(checkedMarker('T1', 10_800n));
    expect(state.highestReads).toBe(1);
    expect(state.warnings).toEqual(['event-id floor raised to 10800: the id-blocks topic was not known to be ahead of the stored ids']);
  });

  it('takes a marked topic at the higher floor without reading the stored ids', async () => {
    const { check, state } = deps({ marker: checkedMarker('T1', 10_800n), highest: 99_999n });
    expect(await check(position('T1', 5n), 0n, 100)).toBe(10_800n);
    expect(await check(position('T1', 5n), 20_000n, 100)).toBe(20_000n);
    expect(state.highestReads).toBe(0);
  });

  it('checks again when the marker names another topic (the topic was created anew)', async () => {
    const { check, state } = deps({ marker: checkedMarker('T1', 10_800n), highest: 30_000n });
    expect(await check(position('T2', 0n), 10_800n, 100)).toBe(31_000n);
    expect(state.marker).toBe(checkedMarker('T2', 31_000n));
  });

  it('marks nothing when reading the stored ids fails, so the next attempt checks again', async () => {
    const { check, state } = deps({ highestStored: () => Promise.reject(new Error('ClickHouse down')) });
    await expect(check(position('T1', 0n), 0n, 100)).rejects.toThrow('ClickHouse down');
    expect(state.marker).toBeNull();
  });
});
