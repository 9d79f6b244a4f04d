/**
 * worker/insert-pieces.ts: a batch whose insert times out is inserted in halves, each under its own
 * token and in order, down to single events, until every event is stored; any other failure
 * retries the piece as it is. The writer stands in for ClickHouse here; the real 18.16 doing it is
 * test/scale-out/clickhouse-repartition.scale-out.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { ClickHouseEventWriter } from '../../../shared/backends/clickhouse/writer.js';
import { exampleEventRecord } from '../../../shared/events/schema.js';
import { RetryAborted } from '../../../worker/backoff.js';
import { batchToken, type BufferedMessage } from '../../../worker/batch.js';
import { insertInPieces, type PieceOptions } from '../../../worker/insert-pieces.js';

type Encoded = ReturnType<ClickHouseEventWriter['encode']>;

function messages(n: number, poison: readonly number[] = []): BufferedMessage[] {
  return Array.from({ length: n }, (_, i) => ({
    partition: 0,
    offset: BigInt(100 + i),
    arrivedAt: 0,
    timestamp: '1',
    decoded: poison.includes(i) ? null : { id: BigInt(i + 1), event: exampleEventRecord() },
  }));
}

/**
 * A writer that refuses its first `down` inserts as a server that is down would, then times out
 * every insert of more than `limit` rows, and records what it stored.
 */
class FakeWriter {
  readonly stored: { ids: bigint[]; token: string | null }[] = [];
  private readonly ids = new WeakMap<Encoded, bigint[]>();
  constructor(
    private readonly limit: number,
    private readonly error: () => Error,
    private down = 0,
  ) {}
  encode(events: readonly { id: bigint }[]): Encoded {
    const batch: Encoded = { format: 'TabSeparated', rows: events.length, groups: [] };
    this.ids.set(batch, events.map((e) => e.id));
    return batch;
  }
  insert(batch: Encoded, token: string | null = null): Promise<void> {
    if (this.down-- > 0) return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:8123'));
    if (batch.rows > this.limit) return Promise.reject(this.error());
    this.stored.push({ ids: this.ids.get(batch)!, token });
    return Promise.resolve();
  }
}

function options(writer: FakeWriter, over: Partial<PieceOptions> = {}) {
  const failures: { attempt: number; rows: number; split: boolean }[] = [];
  const stored: number[] = [];
  const o: PieceOptions = {
    writer,
    tokenOf: (piece) => batchToken('t', 0, piece),
    backoff: { initialMs: 1, maxMs: 2 },
    shouldStop: () => false,
    onFailure: (_err, { attempt, rows, split }) => failures.push({ attempt, rows, split }),
    onStored: (rows) => stored.push(rows),
    ...over,
  };
  return { o, failures, stored };
}

const timeout = () => new Error('Timeout error.');

describe('insertInPieces', () => {
  it('stores a batch that times out whole as halves, then quarters..., every event once and in order', async () => {
    const writer = new FakeWriter(3, timeout);
    const batch = messages(10);
    const { o, failures, stored } = options(writer);
    await insertInPieces(batch, o);
    expect(writer.stored.flatMap((s) => s.ids)).toEqual(batch.map((m) => m.decoded!.id));
    expect(stored).toEqual([3, 2, 3, 2]);
    // 10 fails, its first half (5) fails, 3 and 2 go in; the second half (5) fails, 3 and 2 go in.
    expect(failures.map((f) => [f.rows, f.split])).toEqual([
      [10, true],
      [5, true],
      [5, true],
    ]);
    // Each piece under the token of its own messages: the same piece read again gets the same one.
    expect(writer.stored.map((s) => s.token)).toEqual([
      batchToken('t', 0, batch.slice(0, 3)),
      batchToken('t', 0, batch.slice(3, 5)),
      batchToken('t', 0, batch.slice(5, 8)),
      batchToken('t', 0, batch.slice(8, 10)),
    ]);
  });

  it('goes down to single events when only one at a time gets through', async () => {
    const writer = new FakeWriter(1, timeout);
    const batch = messages(7);
    await insertInPieces(batch, options(writer).o);
    expect(writer.stored.map((s) => s.ids)).toEqual(batch.map((m) => [m.decoded!.id]));
  });

  it('halves a batch four times at most (a sixteenth), then retries that piece as it is', async () => {
    // A server that times out whatever the size: splitting further would only multiply inserts.
    const writer = new FakeWriter(0, timeout);
    let attempts = 0;
    const { o, failures } = options(writer, { shouldStop: () => ++attempts > 8 });
    await expect(insertInPieces(messages(160), o)).rejects.toBeInstanceOf(RetryAborted);
    expect(failures.map((f) => [f.rows, f.split])).toEqual([
      [160, true],
      [80, true],
      [40, true],
      [20, true],
      [10, false],
      [10, false],
      [10, false],
      [10, false],
    ]);
  });

  it('retries any other failure as it is, without splitting, until it works', async () => {
    const writer = new FakeWriter(100, timeout, 3);
    const { o, failures } = options(writer);
    await insertInPieces(messages(10), o);
    expect(writer.stored.map((s) => s.ids.length)).toEqual([10]);
    expect(failures.map((f) => [f.attempt, f.rows, f.split])).toEqual([
      [1, 10, false],
      [2, 10, false],
      [3, 10, false],
    ]);
  });

  it('skips pieces of poison messages only, and splits around them', async () => {
    const writer = new FakeWriter(2, timeout);
    const batch = messages(6, [0, 1, 2]);
    await insertInPieces(batch, options(writer).o);
    expect(writer.stored.flatMap((s) => s.ids)).toEqual([4n, 5n, 6n]);
    const nothing = new FakeWriter(0, timeout);
    await insertInPieces(messages(3, [0, 1, 2]), options(nothing).o);
    expect(nothing.stored).toEqual([]);
  });

  it('gives up when told to stop, with the last error', async () => {
    const writer = new FakeWriter(0, timeout);
    let calls = 0;
    const { o } = options(writer, { shouldStop: () => ++calls > 3 });
    const err = await insertInPieces(messages(4), o).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RetryAborted);
    expect(String((err as RetryAborted).lastError)).toMatch(/Timeout error/);
    expect(writer.stored).toEqual([]);
  });
});
