import type { Admin, BaseOptions, Connection, ConnectionPool } from '@platformatic/kafka';
import { TimeoutError, withTimeout } from '../../util/async.js';
import type { Config } from '../../config/index.js';
import { kafkaSecurityFromConfig, platformaticSecurity, type KafkaSecurity } from './security.js';
import { isKafkaTimeout, isTopicExistsError } from './errors.js';
import { errorMessage } from '../../util/error-message.js';

/**
 * The one Kafka client library of every process: @platformatic/kafka (the event log's producer,
 * the id blocks, the admin calls, the live feed, the id recovery's read and the worker's consumer).
 * It is loaded on first use, so the embedded mode never loads it. This module gives each client
 * the same connection rules (below) and the admin calls the processes make.
 */

/** The subset of a pino logger the Kafka modules write to. */
export interface KafkaLogger {
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
  error(o: object, m: string): void;
}

export type KafkaModule = typeof import('@platformatic/kafka');

let loading: Promise<KafkaModule> | null = null;
/** Set once the import resolved: every client is made after it, so ConnectionWatch can use it. */
let loaded: KafkaModule | null = null;

/** The library, imported once per process on first use. */
export function kafkaModule(): Promise<KafkaModule> {
  loading ??= import('@platformatic/kafka').then((m) => (loaded = m));
  return loading;
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
export const DEFAULT_KEEPALIVE_MS = 5000;

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

interface Broker {
  host: string;
  port: number;
}

/** What ConnectionWatch needs of a client: its pool, its connect events and what it knows of the brokers. */
interface WatchedClient {
  readonly connections: ConnectionPool;
  readonly currentMetadata: { brokers: Map<number, Broker> } | undefined;
  on(event: 'client:broker:connect', listener: (payload: { broker: Broker; connection: Connection }) => void): unknown;
}

type BootstrapGetter = (callback: (error: Error | null, connection?: Connection) => void) => void;

/** How long a broker whose connection was dropped silent is asked for metadata only after the others. */
const SUSPECT_MS = 60_000;

const brokerKey = (b: Broker): string => `${b.host}:${b.port}`;

function parseBroker(address: string): Broker {
  const i = address.lastIndexOf(':');
  return { host: address.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(address.slice(i + 1)) };
}

/**
 * The connections of a client (and of extra pools it uses): TCP keep-alive on each socket, and
 * when each last received a byte. After a request timed out, the connections that stayed silent
 * since it was sent are destroyed (dropSilent): a stalled peer or a black-holed path leaves a
 * connection open with nothing coming back, and @platformatic/kafka 1.x keeps such a connection
 * after a request timeout, so every later request would go into it too. A late reply cannot be
 * matched anymore either (the library drops the correlation), so the connection is never reused.
 * Keep-alive catches a peer that vanished without a word; only the deadline catches a path that
 * still acknowledges bytes and forwards nothing.
 */
/** A connection that never received a byte is spared this long: another request may just have opened it. */
const YOUNG_MS = 200;
/** How long a client's own close may take (LeaveGroup, in-flight requests) before its sockets are destroyed. */
export const CLOSE_GRACE_MS = 2000;

export class ConnectionWatch {
  private readonly lastRead = new WeakMap<Connection, number>();
  private readonly connectedAt = new WeakMap<Connection, number>();
  private readonly brokerOf = new WeakMap<Connection, string>();
  private readonly pools = new Set<ConnectionPool>();
  /** Brokers a silent connection was dropped from, and when: asked for metadata last. */
  private readonly suspects = new Map<string, number>();
  /** Connections destroyed so far (tests, logs). */
  dropped = 0;

  constructor(private readonly keepAliveMs: number = DEFAULT_KEEPALIVE_MS) {}

  /**
   * Watches a client's connections. With its bootstrap brokers it also chooses where the client
   * asks for metadata: the library asks the first bootstrap broker it can connect to, and a stalled
   * broker still accepts connections (its kernel does) while answering nothing, so every metadata
   * request of every client would go to it for as long as it stalls. Brokers whose connection was
   * dropped silent are asked last instead, until one of their connections answers again.
   */
  client(client: WatchedClient, bootstrap?: readonly string[]): void {
    client.on('client:broker:connect', ({ broker, connection }) => this.adopt(connection, broker));
    this.pools.add(client.connections);
    if (bootstrap === undefined || loaded === null) return;
    const configured = bootstrap.map(parseBroker);
    // The library's protected hook for this (a symbol it exports for subclasses), set on the instance.
    (client as unknown as Record<symbol, BootstrapGetter>)[loaded.kGetBootstrapConnection] = (callback) => {
      const discovered = client.currentMetadata === undefined ? [] : [...client.currentMetadata.brokers.values()];
      const seen = new Set<string>();
      const candidates = [...configured, ...discovered].filter((b) => !seen.has(brokerKey(b)) && seen.add(brokerKey(b)));
      client.connections.getFirstAvailable(this.answeringFirst(candidates), callback);
    };
  }

  pool(pool: ConnectionPool): void {
    pool.on('connect', ({ broker, connection }) => this.adopt(connection, broker));
    this.pools.add(pool);
  }

  /** The brokers in the same order, those suspected of stalling after the others. */
  answeringFirst<B extends Broker>(brokers: B[]): B[] {
    if (this.suspects.size === 0) return brokers;
    const now = performance.now();
    const suspect = (b: B): boolean => now - (this.suspects.get(brokerKey(b)) ?? Number.NEGATIVE_INFINITY) < SUSPECT_MS;
    return [...brokers.filter((b) => !suspect(b)), ...brokers.filter(suspect)];
  }

  private adopt(connection: Connection, broker: Broker): void {
    const socket = connection.socket;
    const key = brokerKey(broker);
    this.connectedAt.set(connection, performance.now());
    this.brokerOf.set(connection, key);
    socket.setKeepAlive(true, this.keepAliveMs);
    socket.on('data', () => {
      this.lastRead.set(connection, performance.now());
      if (this.suspects.size > 0) this.suspects.delete(key);
    });
  }

  /**
   * Destroys every open connection that received nothing since `since` (performance.now()), or
   * nothing at all while older than YOUNG_MS (the request that timed out may have opened it).
   */
  dropSilent(since: number): number {
    let n = 0;
    const now = performance.now();
    for (const pool of this.pools) {
      for (const [, connection] of pool) {
        const socket = connection.socket as Connection['socket'] | undefined;
        if (socket === undefined || socket.destroyed) continue;
        const read = this.lastRead.get(connection);
        const silent = read === undefined ? (this.connectedAt.get(connection) ?? 0) <= now - YOUNG_MS || since === Number.POSITIVE_INFINITY : read <= since;
        if (silent) {
          socket.destroy();
          const key = this.brokerOf.get(connection);
          if (key !== undefined && since !== Number.POSITIVE_INFINITY) this.suspects.set(key, performance.now());
          n++;
        }
      }
    }
    this.dropped += n;
    return n;
  }

  /**
   * Waits up to `graceMs` for a client's own close (a consumer leaves its group, requests in
   * flight are answered), then destroys whatever connection is still open: a stalled broker must
   * not hold a shutdown or a session restart. Never rejects; the timer never outlives the close.
   */
  async closeWithin(closing: Promise<unknown>, graceMs: number = CLOSE_GRACE_MS): Promise<void> {
    await withTimeout(closing, graceMs, 'Kafka client close').catch(() => undefined);
    this.dropSilent(Number.POSITIVE_INFINITY);
  }

  /**
   * `call` under a deadline of `ms`: when it does not answer in time, or the library reports a
   * request timeout, the silent connections are dropped before the error is passed on.
   */
  async within<T>(call: () => Promise<T>, ms: number, what: string): Promise<T> {
    const since = performance.now();
    try {
      return await withTimeout(call(), ms, what);
    } catch (error) {
      if (error instanceof TimeoutError || isKafkaTimeout(error)) this.dropSilent(since);
      throw error;
    }
  }
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
