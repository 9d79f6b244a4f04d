/**
 * kafkajs vs @platformatic/kafka (through the event log's own EventProducer) vs
 * @confluentinc/kafka-javascript (librdkafka, through its KafkaJS-compatible API; when installed)
 * on the gateway's workload: ~600-byte JSON event messages keyed by provider|Dominio, acks=all.
 *
 *   npx tsx bench/kafka-clients.ts [--messages 200000] [--batch 500] [--singles 1000] [--reps 3] [--brokers host:port]
 *
 * Scenarios, each on a fresh 4-partition topic:
 *   batch, 1 in flight   sends of --batch messages, each awaited before the next (what the event log
 *                        does under load: one send per partition at a time)
 *   batch, 5 in flight   the same with 5 sends outstanding
 *   single               --singles sends of 1 message, each awaited (latency floor)
 * Figures (median of --reps runs): messages/s, p50/p99 of the time from send() to acknowledgement,
 * CPU per message of this process (librdkafka's native threads included) and of the local broker
 * (from /proc, when scripts/services started it: on a 2-core box they compete), and the event-loop
 * delay while sending (p99/max: how long the client keeps a gateway from serving requests).
 *
 * The confluent client is not a dependency (it needs a native build): it is loaded, when present,
 * from CONFLUENT_KAFKA_DIR (default /tmp/kjs), a directory where it was built from source with
 *   apt-get install zlib1g-dev libssl-dev libzstd-dev libcurl4-openssl-dev libsasl2-dev liblz4-dev
 *   CKJS_LINKING=dynamic npm_config_build_from_source=true npm install @confluentinc/kafka-javascript@1.10.1
 * (its install script otherwise first tries a prebuilt binary from GitHub, and its default static
 * build downloads its dependencies' sources from GitHub; build-from-source with dynamic linking
 * uses the librdkafka source inside the npm package and Debian's libraries: 1.8 minutes here).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { Kafka, Partitioners, logLevel, type Message } from 'kafkajs';
import { ensureTopic, KafkaAdmin } from '../shared/backends/kafka/client.js';
import { KeyPartitioner } from '../shared/backends/kafka/partitioner.js';
import { EventProducer, type PartitionedMessage } from '../shared/backends/kafka/producer.js';
import type { EventRecord } from '../shared/backends/types.js';
import { encodeEvent, messageKey } from '../shared/events/wire.js';
import { cpuSeconds } from './lib/proc.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? (process.argv[i + 1] as string) : fallback;
}

const MESSAGES = Number(arg('messages', '200000'));
const BATCH = Number(arg('batch', '500'));
const SINGLES = Number(arg('singles', '1000'));
const REPS = Math.max(1, Number(arg('reps', '3')));
const brokers = arg('brokers', process.env.KAFKA_BROKERS ?? brokersFromServicesEnv() ?? '127.0.0.1:19092').split(',');
const CONFLUENT_DIR = process.env.CONFLUENT_KAFKA_DIR ?? '/tmp/kjs';

/** KAFKA_BROKERS from the .services.env that scripts/services/up.sh writes. */
function brokersFromServicesEnv(): string | null {
  try {
    const text = readFileSync(process.env.SERVICES_ENV_FILE || path.resolve(import.meta.dirname, '..', '.services.env'), 'utf8');
    return /^KAFKA_BROKERS=(.*)$/m.exec(text)?.[1] ?? null;
  } catch {
    return null;
  }
}

// ------------------------------------------------------------------------------------------------
// Workload

