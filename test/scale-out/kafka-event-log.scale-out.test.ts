/**
 * KafkaEventLog against a real broker (scripts/services, `npm run services:up`). Ids and dedupe
 * are in-memory doubles: the Redis versions are tested with Redis; what is under test here is the
 * event log and its use of Kafka.
 *
 * The broker-fault test runs its own private single-node Kafka (same scripts, own state dir and
 * ports), so stopping and pausing it cannot break other suites that vitest runs in parallel against
 * the shared broker.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { NetworkError, ResponseError } from '@platformatic/kafka';
import { Kafka, logLevel, type Admin, type Producer, type ProducerRecord, type RecordMetadata } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTopic, KafkaAdmin } from '../../shared/backends/kafka/client.js';
import { KafkaEventLog, KeyPartitioner, openKafkaEventLog, type KafkaEventLogOptions } from '../../shared/backends/kafka/event-log.js';
import type { AppendOutcome, EventRecord } from '../../shared/backends/types.js';
import type { DedupeEntry, DedupeIndex, IdAllocator } from '../../shared/backends/scale-out-types.js';
import { exampleEventRecord } from '../../shared/events/schema.js';
import { decodeEvent, messageKey } from '../../shared/events/wire.js';
import { services, uniqueName } from '../helpers/services.js';
import { REPO } from '../helpers/paths.js';
import { waitFor } from '../helpers/wait.js';
import { freePort } from '../helpers/spawned.js';

const ROOT = REPO;
const run = promisify(execFile);

// ------------------------------------------------------------------------------------------------
// Doubles

class MemoryIds implements IdAllocator {
  private next = 1n;
  calls = 0;
  /** While set, allocate() waits for it (to hold events in flight). */
  gate: Promise<void> | null = null;
  failWith: Error | null = null;
  async allocate(count: number): Promise<bigint[]> {
    this.calls++;
    if (this.gate) await this.gate;
    if (this.failWith) throw this.failWith;
    const out: bigint[] = [];
    for (let i = 0; i < count; i++) out.push(this.next++);
    return out;
  }
}

class MemoryDedupe implements DedupeIndex {
  readonly claims = new Map<string, { id: bigint; at: number }>();
  readonly released: string[] = [];
  failWith: Error | null = null;
  async claim(entries: readonly DedupeEntry[], windowMs: number): Promise<(bigint | null)[]> {
    if (this.failWith) throw this.failWith;
    const now = Date.now();
    return entries.map(({ key, id }) => {
      const first = this.claims.get(key);
      if (first !== undefined && now - first.at < windowMs) return first.id;
      this.claims.set(key, { id, at: now });
      return null;
    });
  }
  async release(entries: readonly Omit<DedupeEntry, 'id'>[]): Promise<void> {
    for (const { key } of entries) {
      this.claims.delete(key);
      this.released.push(key);
    }
  }
}

interface LogLine {
  level: 'info' | 'warn' | 'error';
  o: object;
  m: string;
}

function captureLogger(): KafkaEventLogOptions['logger'] & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  return {
    lines,
    info: (o, m) => void lines.push({ level: 'info', o, m }),
    warn: (o, m) => void lines.push({ level: 'warn', o, m }),
    error: (o, m) => void lines.push({ level: 'error', o, m }),
  };
}

class Metrics {
  batches: number[] = [];
  publishes: number[] = [];
  maxInFlight = 0;
  publishSeconds(s: number): void {
    this.publishes.push(s);
  }
  batchSize(n: number): void {
    this.batches.push(n);
  }
  inFlight(n: number): void {
    this.maxInFlight = Math.max(this.maxInFlight, n);
  }
}

