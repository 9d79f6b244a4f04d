import type { Consumer, Producer } from '@platformatic/kafka';
import { baseOptions, ensureTopic, KafkaAdmin, type KafkaClientOptions, type KafkaLogger } from '../kafka/client.js';
import { ConnectionWatch } from '../kafka/connection-watch.js';
import { kafkaModule } from '../kafka/library.js';

/** What one record of the id-blocks topic says: the floor and block size its block was taken under. */
export interface BlockRecord {
  offset: bigint;
  floor: bigint;
  blockSize: number;
}

interface IdBlocksTopicOptions extends Omit<KafkaClientOptions, 'requestTimeoutMs'> {
  topic: string;
  /** Bounds one produce (acks=all) and one fetch. */
  timeoutMs: number;
  logger: KafkaLogger;
  /** When the topic is created here; absent = the broker's default. */
  replicationFactor?: number;
}

/** Where the log of the id-blocks topic currently is. */
export interface TopicPosition {
  /** Kafka's topic id (a UUID): a topic deleted and created again under the same name has another. */
  topicId: string;
  /** The offset the next record will get. */
  end: bigint;
  /** The oldest offset still retained. */
  start: bigint;
}

/**
 * Topic settings the id blocks rely on: offsets must never be reused (no unclean leader election,
 * which could elect a replica that misses acknowledged records) and records are kept long enough for
 * a gateway that was idle to read what others wrote meanwhile (30 days; they are a few dozen bytes).
 */
const TOPIC_CONFIG = [
  { name: 'cleanup.policy', value: 'delete' },
  { name: 'retention.ms', value: String(30 * 24 * 3600 * 1000) },
  { name: 'unclean.leader.election.enable', value: 'false' },
];

/** Bytes asked for per fetch; a record is under 100 bytes. */
const FETCH_BYTES = 1_048_576;

function parseRecord(offset: bigint, value: Buffer | null): BlockRecord | null {
  if (value === null) return null;
  try {
    const parsed = JSON.parse(value.toString('utf8')) as { floor?: unknown; block?: unknown };
    if (typeof parsed.floor !== 'string' || !/^\d+$/.test(parsed.floor) || typeof parsed.block !== 'number') return null;
    return { offset, floor: BigInt(parsed.floor), blockSize: parsed.block };
  } catch {
    return null;
  }
}

/**
 * The single-partition Kafka topic event-id blocks are taken from (shared/backends/ids/allocator.ts):
 * one small record per block, produced with acks=all; the offset Kafka gives it names the block.
 * Produces with @platformatic/kafka (as the event log does) and reads with its low-level fetch, so
 * no consumer group is involved.
 */
export class IdBlocksTopic {
  /** Keep-alive on both clients' sockets; silent connections closed after a call timed out. */
  private readonly watch: ConnectionWatch;

  private constructor(
    private readonly producer: Producer<string>,
    private readonly consumer: Consumer,
    private readonly options: IdBlocksTopicOptions,
    private readonly acks: number,
  ) {
    this.watch = new ConnectionWatch(options.keepAliveMs);
    this.watch.client(producer, options.brokers);
    this.watch.client(consumer, options.brokers);
  }

  /** Creates the topic when missing (one partition, TOPIC_CONFIG) and connects. */
  static async open(options: IdBlocksTopicOptions): Promise<IdBlocksTopic> {
    await IdBlocksTopic.ensure(options);
    const { Producer, Consumer, ProduceAcks, stringSerializer } = await kafkaModule();
    const common = baseOptions({ ...options, requestTimeoutMs: options.timeoutMs }, `${options.clientId}-ids`);
    const producer = new Producer<string, Buffer, Buffer, Buffer>({ ...common, serializers: { key: stringSerializer } });
    // Never joins its group: only fetch(), listOffsets() and metadata() are used.
    const consumer = new Consumer({ ...common, groupId: `${options.clientId}-ids-reader` });
    return new IdBlocksTopic(producer, consumer, options, ProduceAcks.ALL);
  }

