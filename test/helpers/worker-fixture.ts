/** Shared fixture of the worker suites: real Kafka and ClickHouse, unique topics, groups and databases. */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { Kafka, logLevel, Partitioners, type Admin, type Producer } from 'kafkajs';
import { services, uniqueName } from './services.js';
import { exampleEventRecord } from '../../shared/events/schema.js';
import { encodeEvent, messageKey } from '../../shared/events/wire.js';
import type { EventInstant, EventRecord } from '../../shared/backends/types.js';
import type { LastReportSink, LastReportUpdate } from '../../shared/backends/scale-out-types.js';
import { createClickHouseClient, quoteIdentifier, type ClickHouseClient } from '../../shared/backends/clickhouse/index.js';
import { KafkaAdmin, waitForTopic } from '../../shared/backends/kafka/client.js';
import { startWorker, type Worker, type WorkerOptions } from '../../worker/run.js';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const svc = services();
export const CH = { url: svc.clickhouseUrl, username: 'default', password: '' };

// ---- helpers ----------------------------------------------------------------------------------

export { sleep, waitFor } from './wait.js';

export let eventSeq = 0;
export function makeEvent(over: Partial<EventRecord> = {}): EventRecord {
  eventSeq++;
  const epochMs = Date.UTC(2025, 0, 1) + eventSeq * 1000;
  return {
    ...exampleEventRecord(),
    systemUser: 'prov1',
    dominio: `AB${eventSeq % 5}`,
    nroSerie: `NS${eventSeq}`,
    codigo: '1',
    latitud: -34.6 + eventSeq / 1e6,
    longitud: -58.4,
    altitud: 25,
    velocidad: 60,
    rumbo: 90,
    validPosition: true,
    valido: null,
    eventTimeText: new Date(epochMs).toISOString(),
    eventTime: { epochMs, subMsTicks: eventSeq % 10_000 },
    receptionTimeText: new Date(epochMs + 500).toISOString(),
    receptionTime: { epochMs: epochMs + 500, subMsTicks: 0 },
    receivedAt: epochMs + 1_000,
    crudo: null,
    sensors: [],
    operation: 'LoginYInsertarEvento',
    dedupeKey: `dk${eventSeq}`,
    ...over,
  };
}

export interface Logged {
  level: string;
  fields: Record<string, unknown>;
  message: string;
}
export function testLogger(lines: Logged[]): WorkerOptions['logger'] {
  const at = (level: string) => (fields: Record<string, unknown>, message: string) => {
    lines.push({ level, fields, message });
    if (process.env.TEST_LOG_LEVEL === 'info') console.log(level, message, JSON.stringify(fields));
  };
  return { info: at('info'), warn: at('warn'), error: at('error') };
}

/** Forward-only, like the real store: keeps the max per vehicle and every call. */
export class RecordingSink implements LastReportSink {
  readonly calls: LastReportUpdate[][] = [];
  readonly latest = new Map<string, EventInstant>();
  async record(updates: readonly LastReportUpdate[]): Promise<void> {
    this.calls.push([...updates]);
    for (const u of updates) {
      const key = `${u.systemUser}|${u.dominio}`;
      const seen = this.latest.get(key);
      if (!seen || u.at.epochMs > seen.epochMs || (u.at.epochMs === seen.epochMs && u.at.subMsTicks > seen.subMsTicks)) this.latest.set(key, u.at);
    }
  }
}

export class RecordingMetrics {
  batchSizes: number[] = [];
  insertSeconds: number[] = [];
  poisons = 0;
  lags = new Map<number, number>();
  readonly sink: NonNullable<WorkerOptions['metrics']> = {
    batchSize: (n) => this.batchSizes.push(n),
    insertSeconds: (s) => this.insertSeconds.push(s),
    lag: (p, l) => this.lags.set(p, l),
    poison: () => this.poisons++,
  };
}

export const kafka = new Kafka({ clientId: uniqueName('worker-test'), brokers: svc.kafkaBrokers, logLevel: logLevel.NOTHING });
export let admin: Admin;
/** The project's own admin client, for waitForTopic (kafkajs above is the tests' independent client). */
let ownAdmin: KafkaAdmin;
export let producer: Producer;
export let ch: ClickHouseClient;
export const topics: string[] = [];
export const databases: string[] = [];
export const workers: Worker[] = [];

