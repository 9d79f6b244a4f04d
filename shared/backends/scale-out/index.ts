import { ConfigurationMissing, redisConfigured, type Config } from '../../config/index.js';
import type { Logger } from '../../runtime/logger.js';
import type { Metrics } from '../../runtime/metrics.js';
import { ClickHouseEventStore, clickHouseOptionsFromConfig, createClickHouseClient, type ClickHouseClient } from '../clickhouse/index.js';
import { highestStoredId } from '../ids/highest-stored.js';
import { topicCheck } from '../ids/floor.js';
import { kafkaAnswers, kafkaClientOptions } from '../kafka/client.js';
import { kafkaErrorChain } from '../kafka/errors.js';
import { openAdminSupport } from './admin-support.js';
import { openKafkaEventLog, type KafkaEventLog } from '../kafka/event-log.js';
import { KafkaIdAllocator } from '../ids/allocator.js';
import { IdBlocksTopic } from '../ids/blocks-topic.js';
import { openRedisStores, redisStoresOptionsFromConfig, type RedisStores } from '../redis/index.js';
import { redisAnswers } from '../redis/client.js';
import type { WatchedComponent } from '../../runtime/stuck-watchdog.js';
import type { Backends, EventStore } from '../types.js';

/**
 * Scale-out mode: everything two gateways must agree on is in Redis, accepted events go to Kafka
 * (acknowledged with acks=all before the id is answered), and the admin API reads stored events
 * from ClickHouse, where the worker puts them.
 */
export interface ScaleOutBackends extends Backends {
  redis: RedisStores;
  kafka: KafkaEventLog;
  clickhouse: ClickHouseClient | null;
  /** Event ids: blocks named by offsets of the Kafka id-blocks topic. */
  ids: KafkaIdAllocator;
  idBlocks: IdBlocksTopic;
}

/** Events are only in Kafka until the worker loads them; without ClickHouse there is nothing to query. */
const noClickHouse = (): Promise<never> => Promise.reject(new Error('CLICKHOUSE_URL is not set: stored events are read from ClickHouse.'));
const noEventStore: EventStore = { recent: noClickHouse, activity: noClickHouse };

/**
 * A Kafka client's own errors rarely say "Kafka" ("SASL SCRAM SHA512 authentication failed",
 * "Closed connection"): a start that fails on Kafka says which engine, where, and why, in one line.
 */
async function kafkaStep<T>(brokers: readonly string[], step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    throw new Error(`Kafka at ${brokers.join(',')} failed: ${kafkaErrorChain(err)}`, { cause: err });
  }
}

