import type { Admin, BaseOptions } from '@platformatic/kafka';
import type { Config } from '../../config/index.js';
import { kafkaSecurityFromConfig, platformaticSecurity, type KafkaSecurity } from './security.js';
import { isTopicExistsError } from './errors.js';
import { ConnectionWatch } from './connection-watch.js';
import { kafkaModule } from './library.js';
import { errorMessage } from '../../util/error-message.js';

/**
 * The one Kafka client library of every process: @platformatic/kafka (the event log's producer,
 * the id blocks, the admin calls, the live feed, the id recovery's read and the worker's consumer).
 * It is loaded on first use (library.ts), so the embedded mode never loads it. This module gives
 * each client the same options (baseOptions) and holds the admin calls the processes make; the
 * connection rules every client shares (keep-alive, silent connections dropped, a bounded close)
 * are ConnectionWatch's (connection-watch.ts).
 */

/** The subset of a pino logger the Kafka modules write to. */
export interface KafkaLogger {
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
  error(o: object, m: string): void;
}

/** How every Kafka client of a process connects (config.kafka, plus the deadline of its calls). */
export interface KafkaClientOptions {
  brokers: string[];
  clientId: string;
  /**
   * Deadline of one request. A request without an answer by then fails, and the connections that
   * received nothing meanwhile are destroyed: the next request opens a fresh one.
   */
  requestTimeoutMs: number;
  /** TCP connect (and handshake) deadline of each connection. Default 1000 ms. */
  connectTimeoutMs?: number;
  /** Idle time before the first TCP keep-alive probe on every connection. Default 5000 ms. */
  keepAliveMs?: number;
  /** TLS and SASL of every connection (security.ts, from KAFKA_SECURITY_PROTOCOL...); default plaintext. */
  security?: KafkaSecurity;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 1000;

/**
 * The deadline of one call of ours (plus `extraMs` a call waits on purpose): the library's own
 * request timeout fires first; this one also bounds connecting and the metadata lookups a call
 * makes before its request.
 */
export function callDeadlineMs(options: Pick<KafkaClientOptions, 'requestTimeoutMs' | 'connectTimeoutMs'>, extraMs = 0): number {
  return extraMs + 2 * options.requestTimeoutMs + (options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS);
}

/** The client options of a configuration (KAFKA_BROKERS must be set). */
export function kafkaClientOptions(kafka: Config['kafka'], clientId: string = kafka.clientId): KafkaClientOptions {
  if (kafka.brokers === null) throw new Error('KAFKA_BROKERS is not set.');
  return {
    brokers: kafka.brokers,
    clientId,
    requestTimeoutMs: kafka.requestTimeoutMs,
    connectTimeoutMs: kafka.connectTimeoutMs,
    keepAliveMs: kafka.keepAliveMs,
    // TLS and SASL, read (CA, client certificate) and checked once here for every client.
    security: kafkaSecurityFromConfig(kafka),
  };
}

/**
 * The options every client is created with: the library's own retries are off (each caller
 * decides what is tried again, and when), and its request timeout is the deadline.
 */
export function baseOptions(options: KafkaClientOptions, clientId = options.clientId): BaseOptions {
  return {
    clientId,
    bootstrapBrokers: options.brokers,
    connectTimeout: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    requestTimeout: options.requestTimeoutMs,
    timeout: options.requestTimeoutMs,
    retries: 0,
    autocreateTopics: false,
    ...(options.security === undefined ? {} : platformaticSecurity(options.security)),
  };
}

export interface TopicSpec {
  topic: string;
  /** Absent: the broker's num.partitions. */
  partitions?: number;
  /** Absent: the broker's default.replication.factor. */
  replicationFactor?: number;
  /** Topic-level settings when this call creates it. */
  configEntries?: { name: string; value: string }[];
}

/** Where a partition's log starts and ends. */
export interface PartitionOffsets {
  partition: number;
  /** The oldest offset retained. */
  low: bigint;
  /** The offset the next record will get. */
  high: bigint;
}

/**
 * The admin calls of the gateway and the worker (topic creation, offsets, the worker group's
 * commits), each under the client's deadline. One client per user; it connects on first use.
 */
export class KafkaAdmin {
  readonly watch: ConnectionWatch;

  private constructor(
    private readonly admin: Admin,
    private readonly options: KafkaClientOptions,
  ) {
    this.watch = new ConnectionWatch(options.keepAliveMs);
    this.watch.client(admin, options.brokers);
  }

  static async open(options: KafkaClientOptions): Promise<KafkaAdmin> {
    const { Admin } = await kafkaModule();
    return new KafkaAdmin(new Admin(baseOptions(options)), options);
  }

  private call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return this.watch.within(fn, callDeadlineMs(this.options), `Kafka ${what}`);
  }

  listTopics(): Promise<string[]> {
    return this.call('listTopics', () => this.admin.listTopics());
  }

