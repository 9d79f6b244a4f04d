import type { ClickHouseClient } from '../clickhouse/client.js';
import type { KafkaClientOptions } from '../kafka/client.js';
import { quoteIdentifier, quoteString } from '../clickhouse/sql.js';
import { highestIdInTopic } from './highest-in-topic.js';

export interface HighestStoredIdSources {
  /** How to reach Kafka (the reader's client id is derived from its clientId). */
  kafka: KafkaClientOptions;
  topic: string;
  /** The worker's consumer group (KAFKA_GROUP_ID). */
  groupId: string;
  /** CLICKHOUSE_URL's client, or null. */
  clickhouse: ClickHouseClient | null;
  database: string;
  logger: { info(o: object, m: string): void };
}

/** max(id) of the events table, or null when there is no such table (the worker never ran). */
async function clickhouseMaxId(clickhouse: ClickHouseClient, database: string): Promise<bigint | null> {
  const exists = await clickhouse.query({
    query: `SELECT count() AS n FROM system.tables WHERE database = ${quoteString(database)} AND name = 'events'`,
    format: 'JSONEachRow',
  });
  const [table] = await exists.json<{ n: string | number }>();
  if (Number(table?.n ?? 0) === 0) return null;
  const result = await clickhouse.query({ query: `SELECT toString(max(id)) AS m FROM ${quoteIdentifier(database)}.events`, format: 'JSONEachRow' });
  const [row] = await result.json<{ m: string }>();
  return BigInt(row?.m ?? '0');
}

/**
 * The highest event id stored anywhere durable, for checking an id-blocks topic not checked before
 * (a first start, Redis lost the marker, the topic was created anew: ids/allocator.ts, scale-out/index.ts). With ClickHouse: its max(id), plus what the worker has not stored yet,
 * i.e. the topic from the worker group's committed offsets on (everything before them is in
 * ClickHouse). Without ClickHouse (or before the worker created its table): the whole retained
 * topic. A gateway must then share the worker's KAFKA_GROUP_ID and CLICKHOUSE_DATABASE, or it
 * reads more than needed (another group) or trusts the wrong table (another database).
 */
export async function highestStoredId(sources: HighestStoredIdSources): Promise<bigint> {
  const stored = sources.clickhouse === null ? null : await clickhouseMaxId(sources.clickhouse, sources.database);
  const log = await highestIdInTopic(sources.kafka, {
    topic: sources.topic,
    fromGroup: stored === null ? null : sources.groupId,
  });
  const highest = stored !== null && stored > log.highest ? stored : log.highest;
  sources.logger.info(
    {
      clickhouse: stored === null ? 'not read' : stored.toString(),
      kafka: log.highest.toString(),
      kafkaMessagesRead: log.messages,
      kafkaFrom: stored === null ? 'oldest retained' : `group ${sources.groupId}`,
    },
    `highest stored event id: ${highest}`,
  );
  return highest;
}
