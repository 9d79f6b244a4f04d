import { randomUUID } from 'node:crypto';
import type { Consumer, Kafka } from 'kafkajs';
import { decodeEvent } from '../../events/wire.js';
import type { EventFeed, FeedSubscription, StoredEvent } from '../types.js';
import type { KafkaLogger } from './client.js';

interface KafkaEventFeedOptions {
  kafka: Kafka;
  topic: string;
  /** Each subscription joins its own group `{groupPrefix}-{uuid}`, so every stream sees every event. */
  groupPrefix: string;
  logger: KafkaLogger;
}

/**
 * The live view of the scale-out mode: a Kafka consumer per subscription, with a group of its own,
 * reading the event topic from where it ended when the subscription started. Any gateway serves it
 * and sees what every gateway accepted. Offsets are never committed (the group leaves nothing behind
 * once it disconnects); where each partition is read up to is kept here, so a rebalance of the
 * group resumes there instead of jumping to the end.
 */
export class KafkaEventFeed implements EventFeed {
  private readonly consumers = new Set<Consumer>();

  constructor(private readonly options: KafkaEventFeedOptions) {}

  /** Subscriptions open now. */
  get size(): number {
    return this.consumers.size;
  }

  async subscribe(listener: (event: StoredEvent) => void): Promise<FeedSubscription> {
    const { kafka, topic, logger } = this.options;
    // Where the topic ends now: everything acknowledged from here on is delivered, however long the
    // group takes to form.
    const next = new Map<number, string>();
    const admin = kafka.admin();
    await admin.connect();
    try {
      for (const p of await admin.fetchTopicOffsets(topic)) next.set(p.partition, p.high);
    } finally {
      await admin.disconnect();
    }

    const consumer = kafka.consumer({
      groupId: `${this.options.groupPrefix}-${randomUUID()}`,
      maxWaitTimeInMs: 250,
      sessionTimeout: 10_000,
      heartbeatInterval: 1_000,
    });
    // Emitted after each join, before the first fetch of the assignment: the place to seek.
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      for (const partition of payload.memberAssignment[topic] ?? []) {
        consumer.seek({ topic, partition, offset: next.get(partition) ?? '0' });
      }
    });
    this.consumers.add(consumer);
    try {
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: false });
      await consumer.run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          next.set(partition, (BigInt(message.offset) + 1n).toString());
          if (message.value === null) return;
          let decoded: ReturnType<typeof decodeEvent>;
          try {
            decoded = decodeEvent(message.value);
          } catch {
            return; // a poison message: the worker sets it aside; the live view skips it
          }
          listener({ ...decoded.event, id: decoded.id, storedAt: Number(message.timestamp) });
        },
      });
    } catch (err) {
      this.consumers.delete(consumer);
      await consumer.disconnect().catch(() => undefined);
      throw err;
    }

    let closing: Promise<void> | null = null;
    return {
      close: () => {
        closing ??= consumer
          .disconnect()
          .catch((err: unknown) => logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'event stream consumer did not disconnect cleanly'))
          .finally(() => this.consumers.delete(consumer));
        return closing;
      },
    };
  }

  /** Ends every subscription (the gateway is stopping). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.consumers].map((c) => c.disconnect()));
    this.consumers.clear();
  }
}
