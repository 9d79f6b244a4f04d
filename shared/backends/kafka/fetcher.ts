import type { Consumer } from '@platformatic/kafka';
import { baseOptions, callDeadlineMs, type KafkaClientOptions } from './client.js';
import { ConnectionWatch } from './connection-watch.js';
import { kafkaModule } from './library.js';
import { isLeadershipError } from './errors.js';

/** One record as the readers of a topic see it. */
export interface ConsumedMessage {
  offset: bigint;
  /** The record's timestamp (epoch ms). */
  timestamp: bigint;
  key: Buffer | null;
  value: Buffer | null;
}

/** What one fetch brought for one partition. */
export interface FetchedPartition {
  partition: number;
  /** The records at or past the position asked for, in offset order (control records left out). */
  messages: ConsumedMessage[];
  /** Where to fetch next: past everything this fetch covered (control batches included). */
  next: bigint;
  highWatermark: bigint;
  /** The position was out of the retained range: the partition's log now starts here. */
  outOfRange: bigint | null;
}

export interface FetcherOptions extends KafkaClientOptions {
  topic: string;
  /** Longest a fetch waits at the broker for records when there are none. */
  maxWaitMs: number;
  /** Bytes a fetch brings at most, per partition and in all. Default 4 MiB and 16 MiB. */
  partitionMaxBytes?: number;
  maxBytes?: number;
}

type FetchResponse = Awaited<ReturnType<Consumer['fetch']>>;

const CONTROL_BATCH = 1 << 5;
const OFFSET_OUT_OF_RANGE = 1;

/**
 * Reads partitions of one topic from positions the caller keeps, without a consumer group: the
 * live feed (from the end), the id recovery (a range) and the worker (the group's commits, the
 * group membership being another client) read with it. Each fetch goes to the partitions' leaders
 * under a deadline (maxWaitMs + the request timeout); a leader that does not answer in time has
 * its silent connections destroyed (ConnectionWatch), and leadership errors refresh the metadata.
 */
export class PartitionFetcher {
  readonly watch: ConnectionWatch;
  private topicId: string | null = null;

  private constructor(
    private readonly client: Consumer,
    private readonly options: FetcherOptions,
  ) {
    this.watch = new ConnectionWatch(options.keepAliveMs);
    this.watch.client(client, options.brokers);
  }

  static async open(options: FetcherOptions): Promise<PartitionFetcher> {
    const { Consumer } = await kafkaModule();
    // A Consumer for its fetch, listOffsets and metadata calls only: it never joins its group.
    const client = new Consumer({ ...baseOptions(options), groupId: `${options.clientId}-reader`, maxWaitTime: options.maxWaitMs });
    return new PartitionFetcher(client, options);
  }

  get topic(): string {
    return this.options.topic;
  }

  private deadline(extraMs = 0): number {
    return callDeadlineMs(this.options, extraMs);
  }

  /** Each partition's first retained offset ('earliest') or the offset its next record gets ('latest'). */
  async offsets(which: 'earliest' | 'latest'): Promise<bigint[]> {
    const { topic } = this.options;
    const answer = await this.watch.within(() => this.client.listOffsets({ topics: [topic], timestamp: which === 'earliest' ? -2n : -1n }), this.deadline(), 'Kafka listOffsets');
    const offsets = answer.get(topic);
    if (offsets === undefined) throw new Error(`Kafka answered no offsets of ${topic}`);
    return offsets;
  }

  /** The topic's partition count, asked of the broker now. */
  async partitionCount(): Promise<number> {
    const { topic } = this.options;
    const metadata = await this.watch.within(() => this.client.metadata({ topics: [topic], forceUpdate: true }), this.deadline(), 'Kafka metadata');
    const info = metadata.topics.get(topic);
    if (info === undefined) throw new Error(`Kafka topic ${topic} not found`);
    this.topicId = info.id;
    return info.partitionsCount;
  }