let serial = 0;
function makeEvent(overrides: Partial<EventRecord> = {}): EventRecord {
  serial++;
  const now = Date.now();
  return {
    ...exampleEventRecord(),
    systemUser: 'acme',
    dominio: `AB${String(serial % 50).padStart(3, '0')}CD`,
    nroSerie: `SN-${serial}`,
    codigo: String(serial),
    latitud: -34.6 + serial / 1e6,
    longitud: -58.4,
    altitud: 25,
    velocidad: 60.5,
    rumbo: serial % 2 === 0 ? 180 : null,
    validPosition: true,
    valido: null,
    eventTimeText: '2024-05-01T09:00:00.123',
    eventTime: { epochMs: now - 1000, subMsTicks: serial % 10_000 },
    receptionTimeText: null,
    receptionTime: null,
    receivedAt: now,
    crudo: serial % 3 === 0 ? '$GPRMC,123519,A,4807.038,N*6A' : null,
    sensors: [{ clave: 'ign', valor: String(serial % 2) }],
    operation: 'LoginYInsertarEvento',
    dedupeKey: `key-${process.pid}-${serial}-${Math.random()}`,
    ...overrides,
  };
}

// ------------------------------------------------------------------------------------------------
// Kafka helpers

interface TopicMessage {
  partition: number;
  offset: bigint;
  key: string;
  id: bigint;
  event: EventRecord;
}

async function createTopic(brokers: string[], topic: string, partitions = 4): Promise<void> {
  const admin = await KafkaAdmin.open({ brokers, clientId: 'kel-test', requestTimeoutMs: 5000 });
  try {
    expect(await ensureTopic(admin, { topic, partitions, replicationFactor: 1 })).toEqual({ created: true, partitions });
  } finally {
    await admin.close();
  }
}

/** kafkajs: the tests' independent client, reading what the event log wrote. */
const kafkajs = (brokers: string[]): Kafka => new Kafka({ brokers, clientId: 'kel-test', logLevel: logLevel.NOTHING });

