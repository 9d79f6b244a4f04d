import type { ConsumedMessage } from '../shared/backends/kafka/fetcher.js';
import type { EventInstant, EventRecord, PoisonMessage } from '../shared/backends/types.js';
import type { LastReportUpdate } from '../shared/backends/scale-out-types.js';
import { poisonId } from '../shared/backends/redis/poison.js';

/** One Kafka message held by the worker until its batch is stored and committed. */
export interface BufferedMessage {
  partition: number;
  /** The message's offset in its partition. */
  offset: bigint;
  /** When the worker read it (epoch ms): the batch-time limit counts from the oldest. */
  arrivedAt: number;
  /**
   * The message's Kafka timestamp (epoch ms; text where a test builds it): part of the insert token,
   * so a topic deleted and created again, whose offsets start over, never repeats an earlier batch's
   * token. Kept as read and formatted only for the token, once per batch, not once per message.
   */
  timestamp?: bigint | string;
  /** null for a poison message: nothing is stored for it, but its offset is committed. */
  decoded: { id: bigint; event: EventRecord } | null;
  /** A poison message as it is set aside (before its offset is committed). */
  poison?: PoisonMessage;
}

/**
 * The offsets to commit after `messages` are stored: per partition, the highest offset + 1 (Kafka
 * commits "the next offset to read"). Messages of one partition arrive in offset order and batches
 * are taken from the front of the buffer, so this covers exactly the stored messages.
 */
export function offsetsToCommit(messages: readonly BufferedMessage[]): Map<number, bigint> {
  const out = new Map<number, bigint>();
  for (const m of messages) {
    const next = m.offset + 1n;
    const seen = out.get(m.partition);
    if (seen === undefined || next > seen) out.set(m.partition, next);
  }
  return out;
}

/**
 * Where a batch of one partition that starts at offset `first` must end (exclusive): the next
 * multiple of `batchRows`. Batches are cut on this fixed grid of offsets (or earlier, by time), so
 * a batch re-read after a crash or a rebalance, which starts at the committed offset (always a
 * batch boundary), holds the same messages as the first time whenever that one was full: same
 * offsets, same insert token, and ClickHouse drops it as a repeat.
 */
export function gridEnd(first: bigint, batchRows: number): bigint {
  const size = BigInt(batchRows);
  return (first / size + 1n) * size;
}

/**
 * The insert deduplication token of a batch: topic, partition, first and last offset, and the
 * first message's Kafka timestamp. The same messages always give the same token, whether the
 * insert is retried or the batch read again.
 */
export function batchToken(topic: string, partition: number, messages: readonly BufferedMessage[]): string {
  const first = messages[0]?.offset ?? 0n;
  const last = messages[messages.length - 1]?.offset ?? first;
  return `${topic}:${partition}:${first}-${last}@${messages[0]?.timestamp ?? ''}`;
}

function compareInstants(a: EventInstant, b: EventInstant): number {
  return a.epochMs !== b.epochMs ? a.epochMs - b.epochMs : a.subMsTicks - b.subMsTicks;
}

/** The latest FechaHoraEvento per provider+Dominio among the stored events of a batch. */
export function latestReports(messages: readonly BufferedMessage[]): LastReportUpdate[] {
  // By provider, then Dominio: no key text built per message, and one update object per vehicle
  // made at the end (a vehicle's events mostly arrive in time order: each would replace the last).
  const latest = new Map<string, Map<string, EventInstant>>();
  for (const m of messages) {
    if (m.decoded === null) continue;
    const { systemUser, dominio, eventTime } = m.decoded.event;
    let vehicles = latest.get(systemUser);
    if (vehicles === undefined) latest.set(systemUser, (vehicles = new Map<string, EventInstant>()));
    const seen = vehicles.get(dominio);
    if (seen === undefined || compareInstants(eventTime, seen) > 0) vehicles.set(dominio, eventTime);
  }
  const updates: LastReportUpdate[] = [];
  for (const [systemUser, vehicles] of latest) {
    for (const [dominio, at] of vehicles) updates.push({ systemUser, dominio, at: { epochMs: at.epochMs, subMsTicks: at.subMsTicks } });
  }
  return updates;
}

/** A message that cannot be decoded, as it is set aside (with its reason, before its offset is committed). */
export function poisonMessage(topic: string, partition: number, message: ConsumedMessage, reason: string): PoisonMessage {
  const offset = message.offset.toString();
  return {
    id: poisonId(partition, offset),
    topic,
    partition,
    offset,
    key: message.key?.toString('utf8') ?? null,
    reason,
    at: Date.now(),
    value: message.value ?? Buffer.alloc(0),
    truncated: false,
  };
}
