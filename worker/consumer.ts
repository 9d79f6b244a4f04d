import type { Admin, Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import { createKafkaClient } from '../shared/backends/kafka/client.js';
import type { KafkaSecurity } from '../shared/backends/kafka/security.js';
import { describeKafkaError, isRetriableKafkaError } from '../shared/backends/kafka/errors.js';
import { backoffDelay, sleep, type BackoffOptions } from './backoff.js';
import type { WorkerLogger } from './log.js';

/**
 * Where the consumer is. Only 'consuming' is ready: the group is joined and fetching.
 * - waiting: Kafka cannot be used yet (broker down, topic missing, partitions electing leaders);
 *   retried with backoff, the reason says why;
 * - restarting: the consumer crashed on a retriable error and is being started again;
 * - failed: a non-retriable error (authorization, invalid configuration...) ended it.
 */
export type ConsumerPhase = 'waiting' | 'consuming' | 'restarting' | 'stopped' | 'failed';

export interface ConsumerStatus {
  phase: ConsumerPhase;
  /** Why it is not consuming (null while consuming). */
  reason: string | null;
}

export interface ConsumerSupervisorOptions {
  brokers: string[];
  /** TLS and SASL of every connection (security.ts); default plaintext. */
  security?: KafkaSecurity;
  clientId: string;
  topic: string;
  groupId: string;
  sessionTimeoutMs: number;
  backoff: BackoffOptions;
  logger: WorkerLogger;
  onBatch(payload: EachBatchPayload): Promise<void>;
  /** The group was (re)joined with these partitions of the topic. */
  onGroupJoin(partitions: number[]): void;
  /** A non-retriable error: the consumer will not start again. */
  onFatal(error: Error): void;
}

/** The topic is missing or some partition has no leader yet: retried like a retriable broker error. */
class TopicNotReadyError extends Error {
  override readonly name = 'TopicNotReadyError';
}

/**
 * Keeps one Kafka consumer of the group running. Starting means: the topic exists and every
 * partition has a leader (the worker never creates the topic: the gateways do, with their
 * settings), then connect, subscribe and run. Any retriable error on the way, or a crash of a
 * running consumer on a retriable error, discards that consumer and starts a new one after an
 * exponential backoff, for as long as it takes: a worker started before its topic exists, or while
 * partitions elect leaders, waits instead of exiting. kafkajs' own restart-after-crash is turned
 * off so that every restart follows this one policy. A non-retriable error calls onFatal.
 */
export class ConsumerSupervisor {
  private readonly kafka: Kafka;
  readonly admin: Admin;
  private consumer: Consumer | null = null;
  private stopped = false;
  private running: Promise<void> | null = null;
  private wakeUp: () => void = () => undefined;
  private readonly wake: Promise<void>;
  private status: ConsumerStatus = { phase: 'waiting', reason: 'starting' };
  /** Resolves at the first group join; rejects when the consumer fails for good before it. */
  readonly joined: Promise<void>;
  private resolveJoined: () => void = () => undefined;
  private rejectJoined: (error: Error) => void = () => undefined;
  /** Consumer restarts after a crash (tests, logs); `crashes` counts those since the last join. */
  restarts = 0;
  private crashes = 0;

  constructor(private readonly options: ConsumerSupervisorOptions) {
    this.kafka = createKafkaClient({
      clientId: options.clientId,
      brokers: options.brokers,
      logger: options.logger,
      // kafkajs' default retries, not the factory's fail-fast ones: a consumer rides through a
      // coordinator that is still loading or a rebalance inside kafkajs; what outlasts them
      // crashes it, and this supervisor starts a new one with its own backoff.
      retry: { retries: 5, initialRetryTime: 300, maxRetryTime: 30_000 },
      ...(options.security === undefined ? {} : { security: options.security }),
    });
    this.admin = this.kafka.admin();
    this.wake = new Promise<void>((resolve) => (this.wakeUp = resolve));
    this.joined = new Promise<void>((resolve, reject) => {
      this.resolveJoined = resolve;
      this.rejectJoined = reject;
    });
    // A caller that never awaits `joined` must not see an unhandled rejection.
    this.joined.catch(() => undefined);
  }

  get current(): Readonly<ConsumerStatus> {
    return this.status;
  }

  start(): void {
    this.running ??= this.superviseStart();
  }

  /** Commits on the current consumer; throws when none is running (the caller retries later). */
  async commitOffsets(offsets: { topic: string; partition: number; offset: string }[]): Promise<void> {
    if (this.consumer === null) throw new Error('no Kafka consumer is running');
    await this.consumer.commitOffsets(offsets);
  }

  pause(): void {
    try {
      this.consumer?.pause([{ topic: this.options.topic }]);
    } catch {
      // not running: nothing to pause
    }
  }

  /** Stops starting consumers and disconnects the current one and the admin client. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp();
    this.setStatus('stopped', 'stopped');
    await this.running?.catch(() => undefined);
    const results = await Promise.allSettled([this.discard(), this.admin.disconnect()]);
    for (const r of results) {
      if (r.status === 'rejected') this.options.logger.warn({ err: describeKafkaError(r.reason) }, 'error while disconnecting');
    }
  }

  private setStatus(phase: ConsumerPhase, reason: string | null): void {
    if (this.stopped && phase !== 'stopped') return;
    this.status = { phase, reason };
  }

  /** Starts a consumer, retrying retriable failures with backoff until one runs or stop(). */
  private async superviseStart(): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        await this.startOnce();
        return;
      } catch (error) {
        await this.discard();
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- stop() may have run during the await
        if (this.stopped) return;
        if (!(error instanceof TopicNotReadyError) && !isRetriableKafkaError(error)) {
          this.fail(error);
          return;
        }
        const delayMs = backoffDelay(attempt, this.options.backoff);
        const reason = error instanceof TopicNotReadyError ? error.message : `Kafka not ready for topic ${this.options.topic}: ${describeKafkaError(error)}`;
        this.setStatus('waiting', reason);
        this.options.logger.warn({ err: reason, attempt: attempt + 1, delayMs }, 'Kafka consumer cannot start yet (retriable); retrying');
        await sleep(delayMs, this.wake);
      }
    }
  }

  private async startOnce(): Promise<void> {
    const { topic, groupId } = this.options;
    await this.admin.connect();
    await this.checkTopic();
    const consumer = this.kafka.consumer({
      groupId,
      sessionTimeout: this.options.sessionTimeoutMs,
      heartbeatInterval: 3_000,
      // How long a fetch waits for data when the topic is idle; also bounds how long stop() waits
      // for the fetch in flight.
      maxWaitTimeInMs: 1_000,
      // The gateways create the topic with their settings; a consumer must not create it by asking.
      allowAutoTopicCreation: false,
      // Restarts after a crash are ours (onCrash below), with backoff and one classification.
      retry: { retries: 5, restartOnFailure: async () => false },
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      if (this.consumer !== consumer) return;
      this.crashes = 0;
      this.setStatus('consuming', null);
      this.resolveJoined();
      this.options.onGroupJoin(payload.memberAssignment[topic] ?? []);
    });
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (this.consumer === consumer) this.onCrash(payload.error);
    });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: (payload) => this.options.onBatch(payload),
    });
  }

  /** The topic exists and each partition has a leader; TopicNotReadyError (retried) otherwise. */
  private async checkTopic(): Promise<void> {
    const { topic } = this.options;
    let partitions: { leader: number }[];
    try {
      const metadata = await this.admin.fetchTopicMetadata({ topics: [topic] });
      partitions = metadata.topics.find((t) => t.name === topic)?.partitions ?? [];
    } catch (error) {
      if (!isRetriableKafkaError(error)) throw error;
      throw new TopicNotReadyError(`waiting for Kafka topic ${topic}: ${describeKafkaError(error)}`, { cause: error });
    }
    const leaderless = partitions.filter((p) => p.leader < 0).length;
    if (partitions.length === 0 || leaderless > 0) {
      throw new TopicNotReadyError(`waiting for Kafka topic ${topic}: ${partitions.length === 0 ? 'no partitions yet' : `${leaderless} of ${partitions.length} partitions have no leader yet`}`);
    }
  }

  /** kafkajs already disconnected the crashed consumer; start a new one unless the error is final. */
  private onCrash(error: Error): void {
    if (this.stopped) return;
    if (!isRetriableKafkaError(error)) {
      this.fail(error);
      return;
    }
    this.restarts++;
    const crashes = ++this.crashes;
    const reason = `consumer crashed: ${describeKafkaError(error)}`;
    this.setStatus('restarting', reason);
    this.options.logger.warn({ err: reason, restarts: this.restarts }, 'Kafka consumer crashed on a retriable error; starting it again');
    const previous = this.running ?? Promise.resolve();
    this.running = previous.then(async () => {
      await this.discard();
      await sleep(backoffDelay(crashes - 1, this.options.backoff), this.wake);
      await this.superviseStart();
    });
  }

  private fail(error: unknown): void {
    const err = error instanceof Error ? error : new Error(String(error));
    this.setStatus('failed', `non-retriable Kafka error: ${describeKafkaError(err)}`);
    this.rejectJoined(err);
    this.options.onFatal(err);
  }

  private async discard(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = null;
    if (consumer !== null) await consumer.disconnect().catch(() => undefined);
  }
}