  /**
   * One fetch of each given partition from its position, one request per leader, in parallel.
   * Partitions whose leader is unknown or moved are left out of the answer (asked again next time).
   */
  async fetch(positions: ReadonlyMap<number, bigint>): Promise<FetchedPartition[]> {
    if (positions.size === 0) return [];
    const { topic } = this.options;
    const metadata = await this.watch.within(() => this.client.metadata({ topics: [topic] }), this.deadline(), 'Kafka metadata');
    const info = metadata.topics.get(topic);
    if (info === undefined) throw new Error(`Kafka topic ${topic} not found`);
    if (this.topicId !== null && this.topicId !== info.id) throw new Error(`Kafka topic ${topic} was deleted and created again`);
    this.topicId = info.id;
    const byLeader = new Map<number, number[]>();
    for (const partition of positions.keys()) {
      const leader = info.partitions[partition]?.leader ?? -1;
      if (leader < 0) continue;
      const list = byLeader.get(leader) ?? [];
      list.push(partition);
      byLeader.set(leader, list);
    }
    if (byLeader.size === 0) {
      this.client.clearMetadata();
      return [];
    }
    const partitionMaxBytes = this.options.partitionMaxBytes ?? 4 * 1024 * 1024;
    const answers = await Promise.all(
      [...byLeader].map(([node, partitions]) =>
        this.watch
          .within(
            () =>
              this.client.fetch({
                node,
                maxWaitTime: this.options.maxWaitMs,
                minBytes: 1,
                maxBytes: this.options.maxBytes ?? 16 * 1024 * 1024,
                topics: [
                  {
                    topicId: info.id,
                    partitions: partitions.map((partition) => ({
                      partition,
                      currentLeaderEpoch: -1,
                      fetchOffset: positions.get(partition)!,
                      lastFetchedEpoch: -1,
                      partitionMaxBytes,
                    })),
                  },
                ],
              }),
            this.deadline(this.options.maxWaitMs),
            'Kafka fetch',
          )
          .catch((error: unknown) => {
            // Leadership moved between the metadata and the fetch: ask again next time.
            if (isLeadershipError(error)) {
              this.client.clearMetadata();
              return null;
            }
            throw error;
          }),
      ),
    );
    const out: FetchedPartition[] = [];
    for (const answer of answers) if (answer !== null) this.collect(answer, positions, out);
    return out;
  }

  private collect(answer: FetchResponse, positions: ReadonlyMap<number, bigint>, out: FetchedPartition[]): void {
    for (const topic of answer.responses) {
      for (const p of topic.partitions) {
        const from = positions.get(p.partitionIndex);
        if (from === undefined) continue;
        if (p.errorCode === OFFSET_OUT_OF_RANGE) {
          out.push({ partition: p.partitionIndex, messages: [], next: from, highWatermark: p.highWatermark, outOfRange: p.logStartOffset });
          continue;
        }
        if (p.errorCode !== 0) {
          // Leadership moved or a replica is behind: the next fetch asks fresh metadata.
          this.client.clearMetadata();
          continue;
        }
        const messages: ConsumedMessage[] = [];
        let next = from;
        for (const batch of p.records ?? []) {
          const end = batch.firstOffset + BigInt(batch.lastOffsetDelta) + 1n;
          if ((batch.attributes & CONTROL_BATCH) === 0) {
            for (const record of batch.records) {
              const offset = batch.firstOffset + BigInt(record.offsetDelta);
              if (offset < from) continue;
              messages.push({ offset, timestamp: batch.firstTimestamp + record.timestampDelta, key: record.key ?? null, value: record.value ?? null });
            }
          }
          if (end > next) next = end;
        }
        out.push({ partition: p.partitionIndex, messages, next, highWatermark: p.highWatermark, outOfRange: null });
      }
    }
  }

  async close(): Promise<void> {
    await this.watch.closeWithin(this.client.close());
  }
}
