/**
 * The send queue's rules without a broker: a fake RecordSender that the test answers (resolves,
 * rejects with errors shaped as @platformatic/kafka's, or never answers), and fake timers, so the
 * linger, the leadership pauses and the deadlines are exact and the file takes no real time.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isKafkaTimeout, isLeadershipError, isMessageError } from '../../../../../shared/backends/kafka/errors.js';
import { KeyPartitioner } from '../../../../../shared/backends/kafka/partitioner.js';
import type { RecordSender, SendRecord } from '../../../../../shared/backends/kafka/producer.js';
import { SendQueue, type Call } from '../../../../../shared/backends/kafka/send-queue.js';

type Options = ConstructorParameters<typeof SendQueue>[2];
type Queued = Parameters<SendQueue['enqueue']>[0];

/*
 * Stand-ins for @platformatic/kafka's errors, with the fields errors.ts reads (code, apiId, the
 * gathered `errors`): importing the library costs more than a second per test file, and
 * errors.unit.test.ts proves the classification on its real classes. The first test below checks
 * that these classify as the real ones do.
 */
class KafkaError extends Error {
  constructor(
    readonly code: string,
    message: string,
    fields: Record<string, unknown> = {},
  ) {
    super(message);
    Object.assign(this, fields);
  }
}
/** ResponseError: a MultipleErrors (an AggregateError) of one ProtocolError per refused partition. */
const produceError = (apiId: string): AggregateError =>
  Object.assign(
    new AggregateError(
      [new KafkaError('PLT_KFK_PROTOCOL', `${apiId} refused`, { apiId, path: '/responses/0/partition_responses/0' })],
      'Received response with error while executing API Produce(v11)',
    ),
    { code: 'PLT_KFK_RESPONSE' },
  );
/** The library's MultipleErrors gathering a call's errors. */
const multipleErrors = (errors: Error[]): AggregateError => Object.assign(new AggregateError(errors, 'Produce failed.'), { code: 'PLT_KFK_MULTIPLE' });
const connectionClosed = (): KafkaError => new KafkaError('PLT_KFK_NETWORK', 'Connection closed', { canRetry: true });
/** The library's TimeoutError (it carries NetworkError's code). */
const requestTimedOut = (): KafkaError => new KafkaError('PLT_KFK_NETWORK', 'Request timed out', { canRetry: false });

interface Send {
  record: SendRecord;
  /** performance.now() when the queue called send(). */
  at: number;
  resolve(): void;
  reject(error: unknown): void;
}

/** A producer whose every send waits until the test answers it. */
class FakeSender implements RecordSender {
  readonly sends: Send[] = [];
  readonly timedOutSince: number[] = [];

  send(record: SendRecord): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.sends.push({ record, at: performance.now(), resolve: () => resolve(undefined), reject });
    });
  }

  disconnect(): Promise<void> {
    return Promise.resolve();
  }

  timedOut(since: number): void {
    this.timedOutSince.push(since);
  }

  /** The keys of each send, in the order the queue made them. */
  get keys(): string[][] {
    return this.sends.map((s) => s.record.messages.map((m) => m.key));
  }

  nth(i: number): Send {
    const s = this.sends[i];
    if (s === undefined) throw new Error(`no send #${i} (${this.sends.length} made)`);
    return s;
  }
}

interface LogLine {
  level: 'info' | 'warn' | 'error';
  fields: object;
  message: string;
}

class FakeLogger {
  readonly lines: LogLine[] = [];
  info(fields: object, message: string): void {
    this.lines.push({ level: 'info', fields, message });
  }
  warn(fields: object, message: string): void {
    this.lines.push({ level: 'warn', fields, message });
  }
  error(fields: object, message: string): void {
    this.lines.push({ level: 'error', fields, message });
  }
  at(level: LogLine['level']): LogLine[] {
    return this.lines.filter((l) => l.level === level);
  }
}

interface Harness {
  queue: SendQueue;
  sender: FakeSender;
  logger: FakeLogger;
  metrics: { batchSizes: number[]; publishSeconds: number[] };
  /**
   * What KafkaEventLog.publish does with one call: enqueue its events (key, partition, bytes) with
   * one deadline, then schedule.
   */
  append: (events: { key: string; partition: number; bytes?: number }[], deadlineMs?: number) => Appended;
}

