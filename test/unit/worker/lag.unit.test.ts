/**
 * The worker's lag monitor on a fake admin client (the two calls groupLag makes): what a partition's
 * lag is, that a failure keeps the last figures and is logged once, one measurement at a time, and
 * the interval it measures on. Fake timers, so the intervals take no real time.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KafkaAdmin, PartitionOffsets } from '../../../shared/backends/kafka/client.js';
import type { WorkerLogger } from '../../../worker/log.js';
import { LagMonitor } from '../../../worker/lag.js';

interface Watermarks {
  offsets: PartitionOffsets[];
  committed: Map<number, bigint>;
}

/** Answers offsets() and committed() from `next`, which a test sets: figures, a failure, or a hang. */
class FakeAdmin {
  next: () => Promise<Watermarks> = () => Promise.resolve({ offsets: [], committed: new Map() });
  readonly asked: { offsets: string[]; committed: [string, string][] } = { offsets: [], committed: [] };

  async offsets(topic: string): Promise<PartitionOffsets[]> {
    this.asked.offsets.push(topic);
    return (await this.next()).offsets;
  }

  async committed(groupId: string, topic: string): Promise<Map<number, bigint>> {
    this.asked.committed.push([groupId, topic]);
    return (await this.next()).committed;
  }

  /** Measurements started (each asks offsets once). */
  get measurements(): number {
    return this.asked.offsets.length;
  }
}

interface Line {
  level: 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string;
}

function setup(intervalMs = 1000): { monitor: LagMonitor; admin: FakeAdmin; lines: Line[]; reported: [number, number][] } {
  const admin = new FakeAdmin();
  const lines: Line[] = [];
  const logger: WorkerLogger = {
    info: (fields, message) => lines.push({ level: 'info', fields, message }),
    warn: (fields, message) => lines.push({ level: 'warn', fields, message }),
    error: (fields, message) => lines.push({ level: 'error', fields, message }),
  };
  const reported: [number, number][] = [];
  // LagMonitor only reaches the admin client through groupLag, which calls these two methods.
  const monitor = new LagMonitor(admin as unknown as KafkaAdmin, {
    topic: 'events',
    groupId: 'loader',
    intervalMs,
    logger,
    report: (partition, lag) => reported.push([partition, lag]),
  });
  return { monitor, admin, lines, reported };
}

const watermarks = (offsets: [number, number][], committed: [number, number][] = []): Watermarks => ({
  offsets: offsets.map(([low, high], partition) => ({ partition, low: BigInt(low), high: BigInt(high) })),
  committed: new Map(committed.map(([p, o]) => [p, BigInt(o)])),
});

afterEach(() => {
  vi.useRealTimers();
});

describe('LagMonitor', () => {
  it("measures each partition's lag from the committed offset, or from the oldest retained one before the first commit; each measurement replaces the last", async () => {
    const { monitor, admin, reported } = setup();
    admin.next = () =>
      Promise.resolve(
        watermarks(
          [
            [0, 100], // committed 40: 60 behind
            [10, 50], // nothing committed yet: everything retained is behind
            [30, 80], // committed 20, but retention dropped up to 30: only what is left counts
            [0, 5], // committed past the high watermark read a moment earlier: none, never negative
          ],
          [
            [0, 40],
            [2, 20],
            [3, 7],
          ],
        ),
      );
    await monitor.measure();
    expect(monitor.lag).toEqual({ 0: 60, 1: 40, 2: 50, 3: 0 });
    expect(reported).toEqual([
      [0, 60],
      [1, 40],
      [2, 50],
      [3, 0],
    ]);
    expect(admin.asked).toEqual({ offsets: ['events'], committed: [['loader', 'events']] });

    // The next measurement replaces the figures: a topic recreated with fewer partitions drops the rest.
    admin.next = () => Promise.resolve(watermarks([[0, 1]]));
    await monitor.measure();
    expect(monitor.lag).toEqual({ 0: 1 });
  });

  it('a failed measurement keeps the last figures and is logged once, until one works again', async () => {
    const { monitor, admin, lines, reported } = setup();
    admin.next = () => Promise.resolve(watermarks([[0, 10]]));
    await monitor.measure();
    expect(monitor.lag).toEqual({ 0: 10 });

    admin.next = () => Promise.reject(new Error('Kafka listOffsets did not answer'));
    await monitor.measure();
    await monitor.measure();
    expect(monitor.lag).toEqual({ 0: 10 });
    expect(reported).toEqual([[0, 10]]);
    expect(lines).toEqual([
      { level: 'warn', fields: { err: 'Kafka listOffsets did not answer' }, message: 'could not measure consumer lag (logged once until it works again)' },
    ]);

    admin.next = () => Promise.resolve(watermarks([[0, 25]], [[0, 5]]));
    await monitor.measure();
    await monitor.measure();
    expect(monitor.lag).toEqual({ 0: 20 });
    expect(lines.slice(1)).toEqual([{ level: 'info', fields: { lag: { 0: 20 } }, message: 'consumer lag measured again' }]);

    // A new run of failures is logged again.
    admin.next = () => Promise.reject(new Error('broker down'));
    await monitor.measure();
    expect(lines.slice(2)).toEqual([expect.objectContaining({ level: 'warn', fields: { err: 'broker down' } })]);
  });

  it('measures at start, then every intervalMs until stop()', async () => {
    vi.useFakeTimers();
    const { monitor, admin } = setup(1000);
    monitor.start();
    monitor.start(); // a second start arms no second timer
    await vi.advanceTimersByTimeAsync(0);
    expect(admin.measurements).toBe(1);
    await vi.advanceTimersByTimeAsync(999);
    expect(admin.measurements).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(admin.measurements).toBe(2);
    await vi.advanceTimersByTimeAsync(2000);
    expect(admin.measurements).toBe(4);

    monitor.stop();
    await vi.advanceTimersByTimeAsync(5000);
    expect(admin.measurements).toBe(4);
    // Stopped, it can start again.
    monitor.start();
    await vi.advanceTimersByTimeAsync(1000);
    expect(admin.measurements).toBe(6);
    monitor.stop();
  });

  it('takes one measurement at a time: intervals that pass while one hangs start none', async () => {
    vi.useFakeTimers();
    const { monitor, admin } = setup(1000);
    let answer: (w: Watermarks) => void = () => {};
    const hanging = new Promise<Watermarks>((resolve) => (answer = resolve));
    admin.next = () => hanging;
    monitor.start();
    await vi.advanceTimersByTimeAsync(3500);
    await monitor.measure();
    expect(admin.measurements).toBe(1);

    answer(watermarks([[0, 3]]));
    await vi.advanceTimersByTimeAsync(0);
    expect(monitor.lag).toEqual({ 0: 3 });
    await vi.advanceTimersByTimeAsync(500);
    expect(admin.measurements).toBe(2);
    monitor.stop();
  });

  it('measures again after a failure (the one-at-a-time guard is released)', async () => {
    const { monitor, admin } = setup();
    admin.next = () => Promise.reject(new Error('refused'));
    await monitor.measure();
    admin.next = () => Promise.resolve(watermarks([[0, 4]]));
    await monitor.measure();
    expect(admin.measurements).toBe(2);
    expect(monitor.lag).toEqual({ 0: 4 });
  });

  it('its timer does not keep the process alive', () => {
    const { monitor } = setup(60_000);
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    monitor.start();
    const after = timers();
    monitor.stop();
    expect(after).toBe(before);
  });
});
