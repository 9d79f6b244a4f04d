import type { Admin, Kafka, Producer } from 'kafkajs';

interface KafkaOperatorOptions {
  kafka: Kafka;
  topic: string;
  /** The worker's consumer group, whose lag the overview shows. */
  workerGroupId: string;
}

/**
 * What the admin API asks of Kafka besides events: the worker group's lag, and re-driving a message
 * the worker set aside. The admin client and producer connect on first use, so a gateway whose
 * operators never ask costs no extra connections.
 */
export class KafkaOperator {
  private admin: Promise<Admin> | null = null;
  private producer: Promise<Producer> | null = null;

  constructor(private readonly options: KafkaOperatorOptions) {}

  /** Messages on the topic the worker group has not committed, over all partitions. */
  async workerLag(): Promise<number> {
    const admin = await this.connectedAdmin();
    const { topic, workerGroupId } = this.options;
    const [high, groups] = await Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId: workerGroupId, topics: [topic] })]);
    const committed = new Map<number, string>();
    for (const t of groups) if (t.topic === topic) for (const p of t.partitions) committed.set(p.partition, p.offset);
    let lag = 0;
    for (const p of high) {
      const c = committed.get(p.partition);
      const from = c === undefined || c === '-1' ? Number(p.low) : Number(c);
      lag += Math.max(0, Number(p.high) - from);
    }
    return lag;
  }

  /** Sends one message with acks=all. */
  async send(topic: string, key: string | null, value: Buffer, headers: Record<string, string>): Promise<void> {
    const producer = await this.connectedProducer();
    await producer.send({ topic, acks: -1, messages: [{ key, value, headers }] });
  }

  async close(): Promise<void> {
    const [admin, producer] = [this.admin, this.producer];
    this.admin = null;
    this.producer = null;
    await Promise.allSettled([admin?.then((a) => a.disconnect()), producer?.then((p) => p.disconnect())]);
  }

  private connectedAdmin(): Promise<Admin> {
    this.admin ??= connect(this.options.kafka.admin(), () => (this.admin = null));
    return this.admin;
  }

  private connectedProducer(): Promise<Producer> {
    this.producer ??= connect(this.options.kafka.producer({ allowAutoTopicCreation: false, idempotent: false }), () => (this.producer = null));
    return this.producer;
  }
}

/** Connects, forgetting the attempt when it fails so the next call tries again. */
async function connect<T extends { connect(): Promise<void> }>(client: T, forget: () => void): Promise<T> {
  try {
    await client.connect();
    return client;
  } catch (err) {
    forget();
    throw err;
  }
}
