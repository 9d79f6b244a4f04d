/**
 * worker/consumer.ts on fakes of its Kafka clients (a group member, a fetcher and the admin
 * client's two questions): waiting for the topic, where reading starts after a join, how far each
 * position moves by what the loader took, a fetch failure retried in the same session, a session
 * ended by the group or by heartbeats that stopped and started again with new clients, a
 * non-retriable error, pause and stop. The real brokers doing it: test/scale-out/worker*.scale-out.test.ts,
 * test/faults/ and test/ha/ (a coordinator frozen).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ConsumedMessage, FetchedPartition } from '../../../shared/backends/kafka/fetcher.js';
import { ConsumerSupervisor, type ConsumerSupervisorOptions } from '../../../worker/consumer.js';
import type { GroupMember, GroupMemberEvents, SessionClients, SessionFetcher } from '../../../worker/session-clients.js';
import { sleep, waitFor } from '../../helpers/wait.js';

/** A connection that failed: retriable. */
const networkError = (): Error => Object.assign(new Error('Connection to 127.0.0.1:9 failed.'), { code: 'PLT_KFK_NETWORK' });
/** The topic is not there yet: retriable (a gateway creates it). */
const unknownTopic = (): Error => Object.assign(new Error('Unknown topic events.'), { apiId: 'UNKNOWN_TOPIC_OR_PARTITION', canRetry: true });
/** Waiting cannot fix this. */
const notAuthorized = (): Error => Object.assign(new Error('Topic authorization failed.'), { apiId: 'TOPIC_AUTHORIZATION_FAILED', canRetry: false });

const message = (offset: number): ConsumedMessage => ({ offset: BigInt(offset), timestamp: 0n, key: null, value: Buffer.from(`m${offset}`) });

/** The partitions' logs: records from `first` (older ones gone by retention) up to the end. */
class Topic {
  readonly logs = new Map<number, { first: number; end: number }>([
    [0, { first: 0, end: 0 }],
    [1, { first: 0, end: 0 }],
  ]);
  append(partition: number, count: number): void {
    this.logs.get(partition)!.end += count;
  }
}

