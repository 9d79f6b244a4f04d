import { Partitioners, type PartitionMetadata } from 'kafkajs';

/** Keys whose partition is remembered (about 100 bytes each). */
const PARTITION_CACHE_LIMIT = 100_000;

/**
 * The partition kafkajs' default (Java-compatible murmur2) partitioner picks for a key, computed
 * here so that batching knows it before sending. Same function, so the mapping is exactly what
 * a producer without explicit partitions (or the Java client) would use.
 */
export class KeyPartitioner {
  private readonly partitioner = Partitioners.DefaultPartitioner();
  private metadata: PartitionMetadata[] = [];

  constructor(
    private readonly topic: string,
    count: number,
  ) {
    this.count = count;
  }

  get count(): number {
    return this.metadata.length;
  }

  /** Partitions only ever grow; keys then map anew, as with any Kafka producer. */
  set count(n: number) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`partition count ${n}`);
    if (n === this.metadata.length) return;
    this.metadata = Array.from({ length: n }, (_, partitionId) => ({ partitionErrorCode: 0, partitionId, leader: 0, replicas: [0], isr: [0] }));
    this.known.clear();
  }

  /**
   * Keys are provider|Dominio: a fleet's few thousand vehicles, over and over. murmur2 in
   * JavaScript and the partitioner's argument objects were 3% of a gateway under load.
   */
  private readonly known = new Map<string, number>();

  partition(key: string): number {
    let partition = this.known.get(key);
    if (partition === undefined) {
      partition = this.partitioner({ topic: this.topic, partitionMetadata: this.metadata, message: { key, value: null } });
      if (this.known.size >= PARTITION_CACHE_LIMIT) this.known.clear();
      this.known.set(key, partition);
    }
    return partition;
  }
}
