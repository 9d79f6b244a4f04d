import { kafkajsSecurity, type KafkaSecurity } from './security.js';
import { Kafka, logLevel, type Admin, type KafkaConfig, type LogEntry, type logCreator, type RetryOptions } from 'kafkajs';

/** The subset of a pino logger this module writes to. */
export interface KafkaLogger {
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
  error(o: object, m: string): void;
}

/**
 * Routes kafkajs' own log lines to our logger instead of stdout. Only warn and error lines are
 * produced (logLevel WARN); both go out at warn: kafkajs logs every failed response, also those
 * that are retried, and what a broker problem leads to (events answered unavailable, a consumer
 * restarted) is reported once, classified, by the code that sees it.
 */
export function kafkaLogCreator(logger: KafkaLogger): logCreator {
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, timestamp: _timestamp, ...extra } = log;
      logger.warn({ kafkajs: namespace, kafkajsLevel: logLevel[level], ...extra }, `kafkajs: ${message}`);
    };
}

export interface KafkaClientOptions {
  brokers: string[];
  clientId: string;
  logger: KafkaLogger;
  /** Client-side bound on one request (metadata, fetch); default 30 s as in kafkajs. */
  requestTimeoutMs?: number;
  /** kafkajs' own retries; default few and short (see createKafkaClient). */
  retry?: RetryOptions;
  /** TLS and SASL of every connection (security.ts); default plaintext. */
  security?: KafkaSecurity;
}

/**
 * The kafkajs client of the gateway (admin, live feed, id recovery) and the worker (consumer):
 * connection attempts give up after 1 s and, unless `retry` says otherwise, internal retries
 * (connect, metadata) are few and short, so a dead broker is noticed in about a second rather
 * than after kafkajs' default ~30 s of backoff. (The event log produces with @platformatic/kafka:
 * producer.ts.)
 */
export function createKafkaClient(options: KafkaClientOptions): Kafka {
  const config: KafkaConfig = {
    clientId: options.clientId,
    brokers: options.brokers,
    connectionTimeout: 1000,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    retry: options.retry ?? { retries: 2, initialRetryTime: 100, maxRetryTime: 1000 },
    logLevel: logLevel.WARN,
    logCreator: kafkaLogCreator(options.logger),
    ...(options.security === undefined ? {} : kafkajsSecurity(options.security)),
  };
  return new Kafka(config);
}

export interface TopicSpec {
  topic: string;
  /** -1 (default) = the broker's num.partitions. */
  partitions?: number;
  /** -1 (default) = the broker's default.replication.factor. */
  replicationFactor?: number;
  /** Topic-level settings when this call creates it. */
  configEntries?: { name: string; value: string }[];
}

/**
 * Creates the topic unless it exists, then waits until every partition has a leader. Listing first
 * means a deployment whose principal may not create topics still starts when ops created it.
 * Returns true when this call created it.
 */
export async function ensureTopic(admin: Admin, spec: TopicSpec, timeoutMs = 30_000): Promise<boolean> {
  const existing = await admin.listTopics();
  let created = false;
  if (!existing.includes(spec.topic)) {
    // Not kafkajs' waitForLeaders (on by default): it gives up on UNKNOWN_TOPIC_OR_PARTITION, which
    // a KRaft broker answers for a moment after creating a topic. waitForTopic retries on it.
    created = await admin.createTopics({
      waitForLeaders: false,
      topics: [
        {
          topic: spec.topic,
          numPartitions: spec.partitions ?? -1,
          replicationFactor: spec.replicationFactor ?? -1,
          ...(spec.configEntries === undefined ? {} : { configEntries: spec.configEntries }),
        },
      ],
    });
  }
  await waitForTopic(admin, spec.topic, timeoutMs);
  return created;
}

/**
 * Waits until every partition of the topic has a leader that serves it; returns their count.
 * Metadata names the leaders a moment before they serve (a KRaft broker then still answers
 * NOT_LEADER_FOR_PARTITION), so this also asks each leader for its offsets.
 */
export async function waitForTopic(admin: Admin, topic: string, timeoutMs = 30_000): Promise<number> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      const partitions = topics.find((t) => t.name === topic)?.partitions ?? [];
      if (partitions.length > 0 && partitions.every((p) => p.leader >= 0)) {
        const offsets = await admin.fetchTopicOffsets(topic);
        if (offsets.length === partitions.length) return partitions.length;
      }
      last = new Error(`topic ${topic}: ${partitions.length} partitions, not all served by a leader yet`);
    } catch (error) {
      last = error;
    }
    if (Date.now() >= until) {
      throw new Error(`Kafka topic ${topic} not ready within ${timeoutMs} ms: ${last instanceof Error ? last.message : String(last)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