class FakeFetcher implements SessionFetcher {
  /** The positions of every fetch, as asked. */
  readonly asked: Map<number, bigint>[] = [];
  failures = 0;
  closed = false;
  constructor(private readonly topic: Topic) {}
  async fetch(positions: ReadonlyMap<number, bigint>): Promise<FetchedPartition[]> {
    this.asked.push(new Map(positions));
    await sleep(2);
    if (this.failures > 0) {
      this.failures--;
      throw networkError();
    }
    return [...positions].map(([partition, at]) => {
      const log = this.topic.logs.get(partition)!;
      const position = Number(at);
      if (position < log.first) return { partition, messages: [], next: at, highWatermark: BigInt(log.end), outOfRange: BigInt(log.first) };
      const messages = Array.from({ length: Math.max(0, Math.min(log.end, position + 10) - position) }, (_, i) => message(position + i));
      return { partition, messages, next: BigInt(position + messages.length), highWatermark: BigInt(log.end), outOfRange: null };
    });
  }
  offsets(): Promise<bigint[]> {
    return Promise.resolve([...this.topic.logs.values()].map((l) => BigInt(l.first)));
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

class FakeMember implements GroupMember {
  readonly commits: { topic: string; partition: number; offset: bigint }[][] = [];
  closed = false;
  constructor(
    readonly events: GroupMemberEvents,
    private readonly assignment: number[],
    private readonly joinError: Error | null,
  ) {}
  join(): Promise<void> {
    if (this.joinError !== null) return Promise.reject(this.joinError);
    this.events.joined(this.assignment);
    return Promise.resolve();
  }
  commit(offsets: readonly { topic: string; partition: number; offset: bigint }[]): Promise<void> {
    this.commits.push([...offsets]);
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

const supervisors: ConsumerSupervisor[] = [];
afterEach(async () => {
  await Promise.all(supervisors.splice(0).map((s) => s.stop()));
});

function setUp(over: { sessionTimeoutMs?: number; leaders?: (number[] | Error)[]; committed?: Map<number, bigint>; joinErrors?: Error[]; take?: (messages: ConsumedMessage[]) => number } = {}) {
  const topic = new Topic();
  const members: FakeMember[] = [];
  const fetchers: FakeFetcher[] = [];
  const batches: { partition: number; offsets: number[] }[] = [];
  const joins: number[][] = [];
  const fatal: Error[] = [];
  const warnings: string[] = [];
  const leaders = over.leaders ?? [[1, 1]];
  const joinErrors = [...(over.joinErrors ?? [])];
  let committedAsked = 0;
  /** The consumer's status each time it checked the topic: what the attempt before left it saying. */
  const statusAtCheck: string[] = [];
  let consumer: ConsumerSupervisor | null = null;
  const clients: SessionClients = {
    member: (events) => {
      const member = new FakeMember(events, [0, 1], joinErrors.shift() ?? null);
      members.push(member);
      return Promise.resolve(member);
    },
    fetcher: () => {
      const fetcher = new FakeFetcher(topic);
      fetchers.push(fetcher);
      return Promise.resolve(fetcher);
    },
  };
  const options: ConsumerSupervisorOptions = {
    kafka: { brokers: ['127.0.0.1:9'], clientId: 'worker', requestTimeoutMs: 50 },
    admin: {
      leaders: () => {
        if (consumer !== null) statusAtCheck.push(`${consumer.current.phase}: ${consumer.current.reason ?? ''}`);
        const answer = leaders.length > 1 ? leaders.shift()! : leaders[0]!;
        return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
      },
      committed: () => {
        committedAsked++;
        return Promise.resolve(over.committed ?? new Map<number, bigint>());
      },
    },
    topic: 'events',
    groupId: 'workers',
    sessionTimeoutMs: over.sessionTimeoutMs ?? 10_000,
    backoff: { initialMs: 5, maxMs: 20 },
    logger: { info: () => undefined, warn: (_, m) => warnings.push(m), error: (_, m) => warnings.push(m) },
    onBatch: (partition, messages) => {
      batches.push({ partition, offsets: messages.map((m) => Number(m.offset)) });
      return Promise.resolve(over.take?.(messages) ?? messages.length);
    },
    onGroupJoin: (partitions) => joins.push(partitions),
    onFatal: (error) => fatal.push(error),
    clients,
  };
  consumer = new ConsumerSupervisor(options);
  supervisors.push(consumer);
  const read = (partition: number): number[] => batches.filter((b) => b.partition === partition).flatMap((b) => b.offsets);
  return { consumer, topic, members, fetchers, batches, joins, fatal, warnings, read, statusAtCheck, committedAsked: () => committedAsked };
}

describe('ConsumerSupervisor', () => {
  it('waits for the topic and for every partition to have a leader, then joins and consumes', async () => {
    const t = setUp({ leaders: [unknownTopic(), [1, -1], [1, 1]] });
    t.consumer.start();
    await t.consumer.joined;
    expect(t.statusAtCheck).toEqual([
      'waiting: starting',
      'waiting: waiting for Kafka topic events: no such topic yet',
      'waiting: waiting for Kafka topic events: 1 of 2 partitions have no leader yet',
    ]);
    expect(t.consumer.current).toEqual({ phase: 'consuming', reason: null });
    expect(t.joins).toEqual([[0, 1]]);
    // No member was made before the topic could be used.
    expect(t.members).toHaveLength(1);
  });

  it("reads each partition from the group's commit, or from its oldest record when none was committed", async () => {
    const t = setUp({ committed: new Map([[0, 3n]]) });
    t.topic.logs.set(1, { first: 2, end: 4 });
    t.topic.append(0, 6);
    t.consumer.start();
    await waitFor('both partitions read', () => t.read(0).length === 3 && t.read(1).length === 2);
    expect(t.fetchers[0]!.asked[0]).toEqual(new Map([[0, 3n], [1, 2n]]));
    expect(t.read(0)).toEqual([3, 4, 5]);
    expect(t.read(1)).toEqual([2, 3]);
  });

  it('moves a position by what the loader took: all of it, part of it (the rest is fetched again) or none', async () => {
    let calls = 0;
    const t = setUp({ take: (messages) => (++calls === 1 ? 2 : calls === 2 ? 0 : messages.length) });
    t.topic.append(0, 5);
    t.consumer.start();
    await waitFor('partition 0 read to its end', () => t.read(0).at(-1) === 4 && t.fetchers[0]!.asked.at(-1)!.get(0) === 5n);
    // 0..4 offered, two taken; 2..4 offered, none taken; 2..4 offered again, all taken.
    expect(t.batches.filter((b) => b.partition === 0).map((b) => b.offsets)).toEqual([
      [0, 1, 2, 3, 4],
      [2, 3, 4],
      [2, 3, 4],
    ]);
  });

  it('reads on from the oldest retained record when retention removed the position', async () => {
    const t = setUp({ committed: new Map([[0, 1n]]) });
    t.topic.logs.set(0, { first: 4, end: 6 });
    t.consumer.start();
    await waitFor('partition 0 read', () => t.read(0).length === 2);
    expect(t.read(0)).toEqual([4, 5]);
  });

  it('retries a failed fetch in the same session, not ready meanwhile, and ready again once fetches work', async () => {
    const t = setUp();
    t.consumer.start();
    await t.consumer.joined;
    t.fetchers[0]!.failures = Infinity;
    await waitFor('not ready', () => t.consumer.current.phase === 'waiting');
    expect(t.consumer.current.reason).toMatch(/^Kafka fetches fail: .*failed/);
    t.fetchers[0]!.failures = 0;
    t.topic.append(1, 1);
    await waitFor('ready again', () => t.consumer.current.phase === 'consuming' && t.read(1).length === 1);
    expect(t.members).toHaveLength(1);
    expect(t.consumer.restarts).toBe(0);
  });

  it('ends a session the group ended (its clients closed) and starts a new one that reads again from the commits', async () => {
    const t = setUp({ committed: new Map([[0, 2n]]) });
    t.topic.append(0, 3);
    t.consumer.start();
    await waitFor('read', () => t.read(0).length === 1);
    t.members[0]!.events.failed(Object.assign(new Error('The coordinator forgot this member.'), { apiId: 'UNKNOWN_MEMBER_ID', canRetry: false }));
    await waitFor('a second session joined', () => t.joins.length === 2 && t.consumer.current.phase === 'consuming');
    expect(t.consumer.restarts).toBe(1);
    expect(t.members[0]!.closed).toBe(true);
    expect(t.fetchers[0]!.closed).toBe(true);
    expect(t.members).toHaveLength(2);
    // Reading starts again at the group's commit: the loader dropped its buffer at the join.
    await waitFor('read again', () => t.read(0).length === 2);
    expect(t.read(0)).toEqual([2, 2]);
    expect(t.committedAsked()).toBe(2);
    // An event of the first member, late, changes nothing.
    t.members[0]!.events.failed(networkError());
    t.members[0]!.events.joined([0]);
    // Two more fetches of the second session: it went on (a session ending would fetch no more).
    const fetches = t.fetchers[1]!.asked.length;
    await waitFor('the second session fetching on', () => t.fetchers[1]!.asked.length >= fetches + 2, 2_000, 5);
    expect(t.consumer.restarts).toBe(1);
    expect(t.members).toHaveLength(2);
    expect(t.joins).toHaveLength(2);
    expect(t.consumer.current.phase).toBe('consuming');
  });

  it('ends a session whose heartbeats stopped being answered for a session timeout', async () => {
    // Heartbeats are never answered: lost after sessionTimeoutMs + the member's request deadline (100 + 150 ms).
    const t = setUp({ sessionTimeoutMs: 100 });
    t.consumer.start();
    await t.consumer.joined;
    await waitFor('a new session', () => t.consumer.restarts === 1, 5_000, 10);
    expect(t.warnings).toContain('Kafka consumer cannot run (retriable); retrying');
    expect(t.members[0]!.closed).toBe(true);
  });

  it('keeps a session whose heartbeats are answered', async () => {
    const t = setUp({ sessionTimeoutMs: 100 });
    t.consumer.start();
    await t.consumer.joined;
    const beating = setInterval(() => t.members[0]!.events.heartbeat(), 20);
    await sleep(600);
    clearInterval(beating);
    expect(t.consumer.restarts).toBe(0);
  });

  it('stops for good on an error waiting cannot fix, and says so', async () => {
    const t = setUp({ joinErrors: [notAuthorized()] });
    t.consumer.start();
    await expect(t.consumer.joined).rejects.toThrow('Topic authorization failed.');
    expect(t.fatal.map((e) => e.message)).toEqual(['Topic authorization failed.']);
    expect(t.consumer.current.phase).toBe('failed');
    expect(t.consumer.current.reason).toMatch(/^non-retriable Kafka error: /);
    expect(t.members[0]!.closed).toBe(true);
    await sleep(30);
    expect(t.members).toHaveLength(1);
  });

  it('retries a join that failed on a retriable error with new clients', async () => {
    const t = setUp({ joinErrors: [networkError()] });
    t.consumer.start();
    await t.consumer.joined;
    expect(t.members).toHaveLength(2);
    expect(t.members[0]!.closed).toBe(true);
    // It never consumed before, so it was waiting, not restarting.
    expect(t.consumer.restarts).toBe(0);
  });

  it('commits through the current member, and refuses when none is joined', async () => {
    const t = setUp();
    await expect(t.consumer.commitOffsets([{ topic: 'events', partition: 0, offset: '5' }])).rejects.toThrow('no Kafka consumer is running');
    t.consumer.start();
    await t.consumer.joined;
    await t.consumer.commitOffsets([{ topic: 'events', partition: 0, offset: '5' }]);
    expect(t.members[0]!.commits).toEqual([[{ topic: 'events', partition: 0, offset: 5n }]]);
  });

  it('reads nothing more once paused, and closes its clients at stop', async () => {
    const t = setUp();
    t.topic.append(0, 2);
    t.consumer.start();
    await waitFor('read', () => t.read(0).length === 2);
    t.consumer.pause();
    await sleep(20);
    const fetches = t.fetchers[0]!.asked.length;
    t.topic.append(0, 2);
    await sleep(300);
    expect(t.fetchers[0]!.asked.length).toBe(fetches);
    expect(t.read(0)).toEqual([0, 1]);
    await t.consumer.stop();
    expect(t.consumer.current.phase).toBe('stopped');
    expect(t.members[0]!.closed).toBe(true);
    expect(t.fetchers[0]!.closed).toBe(true);
  });
});