export async function newTopic(partitions = 4): Promise<string> {
  const topic = uniqueName('worker_events');
  // Not createTopics' waitForLeaders: on a broker started moments ago its metadata call can fail
  // with "does not host this topic-partition"; waitForTopic retries until every leader serves.
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: false });
  await waitForTopic(ownAdmin, topic);
  topics.push(topic);
  return topic;
}

export function newDatabase(): string {
  const db = uniqueName('wk');
  databases.push(db);
  return db;
}

export async function produce(topic: string, events: readonly { id: bigint; event: EventRecord }[]): Promise<void> {
  for (let i = 0; i < events.length; i += 2000) {
    await producer.send({
      topic,
      acks: -1,
      messages: events.slice(i, i + 2000).map(({ id, event }) => ({ key: messageKey(event), value: encodeEvent(id, event) })),
    });
  }
}

export async function produceRaw(topic: string, values: (Buffer | null)[]): Promise<void> {
  await producer.send({ topic, acks: -1, messages: values.map((value) => ({ key: 'x|y', value })) });
}

export async function committed(groupId: string, topic: string): Promise<Map<number, bigint>> {
  const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
  return new Map((t?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
}

export const sumCommitted = (m: Map<number, bigint>): number => [...m.values()].reduce((a, o) => a + (o > 0n ? Number(o) : 0), 0);

export async function highWatermarks(topic: string): Promise<number> {
  const offsets = await admin.fetchTopicOffsets(topic);
  return offsets.reduce((a, p) => a + Number(p.high), 0);
}

export async function counts(db: string): Promise<{ rows: number; ids: number; raw: number }> {
  const r = await ch.query({
    query: `SELECT (SELECT count() FROM ${quoteIdentifier(db)}.events FINAL) AS rows,
                   (SELECT uniqExact(id) FROM ${quoteIdentifier(db)}.events FINAL) AS ids,
                   (SELECT count() FROM ${quoteIdentifier(db)}.events) AS raw`,
    format: 'JSONEachRow',
  });
  const [row] = await r.json<{ rows: string; ids: string; raw: string }>();
  return { rows: Number(row!.rows), ids: Number(row!.ids), raw: Number(row!.raw) };
}

export interface StartOpts extends Partial<WorkerOptions> {
  topic: string;
  groupId: string;
  database: string;
}
export async function start(o: StartOpts, log: Logged[] = []): Promise<Worker> {
  const { database, ...rest } = o;
  const w = await startWorker({
    brokers: svc.kafkaBrokers,
    clientId: uniqueName('worker'),
    clickhouse: { ...CH, database },
    batchRows: 5000,
    batchMs: 200,
    lastReports: new RecordingSink(),
    logger: testLogger(log),
    lagIntervalMs: 300,
    backoff: { initialMs: 50, maxMs: 1_000 },
    drainTimeoutMs: 10_000,
    ...rest,
  });
  workers.push(w);
  return w;
}

export function ids(n: number, base: bigint): bigint[] {
  return Array.from({ length: n }, (_, i) => base + BigInt(i));
}



export function ensureClickHouseUp(): void {
  execFileSync('bash', [path.join(ROOT, 'scripts/services/up.sh'), 'clickhouse'], { cwd: ROOT, stdio: 'pipe', timeout: 120_000 });
}


/** Registers the shared Kafka admin/producer and ClickHouse client, and cleans up after the file. */
export function useWorkerFixture(): void {
  beforeAll(async () => {
    admin = kafka.admin();
    await admin.connect();
    ownAdmin = await KafkaAdmin.open({ brokers: svc.kafkaBrokers, clientId: uniqueName('worker-test'), requestTimeoutMs: 5000 });
    producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
    await producer.connect();
    ch = createClickHouseClient({ ...CH, database: 'default' });
  }, 60_000);

  afterAll(async () => {
    ensureClickHouseUp();
    await Promise.allSettled(workers.map((w) => w.abort()));
    for (const db of databases) await ch.command({ query: `DROP DATABASE IF EXISTS ${quoteIdentifier(db)}` }).catch(() => undefined);
    await admin.deleteTopics({ topics }).catch(() => undefined);
    await producer.disconnect();
    await admin.disconnect();
    await ownAdmin.close();
    await ch.close();
  }, 120_000);
}
