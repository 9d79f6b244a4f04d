/**
 * worker/loader.ts on fakes of ClickHouse (the writer), the last-report store, the poison store and
 * the consumer's commit: how messages are batched per partition (rows, the offset grid, time), that
 * an offset is committed only after its batch, its last reports and its poison are stored, that a
 * failing insert is retried and holds the commit back, that a full buffer pauses reading, and what
 * a rejoin, a drain and an abort do. The real ClickHouse and Kafka doing it:
 * test/scale-out/worker*.scale-out.test.ts and test/faults/.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ConsumedMessage } from '../../../shared/backends/kafka/fetcher.js';
import type { LastReportUpdate } from '../../../shared/backends/scale-out-types.js';
import type { PoisonMessage } from '../../../shared/backends/types.js';
import type { ClickHouseEventWriter } from '../../../shared/backends/clickhouse/writer.js';
import { exampleEventRecord } from '../../../shared/events/schema.js';
import { encodeEvent } from '../../../shared/events/wire.js';
import { Loader } from '../../../worker/loader.js';
import type { LoaderOptions } from '../../../worker/loader-types.js';
import { sleep, waitFor } from '../../helpers/wait.js';

type Encoded = ReturnType<ClickHouseEventWriter['encode']>;
type Offsets = { topic: string; partition: number; offset: string }[];

/** A gate a fake holds its calls at until the test opens it. */
class Gate {
  private opened: Promise<void> = Promise.resolve();
  private release: () => void = () => undefined;
  close(): void {
    this.opened = new Promise((resolve) => (this.release = resolve));
  }
  open(): void {
    this.release();
  }
  pass(): Promise<void> {
    return this.opened;
  }
}

/** ClickHouse as the loader sees it: stores what it is given, unless told to refuse, or to wait (per partition). */
class FakeWriter {
  readonly stored: { partition: number; ids: bigint[]; token: string | null }[] = [];
  failures = 0;
  private readonly gates = new Map<number, Gate>();
  private readonly encoded = new WeakMap<Encoded, bigint[]>();
  gate(partition: number): Gate {
    let gate = this.gates.get(partition);
    if (gate === undefined) this.gates.set(partition, (gate = new Gate()));
    return gate;
  }
  encode(events: readonly { id: bigint }[]): Encoded {
    const batch: Encoded = { format: 'TabSeparated', rows: events.length, groups: [] };
    this.encoded.set(batch, events.map((e) => e.id));
    return batch;
  }
  async insert(batch: Encoded, token: string | null = null): Promise<void> {
    // The token names the partition: events:<partition>:<first>-<last>@<timestamp>.
    const partition = Number(token?.split(':')[1]);
    await this.gate(partition).pass();
    if (this.failures > 0) {
      this.failures--;
      throw new Error('connect ECONNREFUSED 127.0.0.1:8123');
    }
    this.stored.push({ partition, ids: this.encoded.get(batch)!, token });
  }
  ids(partition?: number): bigint[] {
    return this.stored.filter((s) => partition === undefined || s.partition === partition).flatMap((s) => s.ids);
  }
}

/** Event messages: id = offset + 1, one vehicle per `vehicles` in turn, later offsets later events. */
function messages(first: number, count: number, vehicles = 1): ConsumedMessage[] {
  return Array.from({ length: count }, (_, i) => {
    const offset = first + i;
    const event = { ...exampleEventRecord(), dominio: `V${offset % vehicles}`, eventTime: { epochMs: 1_000_000 + offset, subMsTicks: 0 } };
    return { offset: BigInt(offset), timestamp: 1_700_000_000_000n, key: null, value: encodeEvent(BigInt(offset + 1), event) };
  });
}

const POISON: ConsumedMessage = { offset: 0n, timestamp: 1n, key: Buffer.from('k'), value: Buffer.from('not an event') };

const loaders: Loader[] = [];
afterEach(() => {
  for (const l of loaders.splice(0)) l.abort();
});

function setUp(over: Partial<LoaderOptions> = {}) {
  const writer = new FakeWriter();
  const commits: Offsets[] = [];
  const reports: LastReportUpdate[][] = [];
  const poisoned: PoisonMessage[] = [];
  const warnings: string[] = [];
  const reportGate = new Gate();
  let reportFailures = 0;
  const options: LoaderOptions = {
    topic: 'events',
    batchRows: 4,
    batchMs: 40,
    maxBuffered: 1_000,
    backoff: { initialMs: 1, maxMs: 5 },
    lastReportTimeoutMs: 1_000,
    logger: { info: () => undefined, warn: (_, message) => warnings.push(message), error: (_, message) => warnings.push(message) },
    lastReports: {
      record: async (updates) => {
        await reportGate.pass();
        if (reportFailures > 0) {
          reportFailures--;
          throw new Error('Redis is unavailable');
        }
        reports.push([...updates]);
      },
    },
    poison: {
      add: (items) => {
        poisoned.push(...items);
        return Promise.resolve();
      },
    },
    commit: (offsets) => {
      commits.push(offsets);
      return Promise.resolve();
    },
    ...over,
  };
  const loader = new Loader(options, writer);
  loaders.push(loader);
  loader.onGroupJoin([0, 1]);
  const committed = (partition: number): string[] => commits.flat().filter((o) => o.partition === partition).map((o) => o.offset);
  return { loader, writer, commits, committed, reports, poisoned, warnings, reportGate, failReports: (n: number) => (reportFailures = n), stats: loader.stats };
}