  /** Creates the topic; false when it exists already (another gateway created it first). */
  async createTopic(spec: TopicSpec): Promise<boolean> {
    try {
      await this.call('createTopics', () =>
        this.admin.createTopics({
          topics: [spec.topic],
          ...(spec.partitions === undefined ? {} : { partitions: spec.partitions }),
          ...(spec.replicationFactor === undefined ? {} : { replicas: spec.replicationFactor }),
          ...(spec.configEntries === undefined ? {} : { configs: spec.configEntries }),
        }),
      );
      return true;
    } catch (error) {
      if (isTopicExistsError(error)) return false;
      throw error;
    }
  }

  deleteTopics(topics: string[]): Promise<void> {
    return this.call('deleteTopics', () => this.admin.deleteTopics({ topics }));
  }

  /** The leader of each partition (-1: none), asked of the broker now; throws for an unknown topic. */
  async leaders(topic: string): Promise<number[]> {
    const metadata = await this.call('metadata', () => this.admin.metadata({ topics: [topic], forceUpdate: true }));
    const info = metadata.topics.get(topic);
    if (info === undefined) throw new Error(`Kafka topic ${topic} not found`);
    return Array.from({ length: info.partitionsCount }, (_, i) => info.partitions[i]?.leader ?? -1);
  }

  /** Each partition's low and high watermark. */
  async offsets(topic: string): Promise<PartitionOffsets[]> {
    const count = (await this.leaders(topic)).length;
    const ask = (timestamp: bigint) =>
      this.call('listOffsets', () =>
        this.admin.listOffsets({ topics: [{ name: topic, partitions: Array.from({ length: count }, (_, partitionIndex) => ({ partitionIndex, timestamp })) }] }),
      );
    const [earliest, latest] = await Promise.all([ask(-2n), ask(-1n)]);
    const byPartition = (answer: Awaited<ReturnType<typeof ask>>) => {
      const out = new Map<number, bigint>();
      for (const t of answer) if (t.name === topic) for (const p of t.partitions) out.set(p.partitionIndex, p.offset);
      return out;
    };
    const low = byPartition(earliest);
    const high = byPartition(latest);
    return Array.from({ length: count }, (_, partition) => ({ partition, low: low.get(partition) ?? 0n, high: high.get(partition) ?? 0n }));
  }

  /** The group's committed offset per partition of the topic (partitions without one are absent). */
  async committed(groupId: string, topic: string): Promise<Map<number, bigint>> {
    const groups = await this.call('listConsumerGroupOffsets', () => this.admin.listConsumerGroupOffsets({ groups: [groupId] }));
    const out = new Map<number, bigint>();
    for (const g of groups) {
      if (g.groupId !== groupId) continue;
      for (const t of g.topics) if (t.name === topic) for (const p of t.partitions) if (p.committedOffset >= 0n) out.set(p.partitionIndex, p.committedOffset);
    }
    return out;
  }

  async close(): Promise<void> {
    await this.watch.closeWithin(this.admin.close());
  }
}

/**
 * Whether the brokers answer a client made for this question alone (the stuck watchdog's check):
 * the topic's metadata names a leader for every partition. The client is closed after.
 */
export async function kafkaAnswers(options: KafkaClientOptions, topic: string): Promise<boolean> {
  const admin = await KafkaAdmin.open({ ...options, clientId: `${options.clientId}-probe` });
  try {
    const leaders = await admin.leaders(topic);
    return leaders.length > 0 && leaders.every((l) => l >= 0);
  } catch {
    return false;
  } finally {
    await admin.close();
  }
}

/**
 * Creates the topic unless it exists, then waits until every partition has a leader that serves
 * it. Listing first means a deployment whose principal may not create topics still starts when
 * ops created it. Says whether this call created it, and the topic's partition count.
 */
export async function ensureTopic(admin: KafkaAdmin, spec: TopicSpec, timeoutMs = 30_000): Promise<{ created: boolean; partitions: number }> {
  const existing = await admin.listTopics();
  const created = existing.includes(spec.topic) ? false : await admin.createTopic(spec);
  return { created, partitions: await waitForTopic(admin, spec.topic, timeoutMs) };
}

/**
 * Waits until every partition of the topic has a leader that serves it; returns their count.
 * Metadata names the leaders a moment before they serve (a KRaft broker then still answers
 * NOT_LEADER_OR_FOLLOWER), so this also asks each leader for its offsets.
 */
export async function waitForTopic(admin: KafkaAdmin, topic: string, timeoutMs = 30_000): Promise<number> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const leaders = await admin.leaders(topic);
      if (leaders.length > 0 && leaders.every((l) => l >= 0)) {
        await admin.offsets(topic);
        return leaders.length;
      }
      last = new Error(`topic ${topic}: ${leaders.length} partitions, not all served by a leader yet`);
    } catch (error) {
      last = error;
    }
    if (Date.now() >= until) {
      throw new Error(`Kafka topic ${topic} not ready within ${timeoutMs} ms: ${errorMessage(last)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