/** A pool of realistic messages (encoded once, so the figures are the clients' cost). */
function makePool(size: number): Message[] {
  const pool: Message[] = [];
  const now = Date.now();
  for (let i = 0; i < size; i++) {
    const event: EventRecord = {
      systemUser: `provider${i % 20}`,
      dominio: `AB${String(i % 5000).padStart(3, '0')}CD`,
      nroSerie: `SN-${i % 5000}-0000000`,
      codigo: String(i % 50),
      latitud: -34.6 + (i % 1000) / 10_000,
      longitud: -58.4 - (i % 1000) / 10_000,
      altitud: 25.5,
      velocidad: 60.5,
      rumbo: 180,
      validPosition: true,
      valido: true,
      eventTimeText: '2024-05-01T09:00:00.1234567-03:00',
      eventTime: { epochMs: now - 1000 + (i % 1000), subMsTicks: i % 10_000 },
      receptionTimeText: '2024-05-01T09:00:01-03:00',
      receptionTime: { epochMs: now, subMsTicks: 0 },
      receivedAt: now,
      crudo: null,
      sensors: [
        { clave: 'ign', valor: '1' },
        { clave: 'temp', valor: '21.5' },
      ],
      operation: 'LoginYInsertarEvento2',
      dedupeKey: `provider${i % 20}|AB${i % 5000}CD|SN-${i % 5000}|${i % 50}|638501040001234567`,
    };
    pool.push({ key: messageKey(event), value: encodeEvent(BigInt(1_000_000_000 + i), event) });
  }
  return pool;
}

const pool = makePool(20_000);
/** The same messages with the partition the event log would give them (4 partitions). */
const keys = await KeyPartitioner.open('bench', 4);
const partitioned = new Map<Message, PartitionedMessage>(pool.map((m) => [m, { key: m.key as string, value: m.value as Buffer, partition: keys.partition(m.key as string) }]));
const avgBytes = Math.round(pool.reduce((s, m) => s + (m.value as Buffer).length, 0) / pool.length);

// ------------------------------------------------------------------------------------------------
// Clients behind one shape

interface BenchProducer {
  send(messages: Message[]): Promise<void>;
  disconnect(): Promise<void>;
}

interface ClientUnderTest {
  name: string;
  version: string;
  /** `variant` selects client-specific settings (e.g. idempotence). */
  open(topic: string, variant: string): Promise<BenchProducer>;
  variants: string[];
}

const kafkajsAdmin = new Kafka({ clientId: 'bench-admin', brokers, logLevel: logLevel.NOTHING }).admin();

function kafkajsClient(): ClientUnderTest {
  const version = (createRequire(import.meta.url)('kafkajs/package.json') as { version: string }).version;
  return {
    name: 'kafkajs',
    version,
    variants: ['default'],
    async open(topic) {
      const kafka = new Kafka({ clientId: 'bench-kafkajs', brokers, logLevel: logLevel.NOTHING });
      // As the event log configures it: no internal retries, Java-compatible partitioner.
      const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false, retry: { retries: 0 } });
      await producer.connect();
      return {
        send: async (messages) => {
          await producer.send({ topic, acks: -1, messages });
        },
        disconnect: () => producer.disconnect(),
      };
    },
  };
}