const always = () => true;

describe('Loader', () => {
  it('inserts a partition in batches cut on the grid of batchRows offsets, then commits each batch, in order', async () => {
    const t = setUp();
    // From offset 2 with batchRows 4: the first batch ends at the grid's 4, then 4..7, then 8..9 when batchMs passes.
    expect(await t.loader.onBatch(0, messages(2, 8), always)).toBe(8);
    await waitFor('every message stored', () => t.writer.ids().length === 8);
    expect(t.writer.stored.map((s) => s.ids)).toEqual([[3n, 4n], [5n, 6n, 7n, 8n], [9n, 10n]]);
    expect(t.writer.stored.map((s) => s.token)).toEqual([
      'events:0:2-3@1700000000000',
      'events:0:4-7@1700000000000',
      'events:0:8-9@1700000000000',
    ]);
    await waitFor('the last commit', () => t.committed(0).at(-1) === '10');
    expect(t.committed(0)).toEqual(['4', '8', '10']);
    expect(t.stats).toMatchObject({ insertedRows: 8, batches: 3, buffered: 0, maxBatchSize: 4 });
  });

  it('ends a batch on the grid even after one was cut short by time, so batches read again are the same', async () => {
    const t = setUp({ batchMs: 30 });
    t.writer.gate(0).close();
    // 0..1 go by time and wait at ClickHouse; 2..9 arrive meanwhile and wait in the buffer.
    await t.loader.onBatch(0, messages(0, 2), always);
    await waitFor('0..1 in flight', () => t.stats.inFlight === 1);
    await t.loader.onBatch(0, messages(2, 8), always);
    t.writer.gate(0).open();
    await waitFor('all stored', () => t.writer.ids().length === 10);
    expect(t.writer.stored.map((s) => s.ids)).toEqual([[1n, 2n], [3n, 4n], [5n, 6n, 7n, 8n], [9n, 10n]]);
  });

  it('gives a batch read again after a rejoin the token it had the first time (ClickHouse drops the repeat)', async () => {
    const t = setUp();
    await t.loader.onBatch(0, messages(4, 4), always);
    await waitFor('stored', () => t.writer.stored.length === 1);
    t.loader.onGroupJoin([0, 1]);
    await t.loader.onBatch(0, messages(4, 4), always);
    await waitFor('stored again', () => t.writer.stored.length === 2);
    expect(t.writer.stored[1]!.token).toBe(t.writer.stored[0]!.token);
  });

  it('waits up to batchMs for a batch that is not full', async () => {
    const t = setUp({ batchMs: 150 });
    await t.loader.onBatch(0, messages(0, 2), always);
    await sleep(60);
    expect(t.writer.stored).toEqual([]);
    await waitFor('the batch after batchMs', () => t.writer.stored.length === 1);
    expect(t.writer.ids()).toEqual([1n, 2n]);
  });

  it('retries a failed insert and commits nothing until it is stored', async () => {
    const t = setUp();
    t.writer.failures = Infinity;
    await t.loader.onBatch(0, messages(0, 4), always);
    await waitFor('the insert failing', () => t.stats.insertRetries >= 2 && t.loader.insertsFailing);
    expect(t.loader.insertsFailingSince).toBeGreaterThan(0);
    expect(t.commits).toEqual([]);
    t.writer.failures = 0;
    await waitFor('stored once ClickHouse answers', () => t.writer.stored.length === 1);
    await waitFor('committed', () => t.committed(0).length === 1);
    expect(t.writer.ids()).toEqual([1n, 2n, 3n, 4n]);
    expect(t.loader.insertsFailing).toBe(false);
    expect(t.loader.insertsFailingSince).toBeNull();
    expect(t.warnings).toContain('ClickHouse insert failed; retrying (offsets not committed)');
  });

  it('records the latest report of each vehicle before committing, retried until recorded', async () => {
    const t = setUp();
    t.failReports(2);
    await t.loader.onBatch(0, messages(0, 4, 2), always);
    await waitFor('the reports recorded', () => t.reports.length === 1);
    // Vehicles V0 (offsets 0, 2) and V1 (1, 3): each at its latest event.
    expect(t.reports[0]!.map((u) => [u.dominio, u.at.epochMs]).sort()).toEqual([
      ['V0', 1_000_002],
      ['V1', 1_000_003],
    ]);
    await waitFor('committed', () => t.committed(0).length === 1);
    expect(t.stats.lastReportRetries).toBe(2);
    expect(t.loader.reportsFailing).toBe(false);
  });

  it('holds the commit while the last reports are not recorded', async () => {
    const t = setUp();
    t.reportGate.close();
    await t.loader.onBatch(0, messages(0, 4), always);
    await waitFor('inserted', () => t.writer.stored.length === 1);
    await sleep(50);
    expect(t.commits).toEqual([]);
    t.reportGate.open();
    await waitFor('committed', () => t.committed(0).length === 1);
  });

  it('sets a message that cannot be decoded aside with its reason, stores the rest and commits past it', async () => {
    const t = setUp();
    await t.loader.onBatch(1, [POISON, ...messages(1, 3)], always);
    await waitFor('committed', () => t.committed(1).length === 1);
    expect(t.writer.ids(1)).toEqual([2n, 3n, 4n]);
    expect(t.poisoned).toHaveLength(1);
    expect(t.poisoned[0]).toMatchObject({ topic: 'events', partition: 1, offset: '0', key: 'k' });
    expect(t.poisoned[0]!.reason).not.toBe('');
    expect(t.committed(1)).toEqual(['4']);
    expect(t.stats.poison).toBe(1);
  });

  it('inserts partitions apart: a slow insert of one does not hold the other', async () => {
    const t = setUp();
    t.writer.gate(0).close();
    await t.loader.onBatch(0, messages(0, 4), always);
    await t.loader.onBatch(1, messages(0, 4), always);
    await waitFor('partition 1 committed', () => t.committed(1).length === 1);
    expect(t.stats.inFlight).toBe(1);
    expect(t.committed(0)).toEqual([]);
    t.writer.gate(0).open();
    await waitFor('partition 0 committed', () => t.committed(0).length === 1);
  });

  it('pauses reading at maxBuffered until a batch is taken for insert', async () => {
    const t = setUp({ maxBuffered: 4 });
    t.writer.gate(0).close();
    // 4 go in flight, 4 fill the buffer, and the 9th waits for room.
    const taking = t.loader.onBatch(0, messages(0, 12), always);
    await waitFor('paused', () => t.stats.paused);
    expect(t.stats.buffered).toBe(4);
    t.writer.gate(0).open();
    expect(await taking).toBe(12);
    expect(t.stats.paused).toBe(false);
    await waitFor('all stored', () => t.writer.ids().length === 12);
  });

  it('stops taking a fetched batch that is no longer current (the group was joined again)', async () => {
    const t = setUp({ maxBuffered: 2, batchRows: 100, batchMs: 10_000 });
    let current = true;
    const taking = t.loader.onBatch(0, messages(0, 5), () => current);
    await waitFor('paused', () => t.stats.paused);
    current = false;
    // The consumer reads the rest again from the committed offset.
    expect(await taking).toBe(2);
  });

  it('drops what is buffered at a rejoin (it is read again) and commits nothing of a partition no longer assigned', async () => {
    const t = setUp({ batchRows: 100, batchMs: 10_000 });
    await t.loader.onBatch(0, messages(0, 3), always);
    await t.loader.onBatch(1, messages(0, 3), always);
    expect(t.stats.buffered).toBe(6);
    t.loader.onGroupJoin([1]);
    expect(t.stats.buffered).toBe(0);
    await t.loader.onBatch(1, messages(0, 2), always);
    expect(await t.loader.drain(1_000)).toBe(0);
    expect(t.writer.ids(1)).toEqual([1n, 2n]);
    expect(t.writer.ids(0)).toEqual([]);
    expect(t.committed(0)).toEqual([]);
  });

  it('drains what is buffered without waiting for batchMs, and stops reading after', async () => {
    const t = setUp({ batchMs: 60_000 });
    await t.loader.onBatch(0, messages(0, 6), always);
    await t.loader.onBatch(1, messages(0, 1), always);
    expect(await t.loader.drain(5_000)).toBe(0);
    expect(t.writer.ids(0)).toEqual([1n, 2n, 3n, 4n, 5n, 6n]);
    expect(t.committed(0).at(-1)).toBe('6');
    expect(t.committed(1)).toEqual(['1']);
    expect(t.loader.running).toBe(false);
    expect(await t.loader.onBatch(0, messages(6, 2), always)).toBe(0);
  });

  it('gives up a drain after drainMs when ClickHouse does not answer, and answers what was left', async () => {
    const t = setUp({ batchRows: 2, batchMs: 60_000 });
    t.writer.gate(0).close();
    await t.loader.onBatch(0, messages(0, 6), always);
    const started = Date.now();
    // One batch of 2 is in flight at the gate; the other 4 are still buffered.
    expect(await t.loader.drain(100)).toBe(4);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(t.commits).toEqual([]);
    t.writer.gate(0).open();
  });

  it('after an abort stores and commits nothing more', async () => {
    const t = setUp();
    t.writer.failures = 1_000;
    await t.loader.onBatch(0, messages(0, 4), always);
    await waitFor('failing', () => t.stats.insertRetries >= 1);
    t.loader.abort();
    t.writer.failures = 0;
    await sleep(50);
    expect(t.writer.stored).toEqual([]);
    expect(t.commits).toEqual([]);
    expect(t.stats.buffered).toBe(0);
    expect(await t.loader.onBatch(0, messages(4, 1), always)).toBe(0);
  });
});
