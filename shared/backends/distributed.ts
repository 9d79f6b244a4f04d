import { redisConfigured, type Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { ClickHouseEventStore, createClickHouseClient, type ClickHouseClient } from './clickhouse/index.js';
import { checkedMarker, floorCheckedBefore, highestStoredId } from './distributed-ids.js';
import { createKafkaClient } from './kafka/client.js';
import { openDistributedOperations } from './distributed-operations.js';
import { openKafkaEventLog, type KafkaEventLog } from './kafka/event-log.js';
import { KafkaIdAllocator } from './kafka-ids.js';
import { IdBlocksTopic, type TopicPosition } from './kafka/id-blocks.js';
import { openRedisStores, redisStoresOptionsFromConfig, type RedisStores } from './redis/index.js';
import type { Backends, EventStore } from './types.js';

/**
 * Scale-out mode: everything two gateways must agree on is in Redis, accepted events go to Kafka
 * (acknowledged with acks=all before the id is answered), and the admin API reads stored events
 * from ClickHouse, where the worker puts them.
 */
export interface DistributedBackends extends Backends {
  redis: RedisStores;
  kafka: KafkaEventLog;
  clickhouse: ClickHouseClient | null;
  /** Event ids: blocks named by offsets of the Kafka id-blocks topic. */
  ids: KafkaIdAllocator;
  idBlocks: IdBlocksTopic;
}

export class ConfigurationMissing extends Error {}

/** Events are only in Kafka until the worker loads them; without ClickHouse there is nothing to query. */
const noClickHouse = (): Promise<never> => Promise.reject(new Error('CLICKHOUSE_URL is not set: stored events are read from ClickHouse.'));
const noEventStore: EventStore = { recent: noClickHouse, activity: noClickHouse };

export async function openDistributedBackends(config: Config, logger: Logger, metrics?: Metrics): Promise<DistributedBackends> {
  if (!redisConfigured(config) || config.kafkaBrokers === null) {
    throw new ConfigurationMissing('The distributed mode needs REDIS_URL (or REDIS_SENTINELS) and KAFKA_BROKERS.');
  }
  const kafkaBrokers = config.kafkaBrokers;
  const redis = await openRedisStores(redisStoresOptionsFromConfig(config, logger.child({ component: 'redis' })));
  const clickhouse =
    config.clickhouseUrl === null
      ? null
      : createClickHouseClient({
          url: config.clickhouseUrl,
          database: config.clickhouseDatabase,
          username: config.clickhouseUser,
          password: config.clickhousePassword,
        });
  const idLogger = logger.child({ component: 'ids' });
  let idBlocks: IdBlocksTopic;
  try {
    idBlocks = await IdBlocksTopic.open({ brokers: kafkaBrokers, topic: config.kafkaIdTopic, clientId: config.kafkaClientId, timeoutMs: config.appendTimeoutMs, logger: idLogger });
  } catch (err) {
    await clickhouse?.close();
    await redis.close();
    throw err;
  }

  /**
   * A topic not checked before (no marker in Redis: a first start, Redis lost it, or the topic was
   * created anew): its next block must start above every id stored or still held by a gateway, so
   * the floor rises to highest stored id + ID_RECOVERY_MARGIN - offset·B when it is lower.
   */
  const verify = async (position: TopicPosition, floor: bigint, blockSize: number): Promise<bigint> => {
    const marker = redis.keys.idBlocksChecked();
    // The marker is "<topic id> <floor it was checked to>": a gateway that finds the topic checked
    // by another still takes that floor. Trusting the topic id alone issued ids twice (a CI run):
    // the checker sets the marker before its first block record carries the raised floor, and a
    // gateway checking in between kept its own lower floor. A marker without a floor (an older
    // release) is checked again.
    const agreed = floorCheckedBefore(await redis.redis.get(marker), position.topicId, floor);
    if (agreed !== null) return agreed;
    const highest = await highestStoredId({
      kafka: createKafkaClient({ brokers: kafkaBrokers, clientId: config.kafkaClientId, logger: idLogger }),
      topic: config.kafkaTopic,
      groupId: config.kafkaGroupId,
      clientId: config.kafkaClientId,
      clickhouse,
      database: config.clickhouseDatabase,
      logger: idLogger,
    });
    const needed = highest + config.idRecoveryMargin - position.end * BigInt(blockSize);
    const raised = highest > 0n && needed > floor ? needed : floor;
    if (raised !== floor) {
      idLogger.warn(
        { topic: config.kafkaIdTopic, nextOffset: position.end.toString(), highestStored: highest.toString(), from: floor.toString(), to: raised.toString() },
        `event-id floor raised to ${raised}: the id-blocks topic was not known to be ahead of the stored ids`,
      );
    }
    await redis.redis.set(marker, checkedMarker(position.topicId, raised));
    return raised;
  };
  const ids = new KafkaIdAllocator({
    blocks: idBlocks,
    floor: config.idFloor,
    blockSize: config.idBlockSize,
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
    kafka = await openKafkaEventLog({
      brokers: kafkaBrokers,
      topic: config.kafkaTopic,
      clientId: config.kafkaClientId,
      ids,
      dedupe: redis.dedupe,
      dedupeWindowMs: config.dedupeWindowMs,
      lingerMs: config.producerLingerMs,
      batchEvents: config.producerBatchEvents,
      wireVersion: config.eventWireVersion,
      maxInFlightEvents: config.maxInFlightEvents,
      sendTimeoutMs: config.appendTimeoutMs,
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
    });
  } catch (err) {
    ids.close();
    await idBlocks.close();
    await clickhouse?.close();
    await redis.close();
    throw err;
  }
  const operations = openDistributedOperations(config, logger, redis, () => kafka.failingNow(), clickhouse);

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
    events: clickhouse === null ? noEventStore : new ClickHouseEventStore(clickhouse, config.clickhouseDatabase),
    feed: operations.feed,
    poison: operations.poison,
    operators: redis.operators,
    status: () => operations.status(),
    // Ready when state is reachable, ids can be issued and the event log is not failing fast.
    healthy: async () => ids.ready && (await redis.healthy()) && !(await kafka.failingNow()),
    close,
  };
}

/** Which mode a configuration asks for; half a distributed configuration is an error. */
export function deploymentMode(config: Config): 'embedded' | 'distributed' {
  const redis = redisConfigured(config);
  const kafka = config.kafkaBrokers !== null;
  if (redis !== kafka) {
    throw new ConfigurationMissing(
      `REDIS_URL (or REDIS_SENTINELS) and KAFKA_BROKERS go together (the distributed mode needs both); only ${redis ? 'Redis' : 'KAFKA_BROKERS'} is set.`,
    );
  }
  return redis ? 'distributed' : 'embedded';
}