function platformaticClient(): ClientUnderTest {
  // Its package.json is not among its exports: read it next to dist/.
  const entry = createRequire(import.meta.url).resolve('@platformatic/kafka');
  const { version } = JSON.parse(readFileSync(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')) as { version: string };
  return {
    name: '@platformatic/kafka',
    version,
    variants: ['default'],
    async open(topic) {
      // As the event log opens it (acks=all, no retries of its own, explicit partitions).
      const producer = await EventProducer.open({ brokers, clientId: 'bench-platformatic', sendTimeoutMs: 30_000, maxInFlightSends: 5 });
      await producer.partitionCount(topic);
      return {
        send: async (messages) => {
          await producer.send({ topic, messages: messages.map((m) => partitioned.get(m) as PartitionedMessage) });
        },
        disconnect: () => producer.disconnect(),
      };
    },
  };
}

/** The slice of @confluentinc/kafka-javascript's KafkaJS-compatible API used here. */
interface ConfluentModule {
  librdkafkaVersion: string;
  KafkaJS: {
    Kafka: new (config: object) => {
      producer(config: object): {
        connect(): Promise<void>;
        disconnect(): Promise<void>;
        send(record: { topic: string; messages: Message[] }): Promise<unknown>;
      };
    };
    logLevel: { NOTHING: number };
  };
}

function confluentClient(): ClientUnderTest | string {
  let mod: ConfluentModule;
  let version: string;
  try {
    const req = createRequire(path.join(CONFLUENT_DIR, 'package.json'));
    mod = req('@confluentinc/kafka-javascript') as ConfluentModule;
    version = (req('@confluentinc/kafka-javascript/package.json') as { version: string }).version;
  } catch (error) {
    return `@confluentinc/kafka-javascript could not be loaded from ${CONFLUENT_DIR}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
  }
  return {
    name: 'confluent',
    version: `${version} (librdkafka ${mod.librdkafkaVersion})`,
    variants: ['linger.ms=0', 'linger.ms=0, idempotent', 'linger.ms=2, idempotent'],
    async open(topic, variant) {
      const kafka = new mod.KafkaJS.Kafka({ kafkaJS: { clientId: 'bench-confluent', brokers, logLevel: mod.KafkaJS.logLevel.NOTHING } });
      const producer = kafka.producer({
        // The gateway batches before calling send; librdkafka's own linger (default 5 ms) adds to it.
        'linger.ms': variant.startsWith('linger.ms=2') ? 2 : 0,
        // Java-compatible key hashing, as kafkajs' DefaultPartitioner: same key -> same partition.
        partitioner: 'murmur2_random',
        // Idempotence: per-partition order and no duplicates with up to 5 requests in flight.
        'enable.idempotence': variant.endsWith('idempotent'),
        kafkaJS: { acks: -1, allowAutoTopicCreation: false },
      });
      await producer.connect();
      return {
        send: async (messages) => {
          await producer.send({ topic, messages });
        },
        disconnect: () => producer.disconnect(),
      };
    },
  };
}

// ------------------------------------------------------------------------------------------------
// Runner

/** CPU seconds used so far by the local broker started by scripts/services, or null. */
function brokerCpuSeconds(): number | null {
  try {
    const dir = process.env.SERVICES_DIR ?? path.resolve(import.meta.dirname, '..', '.services');
    return cpuSeconds(Number(readFileSync(path.join(dir, 'kafka.pid'), 'utf8').trim()));
  } catch {
    return null;
  }
}

interface Result {
  client: string;
  scenario: string;
  messages: number;
  seconds: number;
  perSecond: number;
  p50ms: number;
  p99ms: number;
  cpuUsPerMessage: number;
  brokerCpuUsPerMessage: number | null;
  /** Event-loop delay (p99, max) while sending: how long the client blocks other work (requests). */
  loopP99ms: number;
  loopMaxMs: number;
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

let topicSerial = 0;
async function freshTopic(): Promise<string> {
  const topic = `bench_clients_${process.pid}_${Date.now().toString(36)}_${topicSerial++}`;
  const admin = await KafkaAdmin.open({ brokers, clientId: 'bench-admin', requestTimeoutMs: 10_000 });
  try {
    await ensureTopic(admin, { topic, partitions: 4, replicationFactor: 1 });
  } finally {
    await admin.close();
  }
  return topic;
}

async function run(client: ClientUnderTest, variant: string, scenario: string, total: number, perSend: number, concurrency: number): Promise<Result> {
  const topic = await freshTopic();
  const producer = await client.open(topic, variant);
  // Warm-up: connections, metadata; a new topic's leaders may take a moment (NOT_LEADER_FOR_PARTITION).
  for (let attempt = 1; ; attempt++) {
    try {
      await producer.send(pool.slice(0, Math.min(perSend, 100)));
      break;
    } catch (error) {
      if (attempt >= 20) throw error;
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  const latencies: number[] = [];
  let next = 0;
  const sends = Math.ceil(total / perSend);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const cpu0 = process.cpuUsage();
  const broker0 = brokerCpuSeconds();
  const t0 = performance.now();
  const worker = async (): Promise<void> => {
    while (next < sends) {
      const i = next++;
      const start = (i * perSend) % pool.length;
      const messages = pool.slice(start, start + perSend);
      if (messages.length < perSend) messages.push(...pool.slice(0, perSend - messages.length));
      const t = performance.now();
      await producer.send(messages);
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const broker1 = brokerCpuSeconds();
  loop.disable();
  await producer.disconnect();
  await kafkajsAdmin.deleteTopics({ topics: [topic] }).catch(() => {});

  latencies.sort((a, b) => a - b);
  const messages = sends * perSend;
  return {
    client: variant === 'default' ? client.name : `${client.name} (${variant})`,
    scenario,
    messages,
    seconds,
    perSecond: messages / seconds,
    p50ms: quantile(latencies, 0.5),
    p99ms: quantile(latencies, 0.99),
    cpuUsPerMessage: (cpu.user + cpu.system) / messages,
    brokerCpuUsPerMessage: broker0 === null || broker1 === null ? null : ((broker1 - broker0) * 1e6) / messages,
    loopP99ms: loop.percentile(99) / 1e6,
    loopMaxMs: loop.max / 1e6,
  };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? NaN;
};

async function runReps(client: ClientUnderTest, variant: string, scenario: string, total: number, perSend: number, concurrency: number): Promise<Result> {
  const reps: Result[] = [];
  for (let i = 0; i < REPS; i++) reps.push(await run(client, variant, scenario, total, perSend, concurrency));
  const first = reps[0] as Result;
  const brokerCpu = reps.map((r) => r.brokerCpuUsPerMessage).filter((v): v is number => v !== null);
  return {
    ...first,
    seconds: median(reps.map((r) => r.seconds)),
    perSecond: median(reps.map((r) => r.perSecond)),
    p50ms: median(reps.map((r) => r.p50ms)),
    p99ms: median(reps.map((r) => r.p99ms)),
    cpuUsPerMessage: median(reps.map((r) => r.cpuUsPerMessage)),
    brokerCpuUsPerMessage: brokerCpu.length > 0 ? median(brokerCpu) : null,
    loopP99ms: median(reps.map((r) => r.loopP99ms)),
    loopMaxMs: median(reps.map((r) => r.loopMaxMs)),
  };
}

async function main(): Promise<void> {
  await kafkajsAdmin.connect();
  const clients: ClientUnderTest[] = [kafkajsClient(), platformaticClient()];
  const confluent = confluentClient();
  let skipped: string | null = null;
  if (typeof confluent === 'string') skipped = confluent;
  else clients.push(confluent);

  console.log(`brokers ${brokers.join(',')}; messages of ${avgBytes} bytes on average, acks=all, 4 partitions; median of ${REPS} runs`);
  for (const c of clients) console.log(`  ${c.name}: ${c.version}`);
  if (skipped) console.log(`  confluent: NOT MEASURED - ${skipped}`);

  const results: Result[] = [];
  for (const client of clients) {
    for (const variant of client.variants) {
      results.push(await runReps(client, variant, `batch ${BATCH}, 1 in flight`, MESSAGES, BATCH, 1));
      results.push(await runReps(client, variant, `batch ${BATCH}, 5 in flight`, MESSAGES, BATCH, 5));
      results.push(await runReps(client, variant, 'single, 1 in flight', SINGLES, 1, 1));
      console.error(`done: ${client.name} ${variant}`);
    }
  }

  const rows = results.map((r) => ({
    client: r.client,
    scenario: r.scenario,
    messages: r.messages,
    'msgs/s': Math.round(r.perSecond),
    'p50 ms/send': Number(r.p50ms.toFixed(2)),
    'p99 ms/send': Number(r.p99ms.toFixed(2)),
    'cpu us/msg': Number(r.cpuUsPerMessage.toFixed(1)),
    'broker cpu us/msg': r.brokerCpuUsPerMessage === null ? '-' : Number(r.brokerCpuUsPerMessage.toFixed(1)),
    'loop delay p99/max ms': `${r.loopP99ms.toFixed(1)}/${r.loopMaxMs.toFixed(1)}`,
  }));
  console.table(rows);
  await kafkajsAdmin.disconnect();
}

await main();
