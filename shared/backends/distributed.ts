import { redisConfigured, type Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { ClickHouseEventStore, createClickHouseClient, type ClickHouseClient } from './clickhouse/index.js';
import { highestStoredId } from './distributed-ids.js';
import { createKafkaClient } from './kafka/client.js';
import { openDistributedOperations } from './distributed-operations.js';
import { openKafkaEventLog, type KafkaEventLog } from './kafka/event-log.js';
import { IdRecovery } from './redis/id-recovery.js';
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
  /** Keeps the event-id state established; restores it when Redis lost it. */
  idRecovery: IdRecovery;
}

export class ConfigurationMissing extends Error {}

/** Events are only in Kafka until the worker loads them; without ClickHouse there is nothing to query. */
const noClickHouse = (): Promise<never> => Promise.reject(new Error('CLICKHOUSE_URL is not set: stored events are read from ClickHouse.'));
const noEventStore: EventStore = { recent: noClickHouse, activity: noClickHouse };

/** Slack on top of APPEND_TIMEOUT_MS before the highest stored id is read (timers, a last send). */
const SETTLE_SLACK_MS = 1000;

export async function openDistributedBackends(config: Config, logger: Logger, metrics?: Metrics): Promise<DistributedBackends> {
  if (!redisConfigured(config) || config.kafkaBrokers === null) {
    throw new ConfigurationMissing('The distributed mode needs REDIS_URL (or REDIS_SENTINELS) and KAFKA_BROKERS.');
  }
  const kafkaBrokers = config.kafkaBrokers;
  const redis = await openRedisStores(redisStoresOptionsFromConfig(config, logger.child({ component: 'redis' })));
  let kafka: KafkaEventLog;
  try {
    kafka = await openKafkaEventLog({
      brokers: kafkaBrokers,
      topic: config.kafkaTopic,
      clientId: config.kafkaClientId,
      ids: redis.ids,
      dedupe: redis.dedupe,
      dedupeWindowMs: config.dedupeWindowMs,
      lingerMs: config.producerLingerMs,
      batchEvents: config.producerBatchEvents,
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
    await redis.close();
    throw err;
  }
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
  const idRecovery = new IdRecovery({
    ids: redis.ids,
    highestStoredId: () =>
      highestStoredId({
        kafka: createKafkaClient({ brokers: kafkaBrokers, clientId: config.kafkaClientId, logger: idLogger }),
        topic: config.kafkaTopic,
        groupId: config.kafkaGroupId,
        clientId: config.kafkaClientId,
        clickhouse,
        database: config.clickhouseDatabase,
        logger: idLogger,
      }),
    idFloor: config.idFloor,
    margin: config.idRecoveryMargin,
    // Every append that took ids before a loss is answered within APPEND_TIMEOUT_MS (gateways are
    // assumed to share it); what it published is in the log by then.
    settleMs: config.appendTimeoutMs + SETTLE_SLACK_MS,
    logger: idLogger,
    ...(metrics === undefined
      ? {}
      : {
          metrics: {
            lost: () => metrics.idStateLost.inc(),
            restored: (floor: bigint) => {
              metrics.idStateRestored.inc();
              metrics.idFloor.set(Number(floor));
            },
            recovering: (active: boolean) => metrics.idStateRecovering.set(active ? 1 : 0),
          },
        }),
  });
  const operations = openDistributedOperations(config, logger, redis, () => kafka.failingNow(), clickhouse);

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    // Flush the producer first (acknowledged ids stay acknowledged), then the state store.
    closing ??= (async () => {
      idRecovery.close();
      await operations.close();
      await kafka.close();
      await clickhouse?.close();
      await redis.close();
    })();
    return closing;
  };
  try {
    await idRecovery.start();
  } catch (err) {
    await close();
    throw err;
  }

  return {
    redis,
    kafka,
    clickhouse,
    idRecovery,
    providers: redis.providers,
    lockouts: redis.lockouts,
    sessions: redis.sessions,
    commands: redis.commands,
    trips: redis.trips,
    eventLog: kafka,
    events: clickhouse === null ? noEventStore : new ClickHouseEventStore(clickhouse, config.clickhouseDatabase),
    feed: operations.feed,
    poison: operations.poison,
    status: () => operations.status(),
    // Ready when state is reachable, ids can be issued and the event log is not failing fast.
    healthy: async () => (await redis.healthy()) && !(await kafka.failingNow()) && (await idRecovery.ready().catch(() => false)),
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
