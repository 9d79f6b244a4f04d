import type { KafkaAdmin, KafkaClientOptions } from '../shared/backends/kafka/client.js';
import { describeKafkaError, isRetriableKafkaError, isUnknownTopicError } from '../shared/backends/kafka/errors.js';
import type { ConsumedMessage } from '../shared/backends/kafka/fetcher.js';
import { FailureLog } from '../shared/runtime/failure-log.js';
import { backoffDelay, sleep, type BackoffOptions } from './backoff.js';
import type { WorkerLogger } from './log.js';
import { kafkaSessionClients, type GroupMember, type SessionClients, type SessionFetcher } from './session-clients.js';

/**
 * Where the consumer is. Only 'consuming' is ready: the group is joined and fetches answer.
 * - waiting: Kafka cannot be used yet (broker down, topic missing, partitions electing leaders);
 *   retried with backoff, the reason says why;
 * - restarting: the consumer failed on a retriable error (or stopped hearing from the group) and
 *   is being started again;
 * - failed: a non-retriable error (authorization, invalid configuration...) ended it.
 */
export type ConsumerPhase = 'waiting' | 'consuming' | 'restarting' | 'stopped' | 'failed';

interface ConsumerStatus {
  phase: ConsumerPhase;
  /** Why it is not consuming (null while consuming). */
  reason: string | null;
}

/** One partition's messages handed to the loader; it answers how many it took (in order). */
type BatchHandler = (partition: number, messages: ConsumedMessage[], current: () => boolean) => Promise<number>;

export interface ConsumerSupervisorOptions {
  kafka: KafkaClientOptions;
  /** The worker's admin client: the topic check and the group's committed offsets. */
  admin: Pick<KafkaAdmin, 'leaders' | 'committed'>;
  topic: string;
  groupId: string;
  sessionTimeoutMs: number;
  backoff: BackoffOptions;
  logger: WorkerLogger;
  /** How long a fetch waits at the broker when there is nothing new. Default 1000 ms. */
  maxWaitMs?: number;
  onBatch: BatchHandler;
  /** The group was (re)joined with these partitions of the topic. */
  onGroupJoin(partitions: number[]): void;
  /** A non-retriable error: the consumer will not start again. */
  onFatal(error: Error): void;
  /** Makes each session's clients; default: @platformatic/kafka's (session-clients.ts). */
  clients?: SessionClients;
}

/** The topic is missing or some partition has no leader yet: retried like a retriable broker error. */
class TopicNotReadyError extends Error {
  override readonly name = 'TopicNotReadyError';
}

/** The session must end and a new consumer start (the group or its coordinator stopped answering). */
class SessionLost extends Error {
  override readonly name = 'SessionLost';
}

/**
 * Keeps one member of the worker's consumer group running, and reads its partitions. Two clients
 * make a session (session-clients.ts): a group member and a fetcher. Fetch positions start at the
 * group's commits (or the oldest retained record) after every join, as the loader expects.
 *
 * Starting means: the topic exists and every partition has a leader (the worker never creates
 * the topic: the gateways do, with their settings), then join and fetch. Any retriable error on
 * the way, a group member that reports an error, or heartbeats failing for a whole session
 * timeout (a coordinator that moved, stalled or forgot this member) end the session: both clients
 * are discarded and new ones start after an exponential backoff, for as long as it takes. A
 * non-retriable error calls onFatal. A fetch that fails is retried by the same session (its silent
 * connections are closed first: ConnectionWatch), and the worker reads as not ready meanwhile.
 */
export class ConsumerSupervisor {
  private member: GroupMember | null = null;
  private fetcher: SessionFetcher | null = null;
  private readonly clients: SessionClients;
  private stopped = false;
  private paused = false;
  private running: Promise<void> | null = null;
  private wakeUp: () => void = () => undefined;
  private readonly wake: Promise<void>;
  private status: ConsumerStatus = { phase: 'waiting', reason: 'starting' };
  /** Bumped at each join: fetches and batches of an older generation are dropped. */
  private generation = 0;
  private assigned: number[] = [];
  private positions = new Map<number, bigint>();
  private positionsOf = -1;
  /** The current session's end: set by a group error or heartbeats that stopped answering. */
  private lost: Error | null = null;
  private lastHeartbeat = 0;
  private readonly startFailures: FailureLog;
  private readonly fetchFailures: FailureLog;
  /** Resolves at the first group join; rejects when the consumer fails for good before it. */
  readonly joined: Promise<void>;
  private resolveJoined: () => void = () => undefined;
  private rejectJoined: (error: Error) => void = () => undefined;
  /** Sessions started again after one ended (tests, logs). */
  restarts = 0;

