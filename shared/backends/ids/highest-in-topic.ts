import { randomBytes } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { BINARY_WIRE_VERSION } from '../../events/wire.js';
import { protobufMessageId } from '../../events/protobuf-decode.js';

/** The start of every JSON message encodeEvent writes: `{"v":1,"id":"123",...`. */
const ID_PREFIX = /^\{"v":\d+,"id":"(\d+)"/;

/** The event id of a message value, or null when it has none (poison, foreign writer). */
export function messageId(value: Buffer | null): bigint | null {
  if (value === null) return null;
  // Version 2: byte 0 is 2, byte 1 the field count, then the id (u64, little-endian).
  if (value[0] === BINARY_WIRE_VERSION) return value.length >= 10 ? value.readBigUInt64LE(2) : null;
  // Version 3 (protobuf): anything that does not start as JSON does.
  if (value[0] !== 0x7b) return protobufMessageId(value);
  const head = ID_PREFIX.exec(value.toString('latin1', 0, 48));
  if (head !== null) return BigInt(head[1]!);
  try {
    const parsed: unknown = JSON.parse(value.toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null && 'id' in parsed && typeof parsed.id === 'string' && /^\d+$/.test(parsed.id)) return BigInt(parsed.id);
  } catch {
    // not JSON: no id
  }
  return null;
}

interface HighestIdOptions {
  topic: string;
  /**
   * Read each partition from this group's committed offset (the worker's: everything before it is
   * in ClickHouse) instead of from the oldest retained message. null: the whole retained log.
   */
  fromGroup: string | null;
  /** Prefix of the temporary consumer group used for the read (deleted afterwards). */
  groupPrefix: string;
  /** Give up when no message arrived for this long. Default 30 s. */
  stallTimeoutMs?: number;
}

interface HighestId {
  highest: bigint;
  /** Messages read. */
  messages: number;
}

/**
 * The highest event id in the topic, from each partition's start (see fromGroup) up to its high
 * watermark at the time of the call. Ids are not ordered within a partition (gateways hold
 * different blocks), so every message of that range is read; only the id is parsed. kafkajs has no
 * group-less consumer: a temporary group consumes, seeking each partition to its start (or its end,
 * when nothing of it is needed), and is deleted. (admin.setOffsets on a new group costs 5 s.)
 */
export async function highestIdInTopic(kafka: Kafka, options: HighestIdOptions): Promise<HighestId> {
  const { topic } = options;
  const admin = kafka.admin();
  await admin.connect();
  const group = `${options.groupPrefix}-id-scan-${randomBytes(6).toString('hex')}`;
  try {
    if (!(await admin.listTopics()).includes(topic)) return { highest: 0n, messages: 0 };
    const offsets = await admin.fetchTopicOffsets(topic);
    const committed = new Map<number, bigint>();
    if (options.fromGroup !== null) {
      for (const t of await admin.fetchOffsets({ groupId: options.fromGroup, topics: [topic] })) {
        for (const p of t.partitions) if (BigInt(p.offset) >= 0n) committed.set(p.partition, BigInt(p.offset));
      }
    }
    const targets = new Map<number, bigint>();
    const seeks: { partition: number; offset: string }[] = [];
    for (const p of offsets) {
      const low = BigInt(p.low);
      const high = BigInt(p.high);
      const from = committed.get(p.partition) ?? low;
      const start = from > low ? from : low;
      if (start < high) targets.set(p.partition, high);
      seeks.push({ partition: p.partition, offset: (start < high ? start : high).toString() });
    }
    if (targets.size === 0) return { highest: 0n, messages: 0 };
    return await consumeUntil(kafka, group, topic, targets, seeks, options.stallTimeoutMs ?? 30_000);
  } finally {
    await admin.deleteGroups([group]).catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
}

async function consumeUntil(
  kafka: Kafka,
  group: string,
  topic: string,
  targets: Map<number, bigint>,
  seeks: { partition: number; offset: string }[],
  stallTimeoutMs: number,
): Promise<HighestId> {
  const consumer = kafka.consumer({ groupId: group, allowAutoTopicCreation: false, maxWaitTimeInMs: 200, retry: { retries: 2 } });
  const result: HighestId = { highest: 0n, messages: 0 };
  const starts = new Map(seeks.map(({ partition, offset }) => [partition, BigInt(offset)]));
  let lastProgress = Date.now();
  let settle!: (error: Error | null) => void;
  const finished = new Promise<void>((resolve, reject) => {
    settle = (error) => (error === null ? resolve() : reject(error));
  });
  // A crash may settle it before it is awaited; the await below still sees the rejection.
  finished.catch(() => undefined);
  const progress = (partition: number, lastOffset: string): void => {
    lastProgress = Date.now();
    const target = targets.get(partition);
    if (target !== undefined && BigInt(lastOffset) + 1n >= target) targets.delete(partition);
    if (targets.size === 0) settle(null);
  };
  // Batches of only control records or compacted-away messages never reach eachBatch.
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => progress(payload.partition, payload.lastOffset));
  consumer.on(consumer.events.CRASH, ({ payload }) => settle(payload.error));
  const stall = setInterval(() => {
    if (Date.now() - lastProgress > stallTimeoutMs) settle(new Error(`reading ${topic} for the highest event id stalled for ${stallTimeoutMs} ms`));
  }, 1000);
  try {
    await consumer.connect();
    // From the oldest message until the seeks below apply: what is read before them is a
    // superset of what is needed (from the oldest on), so progress counted from it is right.
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const from = starts.get(batch.partition) ?? 0n;
        for (const message of batch.messages) {
          if (BigInt(message.offset) < from) continue; // read before the seek applied: not asked for
          result.messages++;
          const id = messageId(message.value);
          if (id !== null && id > result.highest) result.highest = id;
        }
        progress(batch.partition, batch.lastOffset());
      },
    });
    for (const { partition, offset } of seeks) consumer.seek({ topic, partition, offset });
    await finished;
    return result;
  } finally {
    clearInterval(stall);
    await consumer.disconnect().catch(() => undefined);
  }
}