interface Appended {
  call: Call;
  /** Whether the call has resolved (its `resolve` was called). */
  readonly done: boolean;
}

function harness(overrides: Partial<Options> = {}): Harness {
  const sender = new FakeSender();
  const logger = new FakeLogger();
  const metrics = { batchSizes: [] as number[], publishSeconds: [] as number[] };
  const options: Options = {
    topic: 'events',
    lingerMs: 0,
    batchEvents: 100,
    sendTimeoutMs: 1000,
    maxInFlightSends: 5,
    maxSendBytes: 1_000_000,
    failFastMs: 1000,
    logger,
    metrics: { batchSize: (n) => metrics.batchSizes.push(n), publishSeconds: (s) => metrics.publishSeconds.push(s) },
    ...overrides,
  };
  // Messages carry their partition already; the partitioner only gives the partition count.
  const queue = new SendQueue(sender, new KeyPartitioner('events', 8, () => 0), options);
  const append = (events: { key: string; partition: number; bytes?: number }[], deadlineMs = options.sendTimeoutMs): Appended => {
    const call: Call = { acked: new Array<boolean>(events.length).fill(false), remaining: 0, resolve: () => {} };
    let done = false;
    call.resolve = () => (done = true);
    const now = performance.now();
    events.forEach((e, index) => {
      const item: Queued = {
        message: { key: e.key, value: Buffer.from(e.key), partition: e.partition },
        bytes: e.bytes ?? 10,
        call,
        index,
        deadline: now + deadlineMs,
        queuedAt: now,
      };
      queue.enqueue(item);
      call.remaining++;
    });
    queue.schedule();
    return {
      call,
      get done() {
        return done;
      },
    };
  };
  return { queue, sender, logger, metrics, append };
}

/** Runs the due timers and the promise callbacks they start. */
async function tick(ms = 0): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
}

/** The call's per-event answer, now: a call still waiting fails the test instead of hanging it. */
async function answer(appended: Appended): Promise<boolean[]> {
  await tick();
  if (!appended.done) throw new Error('the call has not been answered');
  return appended.call.acked;
}

