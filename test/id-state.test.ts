/**
 * The event-id state of the distributed mode on the real Redis (and, for the highest stored id,
 * the real Kafka and ClickHouse): ids are issued under an epoch that every append checks, so a
 * Redis that lost its data is noticed at the next append, nothing is issued until one gateway
 * restored the counter above every stored id, and the others adopt the restored state. The
 * end-to-end version (FLUSHALL in the middle of ingest) is test/faults/id-recovery.test.ts.
 */
import { Redis } from 'ioredis';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClickHouseClient, migrate, partitionMonth, quoteIdentifier, toRow } from '../shared/backends/clickhouse/index.js';
import { ClickHouseEventWriter } from '../shared/backends/clickhouse/writer.js';
import { highestStoredId } from '../shared/backends/distributed-ids.js';
import { IdEpochChangedError, IdStateLostError } from '../shared/backends/id-state.js';
import { highestIdInTopic, messageId } from '../shared/backends/kafka/highest-id.js';
import { IdRecovery, type IdRecoveryOptions } from '../shared/backends/redis/id-recovery.js';
import { openRedisStores, type RedisStores } from '../shared/backends/redis/index.js';
import { encodeEvent, messageKey } from '../shared/events/wire.js';
import { makeEvent } from './helpers/worker-fixture.js';
import { services, uniqueName } from './helpers/services.js';

const W = 600_000;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let admin: Redis;
const opened: RedisStores[] = [];
const prefixes: string[] = [];

beforeAll(async () => {
  admin = new Redis(services().redisUrl, { maxRetriesPerRequest: 1 });
});
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});
afterAll(async () => {
  for (const prefix of prefixes) {
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
  }
  await admin.quit();
});

function freshPrefix(): string {
  const prefix = `${uniqueName('idstate')}:`;
  prefixes.push(prefix);
  return prefix;
}

/** Deletes every key of the prefix: what FLUSHALL does to one deployment. */
async function flush(prefix: string): Promise<void> {
  const keys = await admin.keys(`${prefix}*`);
  if (keys.length > 0) await admin.del(...keys);
}

async function open(prefix: string, idBlockSize = 100): Promise<RedisStores> {
  const s = await openRedisStores({ url: services().redisUrl, keyPrefix: prefix, logger: quiet, idBlockSize });
  opened.push(s);
  return s;
}

/** A gateway's view: its stores and its recovery, counting what it reports. */
async function gateway(
  prefix: string,
  highestStoredId: () => Promise<bigint>,
  extra: Partial<IdRecoveryOptions> = {},
  counts = { lost: 0, restored: [] as bigint[] },
) {
  const stores = await open(prefix);
  const recovery = new IdRecovery({
    ids: stores.ids,
    highestStoredId,
    idFloor: 0n,
    margin: 1000n,
    settleMs: 100,
    pollMs: 20,
    logger: quiet,
    metrics: { lost: () => counts.lost++, restored: (floor) => counts.restored.push(floor), recovering: () => {} },
    ...extra,
  });
  return { stores, recovery, counts };
}