  constructor(private readonly options: ConsumerSupervisorOptions) {
    this.wake = new Promise<void>((resolve) => (this.wakeUp = resolve));
    this.joined = new Promise<void>((resolve, reject) => {
      this.resolveJoined = resolve;
      this.rejectJoined = reject;
    });
    // A caller that never awaits `joined` must not see an unhandled rejection.
    this.joined.catch(() => undefined);
    this.clients =
      options.clients ??
      kafkaSessionClients({
        kafka: options.kafka,
        topic: options.topic,
        groupId: options.groupId,
        sessionTimeoutMs: options.sessionTimeoutMs,
        memberRequestTimeoutMs: this.memberRequestTimeout(),
        maxWaitMs: options.maxWaitMs ?? 1000,
      });
    this.startFailures = new FailureLog(options.logger, 'Kafka consumer cannot run (retriable); retrying');
    this.fetchFailures = new FailureLog(options.logger, 'Kafka fetches fail; retrying');
  }

  get current(): Readonly<ConsumerStatus> {
    return this.status;
  }

  start(): void {
    this.running ??= this.supervise();
  }

  /** Commits on the current member; throws when none is joined (the caller retries later). */
  async commitOffsets(offsets: { topic: string; partition: number; offset: string }[]): Promise<void> {
    const member = this.member;
    if (member === null) throw new Error('no Kafka consumer is running');
    await member.commit(offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: BigInt(o.offset) })));
  }

  /** Stops fetching (drain: what is buffered is stored, nothing new is read). */
  pause(): void {
    this.paused = true;
  }

  /** Stops starting consumers and closes the current one. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp();
    this.setStatus('stopped', 'stopped');
    await this.running?.catch(() => undefined);
    await this.discard();
  }

  /** A method, not a field read: stop() changes it while the loops await. */
  private isStopped(): boolean {
    return this.stopped;
  }

  private setStatus(phase: ConsumerPhase, reason: string | null): void {
    if (this.stopped && phase !== 'stopped') return;
    this.status = { phase, reason };
  }

  /**
   * The member's request deadline: a JoinGroup waits at the coordinator until every member
   * rejoined (at most the rebalance timeout, the session timeout here), and a commit or heartbeat
   * sent on the same connection waits behind it.
   */
  private memberRequestTimeout(): number {
    return this.options.sessionTimeoutMs + this.options.kafka.requestTimeoutMs;
  }

  /** Runs sessions, starting a new one after each that ends on a retriable error, until stop(). */
  private async supervise(): Promise<void> {
    for (let attempt = 0; !this.stopped; ) {
      const session = { joined: false };
      try {
        await this.session(() => {
          session.joined = true;
        });
        return;
      } catch (error) {
        await this.discard();
        if (this.isStopped()) return;
        if (!(error instanceof TopicNotReadyError) && !(error instanceof SessionLost) && !isRetriableKafkaError(error)) {
          this.fail(error);
          return;
        }
        if (session.joined) {
          attempt = 0;
          this.restarts++;
        }
        const delayMs = backoffDelay(attempt++, this.options.backoff);
        const reason =
          error instanceof TopicNotReadyError
            ? error.message
            : error instanceof SessionLost
              ? `consumer restarting: ${error.message}`
              : `Kafka not ready for topic ${this.options.topic}: ${describeKafkaError(error)}`;
        this.setStatus(session.joined ? 'restarting' : 'waiting', reason);
        this.startFailures.failed(reason, { attempt, delayMs, restarts: this.restarts });
        await sleep(delayMs, this.wake);
      }
    }
  }

  /** One session: check the topic, join, fetch until stop() or a failure that needs new clients. */
  private async session(onJoin: () => void): Promise<void> {
    await this.checkTopic();
    this.lost = null;
    this.lastHeartbeat = Date.now();
    // Events of a member this session no longer holds (a late one of a session ended) are dropped.
    let member: GroupMember | null = null;
    member = await this.clients.member({
      joined: (partitions) => {
        if (this.member !== member) return;
        this.generation++;
        this.assigned = partitions;
        this.lastHeartbeat = Date.now();
        onJoin();
        this.setStatus('consuming', null);
        this.startFailures.ok({ partitions });
        this.resolveJoined();
        this.options.onGroupJoin(partitions);
      },
      heartbeat: () => {
        if (this.member === member) this.lastHeartbeat = Date.now();
      },
      failed: (error) => {
        if (this.member === member) this.lost = error;
      },
    });
    this.member = member;
    this.fetcher = await this.clients.fetcher();
    await member.join();
    await this.fetchLoop(member);
  }

  private async fetchLoop(member: GroupMember): Promise<void> {
    const fetcher = this.fetcher!;
    const { sessionTimeoutMs } = this.options;
    while (!this.stopped) {
      if (this.lost !== null) throw this.lost;
      if (Date.now() - this.lastHeartbeat > sessionTimeoutMs + this.memberRequestTimeout()) {
        throw new SessionLost(`no heartbeat answered for ${Math.round((Date.now() - this.lastHeartbeat) / 1000)} s`);
      }
      const generation = this.generation;
      if (this.paused || this.assigned.length === 0) {
        await sleep(200, this.wake);
        continue;
      }
      try {
        if (this.positionsOf !== generation) await this.loadPositions(generation);
        if (generation !== this.generation) continue;
        const fetched = await fetcher.fetch(this.positions);
        this.fetchSucceeded();
        const current = (): boolean => generation === this.generation && !this.stopped && this.member === member;
        for (const f of fetched) {
          if (!current()) break;
          if (f.outOfRange !== null) {
            // Retention removed what the group committed: read on from the oldest retained record.
            this.positions.set(f.partition, f.outOfRange);
            continue;
          }
          if (f.messages.length === 0) {
            this.positions.set(f.partition, f.next);
            continue;
          }
          const taken = await this.options.onBatch(f.partition, f.messages, current);
          if (!current()) break;
          if (taken === f.messages.length) this.positions.set(f.partition, f.next);
          else if (taken > 0) this.positions.set(f.partition, f.messages[taken - 1]!.offset + 1n);
        }
      } catch (error) {
        if (this.isStopped()) return;
        if (!isRetriableKafkaError(error)) throw error;
        this.fetchFailed(error);
        await sleep(backoffDelay(0, this.options.backoff), this.wake);
      }
    }
  }

  /** After a join: each assigned partition from the group's commit, or its oldest retained record. */
  private async loadPositions(generation: number): Promise<void> {
    const fetcher = this.fetcher!;
    const [committed, earliest] = await Promise.all([this.options.admin.committed(this.options.groupId, this.options.topic), fetcher.offsets('earliest')]);
    if (generation !== this.generation) return;
    this.positions = new Map(this.assigned.map((p) => [p, committed.get(p) ?? earliest[p] ?? 0n]));
    this.positionsOf = generation;
  }

  private fetchSucceeded(): void {
    // Also after a new session: fetches that failed in the last one are said to work again.
    if (!this.fetchFailures.failing) return;
    this.fetchFailures.ok();
    if (this.status.phase === 'waiting' && this.member !== null) this.setStatus('consuming', null);
  }

  private fetchFailed(error: unknown): void {
    const reason = `Kafka fetches fail: ${describeKafkaError(error)}`;
    this.fetchFailures.failed(reason);
    this.setStatus('waiting', reason);
  }

  /** The topic exists and each partition has a leader; TopicNotReadyError (retried) otherwise. */
  private async checkTopic(): Promise<void> {
    const { topic } = this.options;
    let leaders: number[];
    try {
      leaders = await this.options.admin.leaders(topic);
    } catch (error) {
      if (!isRetriableKafkaError(error)) throw error;
      const why = isUnknownTopicError(error) ? 'no such topic yet' : describeKafkaError(error);
      throw new TopicNotReadyError(`waiting for Kafka topic ${topic}: ${why}`, { cause: error });
    }
    const leaderless = leaders.filter((l) => l < 0).length;
    if (leaders.length === 0 || leaderless > 0) {
      throw new TopicNotReadyError(`waiting for Kafka topic ${topic}: ${leaders.length === 0 ? 'no partitions yet' : `${leaderless} of ${leaders.length} partitions have no leader yet`}`);
    }
  }

  private fail(error: unknown): void {
    const err = error instanceof Error ? error : new Error(String(error));
    this.setStatus('failed', `non-retriable Kafka error: ${describeKafkaError(err)}`);
    this.rejectJoined(err);
    this.options.onFatal(err);
  }

  /** Closes the session's clients: leaves the group when the coordinator answers in time, else just drops the connections. */
  private async discard(): Promise<void> {
    const [member, fetcher] = [this.member, this.fetcher];
    this.member = null;
    this.fetcher = null;
    this.assigned = [];
    this.positionsOf = -1;
    await Promise.allSettled([member?.close(), fetcher?.close()]);
  }
}
