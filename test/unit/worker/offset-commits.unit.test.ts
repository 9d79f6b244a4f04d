/**
 * The loader's last step (worker/offset-commits.ts) on a fake commit: what is committed, that a
 * partition's offset never goes back, that nothing is committed for a partition no longer ours, and
 * that a failed commit with no batch after it is tried again by itself, as a flush of its own.
 */
import { describe, expect, it } from 'vitest';
import type { LoaderStats } from '../../../worker/loader-types.js';
import { OffsetCommits, type PartitionOffsets } from '../../../worker/offset-commits.js';
import { sleep } from '../../helpers/wait.js';

type Offsets = { topic: string; partition: number; offset: string }[];

function setUp(options: { assigned?: number[]; running?: () => boolean } = {}) {
  const commits: Offsets[] = [];
  const warnings: string[] = [];
  const flushes: number[] = [];
  let failNext = 0;
  const stats = { commits: 0, commitFailures: 0, committed: {} } as unknown as LoaderStats;
  const assigned = new Set(options.assigned ?? [0, 1]);
  const offsets = new OffsetCommits({
    topic: 'events',
    commit: (o) => {
      if (failNext > 0) {
        failNext--;
        return Promise.reject(new Error('NOT_COORDINATOR'));
      }
      commits.push(o);
      return Promise.resolve();
    },
    logger: { info: () => undefined, warn: (_, message) => warnings.push(message), error: () => undefined },
    stats,
    retryAfterMs: 20,
    isAssigned: (p) => assigned.has(p),
    isRunning: options.running ?? (() => true),
    runAsFlush: (partition, work) => {
      flushes.push(partition);
      void work();
      return true;
    },
  });
  const partition = (n: number): PartitionOffsets => ({ partition: n, pendingCommit: null, commitTimer: null });
  return { offsets, commits, warnings, flushes, stats, partition, assigned, failTimes: (n: number) => (failNext = n) };
}

describe('OffsetCommits', () => {
  it('commits the next offset to read, and counts it', async () => {
    const t = setUp();
    const q = t.partition(1);
    await t.offsets.stored(q, 42n);
    expect(t.commits).toEqual([[{ topic: 'events', partition: 1, offset: '42' }]]);
    expect(t.stats.commits).toBe(1);
    expect(t.stats.committed[1]).toBe('42');
    expect(q.pendingCommit).toBeNull();
  });

  it('never commits an offset lower than one still pending', async () => {
    const t = setUp();
    const q = t.partition(0);
    t.failTimes(1);
    await t.offsets.stored(q, 100n);
    expect(q.pendingCommit).toBe(100n);
    await t.offsets.stored(q, 60n); // an older batch's end: the pending 100 is committed, not 60
    expect(t.commits).toEqual([[{ topic: 'events', partition: 0, offset: '100' }]]);
    t.offsets.cancelRetry(q);
  });

  it('commits nothing for a partition no longer assigned, and forgets its offset', async () => {
    const t = setUp({ assigned: [0] });
    const q = t.partition(3);
    await t.offsets.stored(q, 7n);
    expect(t.commits).toEqual([]);
    expect(q.pendingCommit).toBeNull();
  });

  it('a failed commit is counted, logged once, and retried by itself as a flush when no batch follows', async () => {
    const t = setUp();
    const q = t.partition(1);
    t.failTimes(2);
    await t.offsets.stored(q, 9n);
    expect(t.stats.commitFailures).toBe(1);
    expect(t.warnings).toEqual(['offset commit failed; retried with the next batch']);
    expect(q.commitTimer).not.toBeNull();
    // First retry fails again (re-armed), the second succeeds.
    for (let i = 0; i < 50 && t.commits.length === 0; i++) await sleep(10);
    expect(t.flushes).toEqual([1, 1]);
    expect(t.commits).toEqual([[{ topic: 'events', partition: 1, offset: '9' }]]);
    expect(t.stats.commitFailures).toBe(2);
    expect(q.pendingCommit).toBeNull();
  });

  it('does not retry once the worker stops, nor after cancelRetry', async () => {
    let running = true;
    const t = setUp({ running: () => running });
    const stopped = t.partition(0);
    t.failTimes(1);
    await t.offsets.stored(stopped, 5n);
    running = false;
    const cancelled = t.partition(1);
    running = true;
    t.failTimes(1);
    await t.offsets.stored(cancelled, 6n);
    t.offsets.cancelRetry(cancelled);
    running = false;
    await sleep(60);
    expect(t.flushes).toEqual([]);
    expect(t.commits).toEqual([]);
  });
});