export async function openScaleOutBackends(config: Config, logger: Logger, metrics?: Metrics): Promise<ScaleOutBackends> {
  if (!redisConfigured(config.redis) || config.kafka.brokers === null) {
    throw new ConfigurationMissing('The scale-out mode needs REDIS_URL (or REDIS_SENTINELS, or REDIS_CLUSTER_NODES) and KAFKA_BROKERS.');
  }
  const kafkaBrokers = config.kafka.brokers;
  // Every Kafka and Redis client of this process with the same options (TLS files read once).
  const kafkaOptions = kafkaClientOptions(config.kafka);
  const redisOptions = redisStoresOptionsFromConfig(config.redis, logger.child({ component: 'redis' }));
  const redis = await openRedisStores(redisOptions);
  const clickhouse =
    config.clickhouse.url === null
      ? null
      : createClickHouseClient({ ...clickHouseOptionsFromConfig({ ...config.clickhouse, url: config.clickhouse.url }), requestTimeoutMs: config.clickhouse.queryTimeoutMs });
  const idLogger = logger.child({ component: 'ids' });
  let idBlocks: IdBlocksTopic;
  try {
    idBlocks = await kafkaStep(kafkaBrokers, () => IdBlocksTopic.open({ ...kafkaOptions, topic: config.ids.topic, timeoutMs: config.events.appendTimeoutMs, logger: idLogger }));
  } catch (err) {
    await clickhouse?.close();
    await redis.close();
    throw err;
  }

  const verify = topicCheck({
    readMarker: () => redis.redis.get(redis.keys.idBlocksChecked()),
    writeMarker: async (marker) => {
      await redis.redis.set(redis.keys.idBlocksChecked(), marker);
    },
    highestStored: () =>
      highestStoredId({
        kafka: kafkaOptions,
        topic: config.kafka.topic,
        groupId: config.kafka.groupId,
        clickhouse,
        database: config.clickhouse.database,
        logger: idLogger,
      }),
    margin: config.ids.recoveryMargin,
    topic: config.ids.topic,
    logger: idLogger,
  });
  const ids = new KafkaIdAllocator({
    blocks: idBlocks,
    floor: config.ids.floor,
    blockSize: config.ids.blockSize,
    verify,
    logger: idLogger,
    ...(metrics === undefined
      ? {}
      : {
          metrics: {
            block: (floor: bigint) => {
              metrics.idBlocksTaken.inc();
              metrics.idFloor.set(Number(floor));
            },
            unavailable: (active: boolean) => metrics.idBlocksUnavailable.set(active ? 1 : 0),
          },
        }),
  });

  let kafka: KafkaEventLog;
  try {
    await ids.start();
    kafka = await kafkaStep(kafkaBrokers, () => openKafkaEventLog({
      ...kafkaOptions,
      topic: config.kafka.topic,
      ids,
      dedupe: redis.dedupe,
      dedupeWindowMs: config.events.dedupeWindowMs,
      lingerMs: config.kafka.producerLingerMs,
      batchEvents: config.kafka.producerBatchEvents,
      wireVersion: config.kafka.wireVersion,
      maxInFlightEvents: config.events.maxInFlight,
      sendTimeoutMs: config.events.appendTimeoutMs,
      logger: logger.child({ component: 'kafka' }),
      ...(metrics === undefined
        ? {}
        : {
            metrics: {
              publishSeconds: (s: number) => metrics.kafkaSendSeconds.observe(s),
              batchSize: (n: number) => metrics.publishBatchSize.observe(n),
              inFlight: (n: number) => metrics.eventsInFlight.set(n),
            },
          }),
    }));
  } catch (err) {
    ids.close();
    await idBlocks.close();
    await clickhouse?.close();
    await redis.close();
    throw err;
  }
  const operations = openAdminSupport(config, logger, redis, () => kafka.failingNow(), clickhouse);

  // What the stuck watchdog watches: each client against a fresh connection to its engine.
  const watched: WatchedComponent[] = [
    { name: 'Kafka sends', engine: 'Kafka', healthy: async () => !(await kafka.failingNow()), engineAnswers: () => kafkaAnswers(kafkaOptions, config.kafka.topic) },
    { name: 'event-id blocks', engine: 'Kafka', healthy: () => !ids.failing, engineAnswers: () => kafkaAnswers(kafkaOptions, config.ids.topic) },
    { name: 'Redis client', engine: 'Redis', healthy: () => redis.healthy(), engineAnswers: () => redisAnswers(redisOptions) },
  ];

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    // Flush the producer first (acknowledged ids stay acknowledged), then the state store.
    closing ??= (async () => {
      ids.close();
      await operations.close();
      await kafka.close();
      await idBlocks.close();
      await clickhouse?.close();
      await redis.close();
    })();
    return closing;
  };

  return {
    redis,
    kafka,
    clickhouse,
    ids,
    idBlocks,
    providers: redis.providers,
    lockouts: redis.lockouts,
    sessions: redis.sessions,
    commands: redis.commands,
    trips: redis.trips,
    eventLog: kafka,
    events: clickhouse === null ? noEventStore : new ClickHouseEventStore(clickhouse, config.clickhouse.database),
    feed: operations.feed,
    poison: operations.poison,
    operators: redis.operators,
    status: () => operations.status(),
    watched,
    // Ready when state is reachable, ids can be issued and the event log is not failing fast.
    healthy: async () => ids.ready && (await redis.healthy()) && !(await kafka.failingNow()),
    close,
  };
}
