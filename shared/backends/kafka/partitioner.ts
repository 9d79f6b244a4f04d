/** Keys whose partition is remembered (about 100 bytes each). */
const PARTITION_CACHE_LIMIT = 100_000;

/** Kafka's murmur2 of a key's bytes (a signed 32-bit result, as the Java client computes it). */
type KeyHash = (key: Buffer) => number;

/**
 * The partition the Java client's default partitioner picks for a key (murmur2, made positive,
 * modulo the partition count), computed here so that batching knows it before sending. Same
 * function, so the mapping is exactly what any other producer would use.
 */
export class KeyPartitioner {
  /**
   * With the murmur2 of @platformatic/kafka, the client the event log produces with: loaded here,
   * on first use like the producer, so the embedded mode never loads it.
   */
  static async open(topic: string, count: number): Promise<KeyPartitioner> {
    const { murmur2 } = await import('@platformatic/kafka');
    return new KeyPartitioner(topic, count, (key) => murmur2(key));
  }

  private partitions = 0;

  constructor(
    readonly topic: string,
    count: number,
    private readonly hash: KeyHash,
  ) {
    this.count = count;
  }

  get count(): number {
    return this.partitions;
  }

  /** Partitions only ever grow; keys then map anew, as with any Kafka producer. */
  set count(n: number) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`partition count ${n}`);
    if (n === this.partitions) return;
    this.partitions = n;
    this.known.clear();
  }

  /**
   * Keys are provider|Dominio: a fleet's few thousand vehicles, over and over. murmur2 in
   * JavaScript and the partitioner's argument objects showed in a loaded gateway's CPU profile
   * (npm run bench:profile).
   */
  private readonly known = new Map<string, number>();

  partition(key: string): number {
    let partition = this.known.get(key);
    if (partition === undefined) {
      // Java's Utils.toPositive, then the modulo.
      partition = (this.hash(Buffer.from(key, 'utf8')) & 0x7fffffff) % this.partitions;
      if (this.known.size >= PARTITION_CACHE_LIMIT) this.known.clear();
      this.known.set(key, partition);
    }
    return partition;
  }
}
