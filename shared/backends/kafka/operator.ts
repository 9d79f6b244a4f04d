import type { Producer } from '@platformatic/kafka';
import { baseOptions, KafkaAdmin, type KafkaClientOptions } from './client.js';
import { ConnectionWatch } from './connection-watch.js';
import { kafkaModule } from './library.js';
import { groupLag } from './group-positions.js';

interface KafkaOperatorOptions extends KafkaClientOptions {
  topic: string;
  /** The worker's consumer group, whose lag the overview shows. */
  workerGroupId: string;
}

/**
 * What the admin API asks of Kafka besides events: the worker group's lag, and re-driving a message
 * the worker set aside. The admin client and the producer are made on first use, so a gateway whose
 * operators never ask costs no extra connections.
 */
export class KafkaOperator {
  private admin: Promise<KafkaAdmin> | null = null;
  private producer: Promise<{ producer: Producer<string | null, Buffer, string, string>; watch: ConnectionWatch; acks: number }> | null = null;

  constructor(private readonly options: KafkaOperatorOptions) {}

  /** Messages on the topic the worker group has not committed, over all partitions. */
  async workerLag(): Promise<number> {
    this.admin ??= KafkaAdmin.open(this.options);
    const lag = await groupLag(await this.admin, this.options.topic, this.options.workerGroupId);
    let total = 0;
    for (const n of lag.values()) total += n;
    return total;
  }

  /** Sends one message with acks=all. */
  async send(topic: string, key: string | null, value: Buffer, headers: Record<string, string>): Promise<void> {
    this.producer ??= (async () => {
      const { Producer, ProduceAcks, stringSerializer } = await kafkaModule();
      const producer = new Producer<string | null, Buffer, string, string>({
        ...baseOptions(this.options, `${this.options.clientId}-redrive`),
        serializers: {
          key: (k: string | null | undefined) => stringSerializer(k ?? undefined),
          headerKey: stringSerializer,
          headerValue: stringSerializer,
        },
      });
      const watch = new ConnectionWatch(this.options.keepAliveMs);
      watch.client(producer, this.options.brokers);
      return { producer, watch, acks: ProduceAcks.ALL };
    })();
    const { producer, watch, acks } = await this.producer;
    await watch.within(
      () => producer.send({ messages: [{ topic, key, value, headers }], acks }),
      2 * this.options.requestTimeoutMs,
      'Kafka send',
    );
  }

  async close(): Promise<void> {
    const [admin, producer] = [this.admin, this.producer];
    this.admin = null;
    this.producer = null;
    await Promise.allSettled([admin?.then((a) => a.close()), producer?.then((p) => p.producer.close())]);
  }
}