beforeEach(() => {
  // performance.now() is faked too (vitest fakes it by default): the queue's deadlines follow the clock.
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

it("the stand-in errors classify as the library's do", () => {
  expect(isLeadershipError(produceError('NOT_LEADER_OR_FOLLOWER'))).toBe(true);
  expect(isLeadershipError(multipleErrors([produceError('LEADER_NOT_AVAILABLE')]))).toBe(true);
  expect(isMessageError(produceError('MESSAGE_TOO_LARGE'))).toBe(true);
  expect(isKafkaTimeout(requestTimedOut())).toBe(true);
  const connection = connectionClosed();
  expect([isLeadershipError(connection), isMessageError(connection), isKafkaTimeout(connection)]).toEqual([false, false, false]);
  expect(isLeadershipError(produceError('MESSAGE_TOO_LARGE')) || isMessageError(produceError('NOT_LEADER_OR_FOLLOWER'))).toBe(false);
});

describe('SendQueue: batching', () => {
  it('waits lingerMs after the oldest message, then sends everything queued in queue order and acks every caller', async () => {
    const { sender, append, queue, metrics } = harness({ lingerMs: 20 });
    const a = append([
      { key: 'a0', partition: 0 },
      { key: 'a1', partition: 1 },
    ]);
    await tick(5);
    const b = append([{ key: 'b0', partition: 0 }]);
    await tick(14);
    expect(sender.sends).toHaveLength(0);
    await tick(1);
    expect(sender.keys).toEqual([['a0', 'a1', 'b0']]);
    expect(sender.nth(0).record.topic).toBe('events');
    expect(a.done || b.done).toBe(false);

    sender.nth(0).resolve();
    expect(await answer(a)).toEqual([true, true]);
    expect(await answer(b)).toEqual([true]);
    expect(queue.counters).toMatchObject({ sends: 1, events: 3, failedSends: 0, failedEvents: 0 });
    expect(queue.queued).toBe(0);
    expect(metrics.batchSizes).toEqual([3]);
    expect(metrics.publishSeconds).toHaveLength(1);
  });

  it('sends at once when batchEvents are queued, never more than batchEvents in one send', async () => {
    const { sender, append } = harness({ lingerMs: 50, batchEvents: 3 });
    append([0, 1, 2, 3, 4, 5, 6].map((p) => ({ key: `k${p}`, partition: p })));
    await tick();
    expect(sender.keys).toEqual([
      ['k0', 'k1', 'k2'],
      ['k3', 'k4', 'k5'],
    ]);
    // The last one, alone, lingers.
    await tick(49);
    expect(sender.sends).toHaveLength(2);
    await tick(1);
    expect(sender.keys[2]).toEqual(['k6']);
  });

  it('keeps a send within maxSendBytes, and sends a message larger than that alone', async () => {
    const { sender, append } = harness({ maxSendBytes: 100 });
    append([
      { key: 'a', partition: 0, bytes: 40 },
      { key: 'b', partition: 1, bytes: 40 },
      { key: 'c', partition: 2, bytes: 40 },
      { key: 'big', partition: 3, bytes: 150 },
      { key: 'd', partition: 4, bytes: 10 },
    ]);
    await tick();
    expect(sender.keys).toEqual([['a', 'b'], ['c'], ['big'], ['d']]);
  });

  it('close() sends what is queued without waiting for the linger', async () => {
    const { sender, append, queue } = harness({ lingerMs: 10_000 });
    append([{ key: 'a', partition: 0 }]);
    await tick(100);
    expect(sender.sends).toHaveLength(0);
    queue.close();
    expect(sender.keys).toEqual([['a']]);
  });
});

describe('SendQueue: ordering and bounds', () => {
  it("keeps one send per partition in flight: a partition's later messages wait for it, then leave in queue order", async () => {
    const { sender, append } = harness();
    const a = append([{ key: 'a', partition: 0 }]);
    const later = append([
      { key: 'b', partition: 0 },
      { key: 'c', partition: 1 },
      { key: 'd', partition: 0 },
    ]);
    await tick();
    // Partition 1 is free, so c goes alongside; b and d wait behind a.
    expect(sender.keys).toEqual([['a'], ['c']]);
    sender.nth(1).resolve();
    await tick();
    expect(sender.sends).toHaveLength(2);
    expect(later.done).toBe(false);

    sender.nth(0).resolve();
    expect(await answer(a)).toEqual([true]);
    await tick();
    expect(sender.keys[2]).toEqual(['b', 'd']);
    sender.nth(2).resolve();
    expect(await answer(later)).toEqual([true, true, true]);
  });

  it('has at most maxInFlightSends sends in flight; the next starts when one settles', async () => {
    const { sender, append, queue } = harness({ maxInFlightSends: 2, batchEvents: 1 });
    append([0, 1, 2].map((p) => ({ key: `k${p}`, partition: p })));
    // Time alone frees no slot (up to just before the deadline): only a settled send does.
    await tick(1000 - 1);
    expect(sender.keys).toEqual([['k0'], ['k1']]);
    expect(queue.queued).toBe(1);
    sender.nth(1).resolve();
    await tick();
    expect(sender.keys[2]).toEqual(['k2']);
    expect(queue.counters.peakSendsInFlight).toBe(2);
  });
});

describe('SendQueue: partition leadership moves', () => {
  it('sends a batch refused because leadership moved again after 100 ms, and acks its callers', async () => {
    const { sender, append, queue, logger } = harness();
    const a = append([
      { key: 'a0', partition: 0 },
      { key: 'a1', partition: 1 },
    ]);
    await tick();
    sender.nth(0).reject(produceError('NOT_LEADER_OR_FOLLOWER'));
    await tick(99);
    expect(sender.sends).toHaveLength(1);
    await tick(1);
    expect(sender.keys).toEqual([
      ['a0', 'a1'],
      ['a0', 'a1'],
    ]);
    sender.nth(1).resolve();
    expect(await answer(a)).toEqual([true, true]);
    expect(queue.counters).toMatchObject({ sends: 1, failedSends: 0, leadershipRetries: 1, events: 2 });
    expect(queue.failing).toBe(false);
    expect(logger.at('warn').map((l) => l.message)).toEqual(['kafka partition leadership moved; sending again']);
    // A refusal is an answer, not a stall: the connection is not blamed.
    expect(sender.timedOutSince).toEqual([]);
  });

  it('keeps the partition busy during the pause, so a later message of it does not overtake the resend', async () => {
    const { sender, append } = harness();
    const a = append([{ key: 'a', partition: 0 }]);
    await tick();
    // The client gathers one refusal per broker in a MultipleErrors.
    sender.nth(0).reject(multipleErrors([produceError('LEADER_NOT_AVAILABLE')]));
    await tick(10);
    const b = append([
      { key: 'b', partition: 0 },
      { key: 'c', partition: 1 },
    ]);
    await tick();
    expect(sender.keys).toEqual([['a'], ['c']]);
    await tick(90);
    expect(sender.keys).toEqual([['a'], ['c'], ['a']]);
    sender.nth(1).resolve();
    await tick(500);
    expect(sender.sends).toHaveLength(3);
    expect(b.done).toBe(false);

    sender.nth(2).resolve();
    expect(await answer(a)).toEqual([true]);
    await tick();
    expect(sender.keys[3]).toEqual(['b']);
  });

  it('tries 4 times at most, pausing 100, 200 then 400 ms, then answers unavailable', async () => {
    const { sender, append, queue } = harness({ sendTimeoutMs: 10_000 });
    const start = performance.now();
    const a = append([{ key: 'a', partition: 0 }]);
    for (let i = 0; i < 4; i++) {
      await tick(i === 0 ? 0 : 100 * 2 ** (i - 1));
      sender.nth(i).reject(produceError('NOT_LEADER_OR_FOLLOWER'));
    }
    expect(await answer(a)).toEqual([false]);
    expect(sender.sends.map((s) => s.at - start)).toEqual([0, 100, 300, 700]);
    await tick(5000);
    expect(sender.sends).toHaveLength(4);
    expect(queue.counters).toMatchObject({ leadershipRetries: 3, failedSends: 1, failedEvents: 1, sends: 0 });
    expect(queue.failing).toBe(true);
  });

  it('answers unavailable at once instead of pausing past the deadline', async () => {
    const { sender, append, queue } = harness({ sendTimeoutMs: 250 });
    const a = append([{ key: 'a', partition: 0 }]);
    await tick();
    sender.nth(0).reject(produceError('NOT_LEADER_OR_FOLLOWER'));
    await tick(100);
    // The next pause (200 ms) would end past the deadline (250 ms): no third send, no waiting for it.
    sender.nth(1).reject(produceError('NOT_LEADER_OR_FOLLOWER'));
    expect(await answer(a)).toEqual([false]);
    expect(sender.sends).toHaveLength(2);
    expect(queue.counters.leadershipRetries).toBe(1);
  });
});

describe('SendQueue: other failures', () => {
  it('fails only the events of the refused send, at once and without sending it again', async () => {
    const { sender, append, queue } = harness({ batchEvents: 1 });
    // One call whose events left in two sends, on two partitions.
    const call = append([
      { key: 'x0', partition: 0 },
      { key: 'x1', partition: 1 },
    ]);
    const other = append([{ key: 'y', partition: 2 }]);
    await tick();
    expect(sender.keys).toEqual([['x0'], ['x1'], ['y']]);

    sender.nth(0).reject(connectionClosed());
    // Longer than any leadership pause, within the other sends' deadlines.
    await tick(500);
    expect(sender.sends).toHaveLength(3);
    expect(call.done || other.done).toBe(false);

    sender.nth(1).resolve();
    sender.nth(2).resolve();
    expect(await answer(call)).toEqual([false, true]);
    expect(await answer(other)).toEqual([true]);
    expect(queue.counters).toMatchObject({ sends: 2, failedSends: 1, failedEvents: 1, events: 2, leadershipRetries: 0 });
    // Refused, not silent: the connection is not blamed.
    expect(sender.timedOutSince).toEqual([]);
  });

  it('after a broker failure: fail fast for failFastMs, and while the probe send is in flight; a success ends it', async () => {
    const { sender, append, queue } = harness({ failFastMs: 1000 });
    append([{ key: 'a', partition: 0 }]);
    await tick();
    expect(queue.failFast(performance.now())).toBe(false);
    sender.nth(0).reject(connectionClosed());
    await tick();
    expect(queue.failing).toBe(true);
    expect(queue.failFast(performance.now())).toBe(true);
    await tick(999);
    expect(queue.failFast(performance.now())).toBe(true);
    await tick(1);
    expect(queue.failFast(performance.now())).toBe(false);

    const probe = append([{ key: 'b', partition: 0 }]);
    await tick();
    expect(queue.failFast(performance.now())).toBe(true);
    sender.nth(1).resolve();
    expect(await answer(probe)).toEqual([true]);
    expect(queue.failing).toBe(false);
    expect(queue.failFast(performance.now())).toBe(false);
  });

  it('brokerAnswered() ends failing when no send is in flight, not while one is (its outcome decides)', async () => {
    const { sender, append, queue, logger } = harness();
    append([{ key: 'a', partition: 0 }]);
    await tick();
    sender.nth(0).reject(connectionClosed());
    await tick(2000);

    append([{ key: 'b', partition: 0 }]);
    await tick();
    queue.brokerAnswered();
    expect(queue.failing).toBe(true);
    sender.nth(1).reject(connectionClosed());
    await tick();
    expect(queue.failing).toBe(true);

    queue.brokerAnswered();
    expect(queue.failing).toBe(false);
    expect(logger.at('info').map((l) => l.fields)).toEqual([expect.objectContaining({ how: 'the broker answers the readiness probe', failures: 2 })]);
  });

  it("a refusal of the content (MESSAGE_TOO_LARGE) fails its send but does not mark the broker failing", async () => {
    const { sender, append, queue, logger } = harness();
    const a = append([{ key: 'a', partition: 0 }]);
    await tick();
    sender.nth(0).reject(produceError('MESSAGE_TOO_LARGE'));
    expect(await answer(a)).toEqual([false]);
    expect(sender.sends).toHaveLength(1);
    expect(queue.failing).toBe(false);
    expect(queue.failFast(performance.now())).toBe(false);
    expect(queue.counters).toMatchObject({ failedSends: 1, failedEvents: 1 });
    expect(logger.at('error')).toEqual([expect.objectContaining({ message: 'kafka refused a send; its events are answered unavailable' })]);
    expect(logger.at('warn')).toEqual([]);
  });

  it('logs failing sends quietly: once when they start, a count at most every 5 s, once when a send succeeds', async () => {
    const { sender, append, logger } = harness();
    const failOnce = async (): Promise<void> => {
      append([{ key: 'k', partition: 0 }]);
      await tick();
      sender.sends.at(-1)!.reject(connectionClosed());
      await tick();
    };
    await failOnce();
    await tick(1000);
    await failOnce();
    await failOnce();
    expect(logger.lines.map((l) => l.message)).toEqual(['kafka sends fail; inserts answer -5 until one succeeds']);
    await tick(4000);
    await failOnce();
    expect(logger.lines).toHaveLength(2);
    expect(logger.lines[1]).toMatchObject({ level: 'warn', message: 'kafka sends fail; inserts answer -5 until one succeeds (still)', fields: { failuresSinceLastLine: 3 } });

    append([{ key: 'k', partition: 0 }]);
    await tick();
    sender.sends.at(-1)!.resolve();
    await tick();
    expect(logger.lines).toHaveLength(3);
    expect(logger.lines[2]).toMatchObject({ level: 'info', fields: { how: 'a send succeeded', failures: 4 } });
  });
});

describe('SendQueue: deadlines', () => {
  it("a send that never answers fails its callers at the batch's earliest deadline and tells the sender it timed out", async () => {
    const { sender, append, queue, logger } = harness({ lingerMs: 10 });
    const start = performance.now();
    const calls = [append([{ key: 'a', partition: 0 }], 500), append([{ key: 'b', partition: 1 }], 300), append([{ key: 'c', partition: 2 }], 500)];
    await tick(10);
    expect(sender.keys).toEqual([['a', 'b', 'c']]);
    await tick(289);
    expect(calls.some((c) => c.done)).toBe(false);
    await tick(1);
    for (const c of calls) expect(await answer(c)).toEqual([false]);
    // Since when the connection went silent: the start of that send.
    expect(sender.timedOutSince).toEqual([start + 10]);
    expect(queue.failing).toBe(true);
    expect(queue.counters).toMatchObject({ failedSends: 1, failedEvents: 3 });
    expect(logger.at('warn')[0]?.fields).toMatchObject({ err: expect.stringMatching(/kafka send did not answer within 290 ms/) as unknown, events: 3 });
  });

  it("the library's own request timeout also tells the sender to drop the silent connection", async () => {
    const { sender, append } = harness();
    const a = append([{ key: 'a', partition: 0 }]);
    await tick(50);
    sender.nth(0).reject(requestTimedOut());
    expect(await answer(a)).toEqual([false]);
    expect(sender.timedOutSince).toEqual([sender.nth(0).at]);
    expect(sender.sends).toHaveLength(1);
  });

  it('a message whose deadline passed while its partition was busy is answered unavailable, not sent', async () => {
    const { sender, append, queue } = harness();
    const first = append([{ key: 'a', partition: 0 }], 1000);
    await tick(100);
    const waiting = append([{ key: 'b', partition: 0 }], 200);
    await tick(400);
    // Checked when its partition frees (bounded by the send in flight's own deadline).
    sender.nth(0).resolve();
    expect(await answer(first)).toEqual([true]);
    expect(await answer(waiting)).toEqual([false]);
    expect(sender.sends).toHaveLength(1);
    expect(queue.queued).toBe(0);
    expect(queue.counters).toMatchObject({ sends: 1, events: 1, failedEvents: 1 });
  });

  it('a message held back by maxInFlightSends past its deadline is answered unavailable, not sent', async () => {
    const { sender, append, queue } = harness({ maxInFlightSends: 2, batchEvents: 1 });
    const sent = append([
      { key: 'a', partition: 0 },
      { key: 'b', partition: 1 },
    ]);
    const held = append([{ key: 'c', partition: 2 }], 200);
    await tick(500);
    expect(sender.keys).toEqual([['a'], ['b']]);
    // Partition 0 still busy when the queue looks again.
    sender.nth(1).resolve();
    expect(await answer(held)).toEqual([false]);
    sender.nth(0).resolve();
    expect(await answer(sent)).toEqual([true, true]);
    expect(sender.sends).toHaveLength(2);
    expect(queue.counters).toMatchObject({ sends: 2, failedEvents: 1 });
  });

  it('a leadership pause that ends past the deadline sends nothing more: the callers get unavailable, no connection is blamed', async () => {
    const { sender, append } = harness({ sendTimeoutMs: 150 });
    const refused = append([{ key: 'b', partition: 1 }]);
    await tick();
    sender.nth(0).reject(produceError('NOT_LEADER_OR_FOLLOWER'));
    await tick();
    // The event loop stalls 60 ms, so the 100 ms pause ends at 160 ms, past the 150 ms deadline.
    const now = performance.now.bind(performance);
    const stalled = vi.spyOn(performance, 'now').mockImplementation(() => now() + 60);
    await tick(100);
    stalled.mockRestore();
    expect(await answer(refused)).toEqual([false]);
    expect(sender.sends).toHaveLength(1);
    expect(sender.timedOutSince).toEqual([]);
  });

  it('sends that settle after their callers were answered leave no unhandled rejection', async () => {
    const { sender, append } = harness({ sendTimeoutMs: 150 });
    const timedOut = append([{ key: 'a', partition: 0 }]);
    const resent = append([{ key: 'b', partition: 1 }]);
    await tick();
    sender.nth(1).reject(produceError('NOT_LEADER_OR_FOLLOWER'));
    await tick();
    // The event loop stalls 60 ms: the 100 ms pause ends past the deadline (150 ms), so the resend
    // gets no time at all; withTimeout then never subscribes to it (a timeout's race does).
    const now = performance.now.bind(performance);
    const stalled = vi.spyOn(performance, 'now').mockImplementation(() => now() + 60);
    await tick(100);
    stalled.mockRestore();
    await tick(50);
    expect(await answer(timedOut)).toEqual([false]);
    expect(await answer(resent)).toEqual([false]);

    // Vitest fails the run on an unhandled rejection; a real macrotask lets Node report one.
    for (const s of sender.sends) s.reject(connectionClosed());
    vi.useRealTimers();
    await new Promise((resolve) => setImmediate(resolve));
  });
});