/** Everything on the topic, read from the beginning up to the current high watermarks. */
async function readTopic(kafka: Kafka, admin: Admin, topic: string): Promise<TopicMessage[]> {
  const offsets = await admin.fetchTopicOffsets(topic);
  const total = offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  if (total === 0) return [];
  const consumer = kafka.consumer({ groupId: uniqueName('kel-read'), maxWaitTimeInMs: 100 });
  const out: TopicMessage[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${out.length} of ${total} messages of ${topic}`)), 20_000);
      void consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            const { id, event } = decodeEvent(message.value ?? Buffer.alloc(0));
            out.push({ partition, offset: BigInt(message.offset), key: message.key?.toString('utf8') ?? '', id, event });
            if (out.length >= total) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return out;
}

/** In partition+offset order, each id's first copy only. */
function firstCopies(messages: TopicMessage[]): TopicMessage[] {
  const seen = new Set<bigint>();
  return [...messages]
    .sort((x, y) => x.partition - y.partition || (x.offset < y.offset ? -1 : x.offset > y.offset ? 1 : 0))
    .filter((m) => (seen.has(m.id) ? false : (seen.add(m.id), true)));
}

const okId = (o: AppendOutcome | undefined): bigint => {
  if (o === undefined || !o.ok) throw new Error(`expected ok, got ${JSON.stringify(o)}`);
  return o.id;
};

// ------------------------------------------------------------------------------------------------

describe('KafkaEventLog (real Kafka)', () => {
  let brokers: string[];
  let kafka: Kafka;
  let admin: Admin;
  const logs: KafkaEventLog[] = [];

  beforeAll(async () => {
    brokers = services().kafkaBrokers;
    kafka = kafkajs(brokers);
    admin = kafka.admin();
    await admin.connect();
  });

  afterAll(async () => {
    await Promise.allSettled(logs.map((l) => l.close()));
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
    await admin?.disconnect();
  });

  interface Setup {
    log: KafkaEventLog;
    topic: string;
    ids: MemoryIds;
    dedupe: MemoryDedupe;
    metrics: Metrics;
    logger: ReturnType<typeof captureLogger>;
  }

  async function setup(overrides: Partial<KafkaEventLogOptions> = {}, topicOverride?: string, partitions = 4): Promise<Setup> {
    const topic = topicOverride ?? uniqueName('kel');
    if (topicOverride === undefined) await createTopic(brokers, topic, partitions);
    const ids = new MemoryIds();
    const dedupe = new MemoryDedupe();
    const metrics = new Metrics();
    const logger = captureLogger();
    const log = await openKafkaEventLog({
      brokers,
      topic,
      clientId: 'kel-test',
      ids,
      dedupe,
      dedupeWindowMs: 600_000,
      lingerMs: 2,
      batchEvents: 500,
      maxInFlightEvents: 20_000,
      sendTimeoutMs: 5_000,
      logger,
      metrics,
      ...overrides,
    });
    logs.push(log);
    return { log, topic, ids, dedupe, metrics, logger };
  }

  it('publishes appended events: exact ids, keys and values, acks only after the broker', async () => {
    // A linger long enough that both requests certainly share the send, even on a loaded box.
    const { log, topic, metrics } = await setup({ lingerMs: 50 });
    const batchA = [makeEvent({ systemUser: 'acme', dominio: 'AAA111' }), makeEvent({ systemUser: 'acme', dominio: 'BBB222' })];
    const batchB = [makeEvent({ systemUser: 'other', dominio: 'AAA111', crudo: 'raw "quoted" ñ', sensors: [] })];
    const [a, b] = await Promise.all([log.append(batchA), log.append(batchB)]);
    const outcomes = [...a, ...b];
    expect(outcomes.every((o) => o.ok && !o.duplicate)).toBe(true);
    const ids = outcomes.map(okId);
    expect(new Set(ids).size).toBe(3);

    const onTopic = firstCopies(await readTopic(kafka, admin, topic));
    expect(onTopic).toHaveLength(3);
    const sent = [...batchA, ...batchB];
    sent.forEach((event, i) => {
      const m = onTopic.find((x) => x.id === ids[i]);
      expect(m, `id ${ids[i]} on the topic`).toBeDefined();
      expect(m?.key).toBe(messageKey(event));
      expect(m?.event).toEqual(event);
    });
    // The two requests shared one send.
    expect(metrics.batches).toEqual([3]);
    expect(log.stats).toMatchObject({ sends: 1, events: 3, failedSends: 0, inFlight: 0, queued: 0 });
  });

  it('many concurrent appends share few sends, and all resolve', async () => {
    const { log, topic, metrics } = await setup({ lingerMs: 5, batchEvents: 500 });
    const calls = Array.from({ length: 300 }, () => log.append([makeEvent()]));
    const results = (await Promise.all(calls)).flat();
    expect(results.every((o) => o.ok)).toBe(true);
    expect(metrics.batches.reduce((s, n) => s + n, 0)).toBe(300);
    // Shared, not one send per append. (How many depends on how the appends' Redis round trips
    // spread over the 5 ms linger windows: 1-3 on an idle box, more on a loaded one.)
    expect(metrics.batches.length).toBeLessThanOrEqual(30);

    // Past batchEvents a send goes at once, never bigger than batchEvents.
    metrics.batches = [];
    const big = Array.from({ length: 40 }, () => log.append(Array.from({ length: 50 }, () => makeEvent())));
    expect((await Promise.all(big)).flat().every((o) => o.ok)).toBe(true);
    expect(metrics.batches.reduce((s, n) => s + n, 0)).toBe(2000);
    expect(Math.max(...metrics.batches)).toBeLessThanOrEqual(500);
    expect(metrics.batches.length).toBeLessThanOrEqual(10);

    expect(firstCopies(await readTopic(kafka, admin, topic))).toHaveLength(2300);
  });

  it('a resend inside the window gets the first id and is published again under it', async () => {
    const { log, topic, dedupe, ids } = await setup();
    const first = makeEvent({ dominio: 'DUP001' });
    const [o1] = await log.append([first]);
    const id1 = okId(o1);
    expect(o1).toEqual({ ok: true, id: id1, duplicate: false });

    // The same identity again (a resend after a lost answer), and twice inside one call.
    const again = { ...first, receivedAt: first.receivedAt + 1000 };
    const [o2, o3] = await log.append([again, again]);
    expect(o2).toEqual({ ok: true, id: id1, duplicate: true });
    expect(o3).toEqual({ ok: true, id: id1, duplicate: true });

    // Another gateway claimed a key, then died before publishing: the resend here publishes that id.
    const orphan = makeEvent({ dominio: 'DUP002' });
    const [orphanId] = await ids.allocate(1);
    await dedupe.claim([{ systemUser: orphan.systemUser, key: orphan.dedupeKey, id: orphanId as bigint }], 600_000);
    const [o4] = await log.append([orphan]);
    expect(o4).toEqual({ ok: true, id: orphanId, duplicate: true });

    const onTopic = await readTopic(kafka, admin, topic);
    // Three copies of id1 (exactly, unless a send was repeated for a leadership move).
    const copies = onTopic.filter((m) => m.id === id1).length;
    if (log.stats.leadershipRetries === 0) expect(copies).toBe(3);
    else expect(copies).toBeGreaterThanOrEqual(3);
    expect(onTopic.filter((m) => m.id === orphanId).length).toBeGreaterThanOrEqual(1);
    expect(onTopic.find((m) => m.id === orphanId)?.event).toEqual(orphan);
    expect(log.stats.duplicates).toBe(3);
  });

  it("keeps one vehicle's events in append order, with several sends in flight", async () => {
    // 16 partitions and small batches, so sends on disjoint partitions overlap.
    const { log, topic, metrics } = await setup({ lingerMs: 0, batchEvents: 6, maxInFlightSends: 5 }, undefined, 16);
    const vehicles = ['ORD001', 'ORD002'].map((dominio) => ({ systemUser: 'acme', dominio }));
    const calls: Promise<AppendOutcome[]>[] = [];
    const sent: EventRecord[] = [];
    for (let i = 0; i < 150; i++) {
      // Mixed with other vehicles so batches interleave partitions.
      const events = [
        makeEvent({ ...vehicles[i % 2], codigo: `o${i}a` }),
        makeEvent({ dominio: `OTHER${i % 40}` }),
        makeEvent({ ...vehicles[i % 2], codigo: `o${i}b` }),
      ];
      sent.push(...events);
      calls.push(log.append(events));
      if (i % 10 === 9) await new Promise((r) => setImmediate(r));
    }
    const outcomes = (await Promise.all(calls)).flat();
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(metrics.batches.length).toBeGreaterThan(10);
    expect(log.stats.peakSendsInFlight).toBeGreaterThan(1);

    // Sequential appends (the causal case) too.
    for (let i = 0; i < 20; i++) {
      const e = makeEvent({ ...vehicles[0], codigo: `s${i}` });
      sent.push(e);
      outcomes.push(...(await log.append([e])));
    }

    // A send refused for leadership is sent again whole, so a message can be on the topic twice
    // (same id, next to its first copy): compare the first copies.
    const onTopic = firstCopies(await readTopic(kafka, admin, topic));
    expect(onTopic).toHaveLength(sent.length);
    for (const vehicle of vehicles) {
      const expected = sent.map((e, i) => ({ e, id: okId(outcomes[i]) })).filter(({ e }) => e.dominio === vehicle.dominio);
      const got = onTopic.filter((m) => m.key === messageKey(vehicle));
      expect(new Set(got.map((m) => m.partition)).size).toBe(1);
      expect(got.map((m) => m.event.codigo)).toEqual(expected.map(({ e }) => e.codigo));
      expect(got.map((m) => m.id)).toEqual(expected.map(({ id }) => id));
    }
  });

  it('backpressure: past maxInFlightEvents appends answer unavailable at once', async () => {
    const { log, ids, metrics } = await setup({ maxInFlightEvents: 10 });
    let open: () => void = () => {};
    ids.gate = new Promise<void>((r) => (open = r));
    const held = [log.append([makeEvent(), makeEvent(), makeEvent()]), log.append(Array.from({ length: 6 }, () => makeEvent()))];
    expect(log.stats.inFlight).toBe(9);

    const t0 = performance.now();
    const rejected = await log.append([makeEvent(), makeEvent()]);
    expect(performance.now() - t0).toBeLessThan(50);
    expect(rejected).toEqual([
      { ok: false, reason: 'unavailable' },
      { ok: false, reason: 'unavailable' },
    ]);
    // One more still fits.
    const fits = log.append([makeEvent()]);
    expect(log.stats.inFlight).toBe(10);

    open();
    ids.gate = null;
    expect([...(await Promise.all(held)).flat(), ...(await fits)].every((o) => o.ok)).toBe(true);
    expect(log.stats).toMatchObject({ inFlight: 0, rejectedBackpressure: 2 });
    expect(metrics.maxInFlight).toBe(10);
    expect((await log.append([makeEvent()]))[0]?.ok).toBe(true);
  });

  it('answers unavailable when ids or dedupe fail (Redis down), publishing nothing', async () => {
    const { log, topic, ids, dedupe } = await setup();
    ids.failWith = new Error('redis down');
    expect(await log.append([makeEvent()])).toEqual([{ ok: false, reason: 'unavailable' }]);
    ids.failWith = null;
    dedupe.failWith = new Error('redis down');
    expect(await log.append([makeEvent(), makeEvent()])).toEqual([
      { ok: false, reason: 'unavailable' },
      { ok: false, reason: 'unavailable' },
    ]);
    dedupe.failWith = null;
    // A hung Redis is bounded by sendTimeoutMs too.
    ids.gate = new Promise<void>(() => {});
    const { log: short, ids: shortIds } = await setup({ sendTimeoutMs: 300 }, topic);
    shortIds.gate = ids.gate;
    const t0 = performance.now();
    expect(await short.append([makeEvent()])).toEqual([{ ok: false, reason: 'unavailable' }]);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(short.stats.inFlight).toBe(0);
    expect(await readTopic(kafka, admin, topic)).toHaveLength(0);
    expect(log.stats.rejectedSeams).toBe(3);
  });

  it('an event too large for one send is refused alone, without failing its batch or the broker state', async () => {
    const { log, topic, dedupe } = await setup({ maxSendBytes: 4000 });
    const big = makeEvent({ crudo: 'x'.repeat(5000) });
    const small = [makeEvent(), makeEvent()];
    const outcomes = await log.append([small[0] as EventRecord, big, small[1] as EventRecord]);
    expect(outcomes[0]?.ok).toBe(true);
    expect(outcomes[1]).toEqual({ ok: false, reason: 'unavailable' });
    expect(outcomes[2]?.ok).toBe(true);
    expect(dedupe.claims.has(big.dedupeKey)).toBe(true); // kept: a retry reuses the id (never a second one)
    expect(log.failing).toBe(false);
    expect(firstCopies(await readTopic(kafka, admin, topic)).map((m) => m.id).sort()).toEqual([okId(outcomes[0]), okId(outcomes[2])].sort());
  });

  it('sends again when partition leadership moved (not appended), but fails other errors at once', async () => {
    // A scripted producer: leadership moves are hard to provoke on a one-node broker.
    const script: (Error | null)[] = [];
    const sends: number[] = [];
    // As @platformatic/kafka reports it: a produce response with the partition's error code 6.
    const leadership = () => new ResponseError(0, 9, { '/topics/0/partitions/1': [6, null] }, {});
    const producer = {
      send: async (record: ProducerRecord): Promise<RecordMetadata[]> => {
        sends.push(record.messages.length);
        const next = script.shift();
        if (next) throw next;
        return [];
      },
      disconnect: async () => {},
    } as unknown as Producer;
    const dedupe = new MemoryDedupe();
    const log = new KafkaEventLog(producer, await KeyPartitioner.open('scripted', 4), {
      brokers: [],
      topic: 'scripted',
      clientId: 'kel-test',
      ids: new MemoryIds(),
      dedupe,
      dedupeWindowMs: 600_000,
      lingerMs: 0,
      batchEvents: 500,
      maxInFlightEvents: 1000,
      sendTimeoutMs: 5000,
      logger: captureLogger(),
    });

    script.push(leadership(), leadership());
    const t0 = performance.now();
    const [ok] = await log.append([makeEvent()]);
    expect(ok?.ok).toBe(true);
    expect(sends).toEqual([1, 1, 1]);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290); // 100 + 200 ms pauses
    expect(log.stats.leadershipRetries).toBe(2);
    expect(log.failing).toBe(false);

    // Leadership that does not come back: given up after a few attempts, well within the timeout.
    script.push(leadership(), leadership(), leadership(), leadership());
    const stuck = makeEvent();
    expect(await log.append([stuck])).toEqual([{ ok: false, reason: 'unavailable' }]);
    expect(dedupe.claims.has(stuck.dedupeKey)).toBe(true); // kept: a retry reuses the id (never a second one)

    // Anything else (here: a connection refused) fails at once.
    await new Promise((r) => setTimeout(r, 1100)); // past the fail-fast window
    sends.length = 0;
    script.push(new NetworkError('Connection to 127.0.0.1:1 failed.', { cause: new Error('connect ECONNREFUSED') }));
    const t1 = performance.now();
    expect(await log.append([makeEvent()])).toEqual([{ ok: false, reason: 'unavailable' }]);
    expect(performance.now() - t1).toBeLessThan(100);
    expect(sends).toEqual([1]);
    await log.close();
  });

  it('readiness of an idle log: failing until the broker answers its probe, with no append needed', async () => {
    let brokerUp = false;
    const producer = {
      send: async (): Promise<RecordMetadata[]> => {
        if (!brokerUp) throw new NetworkError('Connection to 127.0.0.1:1 failed.', { cause: new Error('connect ECONNREFUSED') });
        return [];
      },
      disconnect: async () => {},
    } as unknown as Producer;
    let probes = 0;
    const options = {
      brokers: [],
      topic: 'scripted',
      clientId: 'kel-test',
      ids: new MemoryIds(),
      dedupe: new MemoryDedupe(),
      dedupeWindowMs: 600_000,
      lingerMs: 0,
      batchEvents: 500,
      maxInFlightEvents: 1000,
      sendTimeoutMs: 5000,
      logger: captureLogger(),
    };
    const probe = async () => {
      probes++;
      if (!brokerUp) throw new Error('metadata: connect ECONNREFUSED');
    };
    const log = new KafkaEventLog(producer, await KeyPartitioner.open('scripted', 4), { ...options, probe });
    const blind = new KafkaEventLog(producer, await KeyPartitioner.open('scripted', 4), options);
    expect(await log.failingNow()).toBe(false);
    expect(probes).toBe(0); // not failing: the broker is not asked
    expect(await log.append([makeEvent()])).toEqual([{ ok: false, reason: 'unavailable' }]);
    expect(await blind.append([makeEvent()])).toEqual([{ ok: false, reason: 'unavailable' }]);
    expect(await log.failingNow()).toBe(true);
    expect(probes).toBe(1);
    brokerUp = true;
    expect(log.failing).toBe(true); // nothing was sent since
    expect(await log.failingNow()).toBe(false);
    expect(log.failing).toBe(false);
    // Without a probe, only a send can tell.
    expect(await blind.failingNow()).toBe(true);
    expect((await log.append([makeEvent()]))[0]?.ok).toBe(true);
    await log.close();
    await blind.close();
  });

  it('close() flushes what is queued, waits for it, then refuses appends', async () => {
    const { log, topic, metrics } = await setup({ lingerMs: 60_000, batchEvents: 10_000 });
    const events = Array.from({ length: 25 }, () => makeEvent());
    const pending = log.append(events);
    await new Promise((r) => setTimeout(r, 20));
    expect(log.stats.queued).toBe(25); // lingering
    const t0 = performance.now();
    await log.close();
    expect(performance.now() - t0).toBeLessThan(3000);
    const outcomes = await pending;
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(metrics.batches).toEqual([25]);
    expect(await log.append([makeEvent()])).toEqual([{ ok: false, reason: 'unavailable' }]);
    await log.close(); // idempotent
    const onTopic = firstCopies(await readTopic(kafka, admin, topic));
    expect(onTopic.map((m) => m.id).sort()).toEqual(outcomes.map(okId).sort());
  });

  // Last: broker faults, on a private broker.
  it('broker hung or down: unavailable within the timeout, nothing acked that is not on the topic, claims kept for the retry, recovers', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kel-kafka-'));
    const port = await freePort();
    let controllerPort = await freePort();
    while (controllerPort === port) controllerPort = await freePort();
    const env = {
      ...process.env,
      SERVICES_DIR: dir,
      SERVICES_ENV_FILE: path.join(dir, 'services.env'),
      SERVICES_KAFKA_PORT: String(port),
      SERVICES_KAFKA_CONTROLLER_PORT: String(controllerPort),
      SERVICES_STOP_TIMEOUT: '10',
    };
    const script = (name: 'up' | 'down') => run('bash', [path.join(ROOT, 'scripts/services', `${name}.sh`), 'kafka'], { env, timeout: 120_000 });
    const pid = (): number => Number(readFileSync(path.join(dir, 'kafka.pid'), 'utf8').trim());
    let paused = false;
    let privateAdmin: Admin | undefined;
    try {
      await script('up');
      const privateBrokers = [`127.0.0.1:${port}`];
      const privateKafka = kafkajs(privateBrokers);
      privateAdmin = privateKafka.admin();
      await privateAdmin.connect();
      const topic = uniqueName('kel-fault');
      await createTopic(privateBrokers, topic);

      const sendTimeoutMs = 2000;
      const { log, dedupe, logger } = await setup({ brokers: privateBrokers, sendTimeoutMs, maxInFlightEvents: 40, failFastMs: 1000 }, topic);
      const acked = new Map<bigint, EventRecord>();
      const record = (events: EventRecord[], outcomes: AppendOutcome[]): void =>
        outcomes.forEach((o, i) => {
          if (o.ok) acked.set(o.id, events[i] as EventRecord);
        });
      const append = async (events: EventRecord[]): Promise<AppendOutcome[]> => {
        const outcomes = await log.append(events);
        record(events, outcomes);
        return outcomes;
      };
      const unavailable = (n: number) => Array.from({ length: n }, () => ({ ok: false, reason: 'unavailable' }));

      const warm = Array.from({ length: 10 }, () => makeEvent());
      expect((await append(warm)).every((o) => o.ok)).toBe(true);

      // 1. Hung broker (SIGSTOP): sends hang, events pile up to maxInFlightEvents, then -5 at once.
      process.kill(pid(), 'SIGSTOP');
      paused = true;
      const hungEvents = Array.from({ length: 4 }, () => Array.from({ length: 10 }, () => makeEvent()));
      const t0 = performance.now();
      const hung = hungEvents.map((events) => append(events));
      await new Promise((r) => setTimeout(r, 50));
      expect(log.stats.inFlight).toBe(40);
      const t1 = performance.now();
      expect(await append([makeEvent()])).toEqual(unavailable(1));
      expect(performance.now() - t1).toBeLessThan(100);
      const hungOutcomes = (await Promise.all(hung)).flat();
      const hungMs = performance.now() - t0;
      expect(hungOutcomes).toEqual(unavailable(40));
      expect(hungMs).toBeGreaterThan(sendTimeoutMs - 100);
      expect(hungMs).toBeLessThan(sendTimeoutMs + 1000);
      // Claims are kept: the broker may still write them, and a retry must get the same id.
      for (const e of hungEvents.flat()) {
        expect(dedupe.claims.has(e.dedupeKey)).toBe(true);
        expect(dedupe.released).not.toContain(e.dedupeKey);
      }
      // Known failing: -5 at once, not after another timeout.
      const t2 = performance.now();
      expect(await append([makeEvent()])).toEqual(unavailable(1));
      expect(performance.now() - t2).toBeLessThan(50);
      process.kill(pid(), 'SIGCONT');
      paused = false;
      await waitFor('the condition', async () => (await append([makeEvent()]))[0]?.ok === true, 20_000, 200);

      // 2. Broker stopped (down.sh): -5 well within the timeout, claims kept.
      await script('down');
      const downEvents = [makeEvent(), makeEvent()];
      const t3 = performance.now();
      expect(await append(downEvents)).toEqual(unavailable(2));
      expect(performance.now() - t3).toBeLessThan(sendTimeoutMs);
      for (const e of downEvents) expect(dedupe.claims.has(e.dedupeKey)).toBe(true);
      const t4 = performance.now();
      expect(await append([makeEvent()])).toEqual(unavailable(1));
      expect(performance.now() - t4).toBeLessThan(50);
      expect(log.failing).toBe(true);
      expect(logger.lines.some((l) => l.level === 'warn' && l.m.includes('kafka sends fail'))).toBe(true);

      // 3. Broker back: the same process and log accept again, and a retry of the failed events is stored.
      await script('up');
      await waitFor('the condition', async () => (await append([makeEvent()]))[0]?.ok === true, 30_000, 200);
      // The retry reuses the ids claimed by the failed attempt and publishes them: one id per event.
      const retried = await append(downEvents);
      expect(retried.every((o) => o.ok && o.duplicate)).toBe(true);
      expect(log.failing).toBe(false);

      // Everything acknowledged is on the topic, under its id and key.
      await privateAdmin.disconnect();
      privateAdmin = privateKafka.admin();
      await privateAdmin.connect();
      const onTopic = await readTopic(privateKafka, privateAdmin, topic);
      const byId = new Map(onTopic.map((m) => [m.id, m]));
      for (const [id, event] of acked) {
        expect(byId.get(id)?.key, `acked id ${id} on the topic`).toBe(messageKey(event));
        expect(byId.get(id)?.event).toEqual(event);
      }
      expect(acked.size).toBeGreaterThanOrEqual(14);
      await log.close();
    } finally {
      if (paused) process.kill(pid(), 'SIGCONT');
      await privateAdmin?.disconnect().catch(() => {});
      await script('down').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});


describe('KeyPartitioner', () => {
  it('maps every key as the kafkajs default partitioner does, remembered or not, and anew when partitions grow', async () => {
    const { Partitioners } = await import('kafkajs');
    const reference = (key: string, n: number): number =>
      Partitioners.DefaultPartitioner()({
        topic: 't',
        partitionMetadata: Array.from({ length: n }, (_, partitionId) => ({ partitionErrorCode: 0, partitionId, leader: 0, replicas: [0], isr: [0] })),
        message: { key, value: null },
      });
    const keys = Array.from({ length: 500 }, (_, i) => `acme|AB${i}CD`);
    const partitioner = await KeyPartitioner.open('t', 4);
    const first = keys.map((k) => partitioner.partition(k));
    expect(first).toEqual(keys.map((k) => reference(k, 4)));
    expect(new Set(first).size).toBe(4);
    // Asked again (now from memory): the same answers.
    expect(keys.map((k) => partitioner.partition(k))).toEqual(first);
    partitioner.count = 16;
    const grown = keys.map((k) => partitioner.partition(k));
    expect(grown).toEqual(keys.map((k) => reference(k, 16)));
    expect(grown).not.toEqual(first);
  });
});
