import { BINARY_WIRE_VERSION } from '../../events/wire.js';
import { protobufMessageId } from '../../events/protobuf-decode.js';
import { KafkaAdmin, type KafkaClientOptions } from '../kafka/client.js';
import { PartitionFetcher } from '../kafka/fetcher.js';
import { unreadRanges } from '../kafka/group-positions.js';

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
 * different blocks), so every message of that range is read; only the id is parsed. The read
 * needs no consumer group: a reader fetches each partition from its start to its target.
 */
export async function highestIdInTopic(connection: KafkaClientOptions, options: HighestIdOptions): Promise<HighestId> {
  const { topic } = options;
  const admin = await KafkaAdmin.open(connection);
  let targets: Map<number, bigint>;
  const positions = new Map<number, bigint>();
  try {
    if (!(await admin.listTopics()).includes(topic)) return { highest: 0n, messages: 0 };
    targets = new Map();
    for (const { partition, from, high } of await unreadRanges(admin, topic, options.fromGroup)) {
      if (from < high) {
        targets.set(partition, high);
        positions.set(partition, from);
      }
    }
  } finally {
    await admin.close();
  }
  if (targets.size === 0) return { highest: 0n, messages: 0 };
  const fetcher = await PartitionFetcher.open({ ...connection, clientId: `${connection.clientId}-id-scan`, topic, maxWaitMs: 200 });
  try {
    return await readUntil(fetcher, targets, positions, options.stallTimeoutMs ?? 30_000);
  } finally {
    await fetcher.close();
  }
}

async function readUntil(fetcher: PartitionFetcher, targets: Map<number, bigint>, positions: Map<number, bigint>, stallTimeoutMs: number): Promise<HighestId> {
  const result: HighestId = { highest: 0n, messages: 0 };
  let lastProgress = Date.now();
  while (positions.size > 0) {
    if (Date.now() - lastProgress > stallTimeoutMs) throw new Error(`reading ${fetcher.topic} for the highest event id stalled for ${stallTimeoutMs} ms`);
    let fetched;
    try {
      fetched = await fetcher.fetch(positions);
    } catch {
      // Retried until the stall limit: the broker may be electing a leader.
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    for (const f of fetched) {
      const target = targets.get(f.partition)!;
      if (f.outOfRange !== null) {
        // Retention removed the start meanwhile: read on from the new start.
        positions.set(f.partition, f.outOfRange);
        lastProgress = Date.now();
      }
      for (const message of f.messages) {
        if (message.offset >= target) break;
        result.messages++;
        const id = messageId(message.value);
        if (id !== null && id > result.highest) result.highest = id;
      }
      if (f.next > positions.get(f.partition)!) {
        positions.set(f.partition, f.next);
        lastProgress = Date.now();
      }
      if (positions.get(f.partition)! >= target) positions.delete(f.partition);
    }
  }
  return result;
}