  /** One call under the deadline (a produce or a fetch, plus the metadata lookup before it). */
  private call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return this.watch.within(fn, 2 * this.options.timeoutMs, `Kafka ${what} (id blocks)`);
  }

  get topic(): string {
    return this.options.topic;
  }

  /** Creates the topic when it is missing (deleted while gateways ran); true when this call created it. */
  ensure(): Promise<boolean> {
    return IdBlocksTopic.ensure(this.options);
  }

  private static async ensure(options: IdBlocksTopicOptions): Promise<boolean> {
    const admin = await KafkaAdmin.open({ ...options, requestTimeoutMs: options.timeoutMs });
    try {
      const { created } = await ensureTopic(admin, {
        topic: options.topic,
        partitions: 1,
        ...(options.replicationFactor === undefined ? {} : { replicationFactor: options.replicationFactor }),
        configEntries: TOPIC_CONFIG,
      });
      if (created) options.logger.info({ topic: options.topic }, 'created the kafka topic of event-id blocks');
      return created;
    } finally {
      await admin.close();
    }
  }

  /** Appends one block record (acks=all) and returns its offset. */
  async append(floor: bigint, blockSize: number): Promise<bigint> {
    const value = Buffer.from(JSON.stringify({ v: 1, floor: floor.toString(), block: blockSize }));
    const result = await this.call('send', () => this.producer.send({ messages: [{ topic: this.options.topic, partition: 0, value }], acks: this.acks })).catch((err: unknown) => {
      this.producer.clearMetadata();
      throw err;
    });
    const offset = result.offsets?.find((o) => o.topic === this.options.topic)?.offset;
    if (offset === undefined) throw new Error(`Kafka acknowledged the id block record on ${this.options.topic} without an offset`);
    return offset;
  }

  /** The topic's id and where its log starts and ends, asked of the broker now. */
  async position(): Promise<TopicPosition> {
    const topic = this.options.topic;
    const metadata = await this.call('metadata', () => this.consumer.metadata({ topics: [topic], forceUpdate: true }));
    const topicId = metadata.topics.get(topic)?.id;
    if (topicId === undefined) throw new Error(`Kafka topic ${topic} not found`);
    const [latest, earliest] = await Promise.all([
      this.call('listOffsets', () => this.consumer.listOffsets({ topics: [topic], timestamp: -1n })),
      this.call('listOffsets', () => this.consumer.listOffsets({ topics: [topic], timestamp: -2n })),
    ]);
    return { topicId, end: latest.get(topic)?.[0] ?? 0n, start: earliest.get(topic)?.[0] ?? 0n };
  }

  /** The topic id now (after a produce: proves which incarnation of the topic the record went to). */
  async topicId(): Promise<string> {
    const metadata = await this.call('metadata', () => this.consumer.metadata({ topics: [this.options.topic], forceUpdate: true }));
    const id = metadata.topics.get(this.options.topic)?.id;
    if (id === undefined) throw new Error(`Kafka topic ${this.options.topic} not found`);
    return id;
  }

  /**
   * The retained records with from <= offset < to (those retention removed are skipped). Records
   * that are not block records are left out.
   */
  async read(from: bigint, to: bigint): Promise<BlockRecord[]> {
    const out: BlockRecord[] = [];
    const topic = this.options.topic;
    let next = from;
    for (let first = true; next < to; first = false) {
      // Fresh on the first request: a topic created anew has another id, and a cached one would fail.
      const metadata = await this.call('metadata', () => this.consumer.metadata({ topics: [topic], forceUpdate: first }));
      const info = metadata.topics.get(topic);
      const leader = info?.partitions[0]?.leader;
      if (info === undefined || leader === undefined || leader < 0) throw new Error(`Kafka topic ${topic} has no leader`);
      const response = await this.call('fetch', () => this.consumer.fetch({
        node: leader,
        maxWaitTime: 0,
        minBytes: 0,
        maxBytes: FETCH_BYTES,
        topics: [{ topicId: info.id, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: next, lastFetchedEpoch: -1, partitionMaxBytes: FETCH_BYTES }] }],
      }));
      const partition = response.responses[0]?.partitions[0];
      if (partition === undefined) throw new Error(`Kafka answered no partition of ${topic}`);
      if (partition.errorCode === 1 /* OFFSET_OUT_OF_RANGE: removed by retention meanwhile */) {
        if (partition.logStartOffset > next) {
          next = partition.logStartOffset;
          continue;
        }
      }
      if (partition.errorCode !== 0) throw new Error(`fetching ${topic} failed with Kafka error ${partition.errorCode}`);
      let progressed = false;
      for (const batch of partition.records ?? []) {
        for (const record of batch.records) {
          const offset = batch.firstOffset + BigInt(record.offsetDelta);
          if (offset < next || offset >= to) continue;
          const parsed = parseRecord(offset, record.value);
          if (parsed !== null) out.push(parsed);
          next = offset + 1n;
          progressed = true;
        }
        const last = batch.firstOffset + BigInt(batch.lastOffsetDelta) + 1n;
        if (last > next && last <= to) {
          next = last;
          progressed = true;
        }
      }
      if (!progressed) {
        // Nothing retained between here and the high watermark (or past `to`): done.
        if (partition.highWatermark <= next || partition.logStartOffset >= to) break;
        if (partition.logStartOffset > next) next = partition.logStartOffset;
        else throw new Error(`fetching ${topic} from offset ${next} returned nothing below the high watermark ${partition.highWatermark}`);
      }
    }
    return out;
  }

  async close(): Promise<void> {
    await this.watch.closeWithin(Promise.allSettled([this.producer.close(), this.consumer.close()]));
  }
}
