import { withTimeout } from '../../util/async.js';
import type { Config } from '../../config/index.js';
import { wireHeadersOf } from '../../events/wire.js';
import type { Logger } from '../../runtime/logger.js';
import type { ClickHouseClient } from '../clickhouse/index.js';
import { kafkaClientOptions } from '../kafka/client.js';
import { KafkaEventFeed } from '../kafka/live-feed.js';
import { KafkaOperator } from '../kafka/operator.js';
import type { RedisStores } from '../redis/index.js';
import type { BackendStatus, PoisonStore } from '../types.js';
import { errorMessage } from '../../util/error-message.js';

/** What the admin API needs of the scale-out backends beyond the stores: the live feed, poison messages, status. */
interface AdminSupport {
  feed: KafkaEventFeed;
  poison: PoisonStore;
  status(): Promise<BackendStatus>;
  close(): Promise<void>;
}


export function openAdminSupport(
  config: Config,
  logger: Logger,
  redis: RedisStores,
  kafkaFailing: () => Promise<boolean>,
  clickhouse: ClickHouseClient | null,
): AdminSupport {
  const kafkaLogger = logger.child({ component: 'kafka-admin' });
  const kafka = kafkaClientOptions(config.kafka, `${config.kafka.clientId}-admin`);
  const operator = new KafkaOperator({ ...kafka, topic: config.kafka.topic, workerGroupId: config.kafka.groupId });
  const feed = new KafkaEventFeed({ ...kafka, topic: config.kafka.topic, logger: kafkaLogger });
  const store = redis.poison;

  const poison: PoisonStore = {
    list: (limit) => store.list(limit),
    count: () => store.count(),
    get: (id) => store.get(id),
    add: (messages) => store.add(messages),
    remove: (id) => store.remove(id),
    async redrive(id) {
      const message = await store.get(id);
      if (message === null) return false;
      if (message.truncated) throw new RangeError(`Poison message ${id} was too large to keep whole; it cannot be re-driven.`);
      // Sent first, removed after: a failure in between leaves it listed (and re-driving twice is
      // harmless: the worker stores an event id once).
      await operator.send(message.topic, message.key, message.value, { ...wireHeadersOf(message.value), 'x-redriven-from': id });
      await store.remove(id);
      return true;
    },
  };

  async function check(name: string, probe: () => Promise<string | null>): Promise<BackendStatus['checks'][number]> {
    try {
      const problem = await withTimeout(probe(), 2000, name);
      return problem === null ? { name, ok: true } : { name, ok: false, detail: problem };
    } catch (err) {
      return { name, ok: false, detail: errorMessage(err) };
    }
  }

  return {
    feed,
    poison,
    async status() {
      // Reading the worker group's offsets doubles as the Kafka check: the producer's state alone
      // says nothing while no event is being sent.
      let workerLag: number | null = null;
      const kafkaCheck = check('kafka', async () => {
        if (await kafkaFailing()) return 'sends are failing; inserts answer -5';
        try {
          workerLag = await withTimeout(operator.workerLag(), 1500, 'Kafka');
          return null;
        } catch (err) {
          return `offsets cannot be read: ${errorMessage(err)}`;
        }
      });
      const checks = await Promise.all([
        check('redis', async () => ((await redis.healthy()) ? null : 'PING not answered')),
        kafkaCheck,
        ...(clickhouse === null
          ? []
          : [check('clickhouse', async () => ((await clickhouse.ping()).success ? null : 'ping failed'))]),
      ]);
      return { checks, workerLag };
    },
    async close() {
      await feed.close();
      await operator.close();
    },
  };
}
