import type { KafkaAdmin } from './client.js';

/** What a consumer group has still to read of one partition: from `from` up to `high` (exclusive). */
export interface UnreadRange {
  partition: number;
  from: bigint;
  high: bigint;
}

/**
 * Each partition's unread range for `groupId` (null: the whole retained log). A group reads from
 * its committed offset, but never below the log start: a commit that retention has passed points
 * at messages that are gone, and the broker would answer from the log start anyway.
 */
export async function unreadRanges(admin: Pick<KafkaAdmin, 'offsets' | 'committed'>, topic: string, groupId: string | null): Promise<UnreadRange[]> {
  const [offsets, committed] = await Promise.all([admin.offsets(topic), groupId === null ? new Map<number, bigint>() : admin.committed(groupId, topic)]);
  return offsets.map((p) => {
    const committedAt = committed.get(p.partition) ?? p.low;
    return { partition: p.partition, from: committedAt > p.low ? committedAt : p.low, high: p.high };
  });
}

/** Messages on the topic the group has not committed, per partition. */
export async function groupLag(admin: Pick<KafkaAdmin, 'offsets' | 'committed'>, topic: string, groupId: string): Promise<Map<number, number>> {
  const lag = new Map<number, number>();
  for (const r of await unreadRanges(admin, topic, groupId)) lag.set(r.partition, Math.max(0, Number(r.high - r.from)));
  return lag;
}