/** allocate + claim, as the event log does: the claim checks the ids' epoch. */
async function append(s: RedisStores, keys: string[]): Promise<bigint[]> {
  const ids = await s.ids.allocate(keys.length);
  const earlier = await s.dedupe.claim(
    keys.map((key, i) => ({ key, id: ids[i]! })),
    W,
    s.ids.epochOf(ids),
  );
  return ids.map((id, i) => earlier[i] ?? id);
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('event-id state (Redis)', () => {
  it('issues nothing before the state is established, then starts above the highest stored id + margin', async () => {
    const prefix = freshPrefix();
    const g = await gateway(prefix, async () => 41n);
    await expect(g.stores.ids.allocate(1)).rejects.toBeInstanceOf(IdStateLostError);
    await g.recovery.start();
    expect(await append(g.stores, ['k1'])).toEqual([1042n]);
    expect(g.counts.restored).toEqual([1041n]);
    expect(await admin.get(`${prefix}event:id-seq`)).toBe('1141'); // one block of 100 taken
    expect(await admin.get(`${prefix}event:id-recovery`)).toBeNull(); // the lock is released
  });

  it('after a flush every append notices, nothing is claimed or issued, one gateway restores and the other adopts', async () => {
    const prefix = freshPrefix();
    // Stand-in for Kafka and ClickHouse: the highest id the gateways published.
    let stored = 0n;
    const publish = (ids: bigint[]) => {
      for (const id of ids) if (id > stored) stored = id;
      return ids;
    };
    const restores: bigint[] = [];
    const a = await gateway(prefix, async () => stored, {}, { lost: 0, restored: restores });
    const b = await gateway(prefix, async () => stored, {}, { lost: 0, restored: restores });
    await Promise.all([a.recovery.start(), b.recovery.start()]);
    expect(restores).toEqual([1000n]);
    const before = [...publish(await append(a.stores, ['a1', 'a2'])), ...publish(await append(b.stores, ['b1']))];
    expect(new Set(before).size).toBe(3);

    // Both hold local blocks; a took ids it has not claimed yet when Redis loses everything.
    const inHand = await a.stores.ids.allocate(3);
    await flush(prefix);
    await expect(a.stores.dedupe.claim(inHand.map((id, i) => ({ key: `x${i}`, id })), W, a.stores.ids.epochOf(inHand))).rejects.toBeInstanceOf(IdStateLostError);
    expect(await admin.exists(`${prefix}dedupe:x0`)).toBe(0);
    await expect(append(b.stores, ['b2'])).rejects.toBeInstanceOf(IdStateLostError);
    // Until the state is back, -5 at once, without a round trip.
    await expect(a.stores.ids.allocate(1)).rejects.toBeInstanceOf(IdStateLostError);
    expect(a.recovery.recovering && b.recovery.recovering).toBe(true);

    await until('both recovered', () => !a.recovery.recovering && !b.recovery.recovering);
    expect([a.counts.lost, b.counts.lost]).toEqual([1, 1]);
    // The first start, and exactly one restore after the flush, above every published id.
    expect(restores).toEqual([1000n, stored + 1000n]);

    const after = [...(await append(a.stores, ['a3', 'a4'])), ...(await append(b.stores, ['b3']))];
    for (const id of after) expect(id > stored + 1000n).toBe(true);
    for (const id of inHand) expect(after).not.toContain(id);
    expect(new Set([...before, ...after]).size).toBe(6);
  });

  it('a gateway whose block predates a restore done elsewhere drops it at its next append', async () => {
    const prefix = freshPrefix();
    const a = await gateway(prefix, async () => 0n);
    const b = await gateway(prefix, async () => 500n, { margin: 10_000n });
    await a.recovery.start();
    await b.recovery.start();
    expect(await append(a.stores, ['a1'])).toEqual([1001n]);
    const held = await a.stores.ids.allocate(2); // from a's block, 1002-1100
    expect(held).toEqual([1002n, 1003n]);

    // Redis loses its data and b restores before a appends again (b never had a block).
    await flush(prefix);
    expect(await b.recovery.ready()).toBe(false); // an idle gateway notices at its readiness check
    await until('b restored', () => !b.recovery.recovering);
    expect(b.counts.restored).toEqual([10_500n]);
    expect(a.counts.lost).toBe(0);

    // a still issues from its old block locally, but the claim refuses that epoch; a adopts the new one.
    await expect(a.stores.dedupe.claim([{ key: 'late', id: held[0]! }], W, a.stores.ids.epochOf(held))).rejects.toBeInstanceOf(IdEpochChangedError);
    expect(await admin.exists(`${prefix}dedupe:late`)).toBe(0);
    expect(await append(a.stores, ['a2'])).toEqual([10_501n]);
    expect(a.counts.lost).toBe(0);
  });

  it('a raised floor changes the epoch: other gateways leave their blocks and continue above it', async () => {
    const prefix = freshPrefix();
    const a = await gateway(prefix, async () => 0n, { margin: 0n });
    const b = await gateway(prefix, async () => 0n, { margin: 0n });
    await a.recovery.start();
    await b.recovery.start();
    expect(await append(b.stores, ['b1'])).toEqual([1n]); // b holds 1-100
    expect(await a.stores.ids.raiseFloor(5_000_000_000n)).toBe(true);
    expect(await a.stores.ids.raiseFloor(4_000_000_000n)).toBe(false);
    const ids = await b.stores.ids.allocate(1);
    expect(ids).toEqual([2n]); // still the old block, locally...
    await expect(b.stores.dedupe.claim([{ key: 'b2', id: 2n }], W, b.stores.ids.epochOf(ids))).rejects.toBeInstanceOf(IdEpochChangedError);
    // ...refused at the claim; the retry is above the floor.
    expect(await append(b.stores, ['b2'])).toEqual([5_000_000_001n]);
    expect(await append(a.stores, ['a1'])).toEqual([5_000_000_101n]);
  });

  it('a lock left by a gateway that died delays the restore by at most its TTL', async () => {
    const prefix = freshPrefix();
    const g = await gateway(prefix, async () => 7n, { margin: 3n, lockTtlMs: 2_000 });
    await admin.set(`${prefix}event:id-recovery`, 'dead-gateway', 'PX', 400);
    const started = Date.now();
    await g.recovery.start();
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(g.counts.restored).toEqual([10n]);
    expect(await append(g.stores, ['k'])).toEqual([11n]);
  });
});

describe('the highest stored id (Kafka and ClickHouse)', () => {
  const s = services();
  const kafka = new Kafka({ clientId: uniqueName('idscan'), brokers: s.kafkaBrokers, logLevel: logLevel.NOTHING });
  const ch = createClickHouseClient({ url: s.clickhouseUrl, database: 'default', username: 'default', password: '' });
  const topic = uniqueName('idscan');
  const group = uniqueName('idscan_worker');
  const database = uniqueName('idscan');
  afterAll(async () => {
    const a = kafka.admin();
    await a.connect();
    await a.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await a.deleteGroups([group]).catch(() => undefined);
    await a.disconnect();
    await ch.command({ query: `DROP DATABASE IF EXISTS ${quoteIdentifier(database)}` });
    await ch.close();
  });

  it('reads every id of the unconsumed log (ids are not ordered in a partition), and ClickHouse for the rest', async () => {
    expect(messageId(encodeEvent(2n ** 62n + 5n, makeEvent()))).toBe(2n ** 62n + 5n);
    expect(messageId(Buffer.from('{"id":"77","v":1}'))).toBe(77n);
    expect(messageId(Buffer.from('garbage'))).toBeNull();
    expect(messageId(null)).toBeNull();

    const a = kafka.admin();
    await a.connect();
    await a.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true });
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    const send = (ids: bigint[]) =>
      producer.send({
        topic,
        acks: -1,
        messages: ids.map((id) => {
          const event = makeEvent({ dominio: `D${id % 7n}` });
          return { key: messageKey(event), value: encodeEvent(id, event) };
        }),
      });
    // Two gateways' blocks interleaved: the highest id is not the last message of its partition.
    await send([5000n, 101n, 102n, 5001n, 103n, 104n, 105n]);
    await producer.send({ topic, messages: [{ key: 'x|y', value: Buffer.from('poison') }] });
    const logged: string[] = [];
    const sources = { kafka, topic, groupId: group, clientId: 'idscan', database, logger: { info: (_o: object, m: string) => void logged.push(m) } };

    expect(await highestIdInTopic(kafka, { topic, fromGroup: null, groupPrefix: 'idscan' })).toEqual({ highest: 5001n, messages: 8 });
    expect(await highestIdInTopic(kafka, { topic: uniqueName('missing'), fromGroup: null, groupPrefix: 'idscan' })).toEqual({ highest: 0n, messages: 0 });

    // The worker stored everything up to here in ClickHouse and committed; then more arrives.
    await migrate(ch, database);
    const rows = [5000n, 101n, 102n, 5001n, 103n, 104n, 105n].map((id) => {
      const e = makeEvent();
      return { row: toRow(id, e, Date.now()), partition: partitionMonth(e.eventTime.epochMs) };
    });
    await new ClickHouseEventWriter(ch, database).insert(rows);
    const ends = await a.fetchTopicOffsets(topic);
    await a.setOffsets({ groupId: group, topic, partitions: ends.map((p) => ({ partition: p.partition, offset: p.high })) });
    await send([106n, 107n]);
    expect(await highestIdInTopic(kafka, { topic, fromGroup: group, groupPrefix: 'idscan' })).toEqual({ highest: 107n, messages: 2 });
    expect(await highestStoredId({ ...sources, clickhouse: ch })).toBe(5001n);
    expect(logged.at(-1)).toBe('highest stored event id: 5001');

    // Without ClickHouse the whole retained log is read.
    await send([6000n]);
    expect(await highestStoredId({ ...sources, clickhouse: null })).toBe(6000n);
    // No events table yet (the worker never ran): not trusted, the whole log is read.
    expect(await highestStoredId({ ...sources, clickhouse: ch, database: uniqueName('none') })).toBe(6000n);
    // Temporary groups are gone.
    const groups = (await a.listGroups()).groups.map((g) => g.groupId);
    expect(groups.filter((g) => g.startsWith('idscan-id-scan-'))).toEqual([]);
    await producer.disconnect();
    await a.disconnect();
  }, 120_000);
});
