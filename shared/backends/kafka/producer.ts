import type { Producer } from '@platformatic/kafka';
import { baseOptions, type KafkaClientOptions } from './client.js';
import { ConnectionWatch } from './connection-watch.js';
import { kafkaModule } from './library.js';

/** A message with its partition chosen (by KeyPartitioner, so batching knows it before sending). */
export interface PartitionedMessage {
  key: string;
  value: Buffer;
  partition: number;
  /** Record headers (what the value is: wire.ts WIRE_HEADERS); one object shared by many messages. */
  headers?: Readonly<Record<string, string>>;
}

export interface SendRecord {
  topic: string;
  messages: PartitionedMessage[];
}

/**
 * What the send queue needs of a producer: one send, resolved once the broker acknowledged every
 * message with acks=all, rejected otherwise. (A kafkajs Producer fits it too; the tests use that.)
 */
export interface RecordSender {
  send(record: SendRecord): Promise<unknown>;
  disconnect(): Promise<void>;
  /**
   * A send started at `since` (performance.now()) got no answer within its deadline: the
   * connections that received nothing since then are dead or stalled; close them so the next send
   * opens a fresh one instead of queuing behind them.
   */
  timedOut?(since: number): void;
}

interface EventProducerOptions extends Omit<KafkaClientOptions, 'requestTimeoutMs'> {
  /** Bounds one produce request, and the broker's wait for the in-sync replicas. */
  sendTimeoutMs: number;
  /** Produce requests in flight on one broker connection. */
  maxInFlightSends: number;
}

const NO_HEADERS = new Map<Buffer, Buffer>();
const encodedHeaders = new WeakMap<object, Map<Buffer, Buffer>>();

/** Headers as the client sends them (Buffers), encoded once per headers object, not per message. */
function headerBuffers(headers: Readonly<Record<string, string>> | undefined): Map<Buffer, Buffer> {
  if (headers === undefined) return NO_HEADERS;
  let map = encodedHeaders.get(headers);
  if (map === undefined) {
    map = new Map(Object.entries(headers).map(([k, v]) => [Buffer.from(k), Buffer.from(v)]));
    encodedHeaders.set(headers, map);
  }
  return map;
}

/** How often followPartitions asks for the topic's partition count, by default. */
const PARTITION_CHECK_MS = 60_000;

/**
 * The event log's producer: @platformatic/kafka, a pure-JavaScript client cheaper per message than
 * kafkajs (bench/kafka-clients.ts; bench/LOG.md, "2026-11-23: which Kafka producer"). Loaded
 * on first use, so the embedded mode never loads it. Its own retries are off: the send queue decides what is sent
 * again (leadership moves only). A send refused because the partition's leader moved is repeated
 * once by the client against fresh metadata, inside the same send, so nothing overtakes it.
 */
export class EventProducer implements RecordSender {
  private partitionTimer: NodeJS.Timeout | undefined;
  /** Keep-alive on its sockets; silent connections closed after a send timed out. */
  readonly watch: ConnectionWatch;

  private constructor(
    private readonly producer: Producer<string>,
    /** ProduceAcks.ALL: every in-sync replica has the messages before a send succeeds. */
    private readonly acks: number,
    private readonly options: EventProducerOptions,
  ) {
    this.watch = new ConnectionWatch(options.keepAliveMs);
    this.watch.client(producer, options.brokers);
  }

  static async open(options: EventProducerOptions): Promise<EventProducer> {
    const { Producer, ProduceAcks, stringSerializer } = await kafkaModule();
    const producer = new Producer<string, Buffer, Buffer, Buffer>({
      ...baseOptions({ ...options, requestTimeoutMs: options.sendTimeoutMs }),
      maxInflights: Math.max(1, options.maxInFlightSends),
      serializers: { key: stringSerializer },
    });
    return new EventProducer(producer, ProduceAcks.ALL, options);
  }

  timedOut(since: number): void {
    this.watch.dropSilent(since);
  }

  async send(record: SendRecord): Promise<void> {
    const { topic } = record;
    const messages = record.messages.map((m) => ({ topic, key: m.key, value: m.value, partition: m.partition, headers: headerBuffers(m.headers) }));
    try {
      // Per send: the client's constructor option is not applied to sends (they default to acks=1).
      await this.producer.send({ messages, acks: this.acks });
    } catch (error) {
      // Whatever failed, the next send looks the leaders up again rather than trusting the cache.
      this.producer.clearMetadata();
      throw error;
    }
  }

  /** The topic's partition count, asked of the broker now. */
  async partitionCount(topic: string): Promise<number> {
    const metadata = await this.watch.within(() => this.producer.metadata({ topics: [topic], forceUpdate: true }), this.options.sendTimeoutMs, 'Kafka metadata');
    return metadata.topics.get(topic)?.partitionsCount ?? 0;
  }

  /** Calls `onCount` with the topic's partition count every `everyMs` until disconnect(). */
  followPartitions(topic: string, onCount: (count: number) => void, everyMs = PARTITION_CHECK_MS): void {
    clearInterval(this.partitionTimer);
    this.partitionTimer = setInterval(() => {
      this.partitionCount(topic).then(
        (count) => {
          if (count > 0) onCount(count);
        },
        () => {}, // a failing broker is reported by the sends
      );
    }, everyMs);
    this.partitionTimer.unref();
  }

  disconnect(): Promise<void> {
    clearInterval(this.partitionTimer);
    return this.watch.closeWithin(this.producer.close());
  }
}
