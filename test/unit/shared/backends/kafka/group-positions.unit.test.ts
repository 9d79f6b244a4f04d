/**
 * Where a consumer group reads each partition from (the worker's lag, the id floor's scan of what
 * the worker has not stored): its commit, never below the log start, the whole log without a group.
 */
import { describe, expect, it } from 'vitest';
import { groupLag, unreadRanges } from '../../../../../shared/backends/kafka/group-positions.js';

/** Partition p: [low, high] retained, and the group's commit if any. */
function admin(partitions: [low: number, high: number, committed?: number][]) {
  const asked: string[] = [];
  return {
    asked,
    offsets: (topic: string) => {
      asked.push(`offsets ${topic}`);
      return Promise.resolve(partitions.map(([low, high], partition) => ({ partition, low: BigInt(low), high: BigInt(high) })));
    },
    committed: (groupId: string, topic: string) => {
      asked.push(`committed ${groupId} ${topic}`);
      return Promise.resolve(new Map(partitions.flatMap(([, , c], p) => (c === undefined ? [] : [[p, BigInt(c)] as const]))));
    },
  };
}

describe('unreadRanges', () => {
  it('reads from the commit; from the log start without one or when retention passed it', async () => {
    const kafka = admin([
      [0, 10, 4], // committed inside the log
      [5, 10], // no commit
      [7, 10, 3], // commit below the log start (deleted by retention)
      [0, 10, 10], // everything read
    ]);
    expect(await unreadRanges(kafka, 'events', 'loader')).toEqual([
      { partition: 0, from: 4n, high: 10n },
      { partition: 1, from: 5n, high: 10n },
      { partition: 2, from: 7n, high: 10n },
      { partition: 3, from: 10n, high: 10n },
    ]);
    expect(kafka.asked).toEqual(['offsets events', 'committed loader events']);
  });

  it('without a group, the whole retained log, and no group is asked', async () => {
    const kafka = admin([[3, 8, 6]]);
    expect(await unreadRanges(kafka, 'events', null)).toEqual([{ partition: 0, from: 3n, high: 8n }]);
    expect(kafka.asked).toEqual(['offsets events']);
  });

  it('groupLag counts what is left of each range', async () => {
    expect(await groupLag(admin([[0, 10, 4], [7, 10, 3], [0, 10, 10]]), 'events', 'loader')).toEqual(new Map([[0, 6], [1, 3], [2, 0]]));
  });
});
