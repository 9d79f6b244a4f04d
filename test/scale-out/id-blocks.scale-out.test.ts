/**
 * Event ids of the scale-out mode on the real Kafka: blocks named by offsets of the single-partition
 * id-blocks topic (shared/backends/ids/allocator.ts). Many allocators at once, refills ahead of need, a
 * floor raised by one gateway and adopted by the others, a block size that conflicts, and the topic
 * deleted and created again. No Redis: ids do not depend on it. The end-to-end versions (Redis
 * flushed or killed mid-ingest, Kafka restarted) are in test/faults/id-blocks.faults.test.ts.
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { IdBlocksConflictError, IdBlocksUnavailableError } from '../../shared/backends/scale-out-types.js';
import { KafkaIdAllocator } from '../../shared/backends/ids/allocator.js';
import { IdBlocksTopic, type TopicPosition } from '../../shared/backends/ids/blocks-topic.js';
import { services, uniqueName } from '../helpers/services.js';
import { sleep, waitFor } from '../helpers/wait.js';

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const s = services();
const opened: { ids: KafkaIdAllocator; blocks: IdBlocksTopic }[] = [];
const topics: string[] = [];

afterAll(async () => {
  for (const o of opened) {
    o.ids.close();
    await o.blocks.close();
  }
  const kafka = new Kafka({ brokers: s.kafkaBrokers, clientId: 'id-blocks-cleanup', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics }).catch(() => undefined);
  await admin.disconnect();
});

function freshTopic(): string {
  const topic = uniqueName('idblocks');
  topics.push(topic);
  return topic;
}

interface Opened {
  ids: KafkaIdAllocator;
  blocks: IdBlocksTopic;
  verified: TopicPosition[];
}

/** One gateway's allocator; `verify` stands in for the stored-id check of scale-out/index.ts. */
async function allocator(
  topic: string,
  options: { floor?: bigint; blockSize?: number; verify?: (p: TopicPosition, floor: bigint, b: number) => Promise<bigint> } = {},
): Promise<Opened> {
  const blocks = await IdBlocksTopic.open({ brokers: s.kafkaBrokers, topic, clientId: uniqueName('ids'), timeoutMs: 5000, logger: quiet });
  const verified: TopicPosition[] = [];
  const ids = new KafkaIdAllocator({
    blocks,
    floor: options.floor ?? 0n,
    blockSize: options.blockSize ?? 100,
    verify: async (position, floor, b) => {
      verified.push(position);
      return options.verify ? options.verify(position, floor, b) : floor;
    },
    logger: quiet,
  });
  opened.push({ ids, blocks });
  await ids.start();
  return { ids, blocks, verified };
}

const increasing = (ids: readonly bigint[]) => ids.every((id, i) => i === 0 || id > ids[i - 1]!);

describe('event ids from Kafka id blocks', () => {
  it('many allocators on one topic: ids unique, increasing per allocator, each block floor + offset·B + 1..', async () => {
    const topic = freshTopic();
    const gateways = await Promise.all(Array.from({ length: 6 }, () => allocator(topic, { blockSize: 50 })));
    const perAllocator = await Promise.all(
      gateways.map(async (g) => {
        const calls = Array.from({ length: 120 }, (_, i) => g.ids.allocate((i % 4) + 1));
        return (await Promise.all(calls)).flat();
      }),
    );
    const all = perAllocator.flat();
    expect(all.length).toBe(6 * 30 * (1 + 2 + 3 + 4));
    expect(new Set(all).size).toBe(all.length);
    for (const ids of perAllocator) expect(increasing(ids)).toBe(true);
    // Every id lies in the block of an offset the topic holds, and no block is shared.
    const blockOf = (id: bigint) => (id - 1n) / 50n;
    const owners = new Map<bigint, number>();
    perAllocator.forEach((ids, g) => {
      for (const id of ids) {
        const prev = owners.get(blockOf(id));
        expect(prev === undefined || prev === g, `block ${blockOf(id)} used by allocators ${prev} and ${g}`).toBe(true);
        owners.set(blockOf(id), g);
      }
    });
    const { end } = await gateways[0]!.blocks.position();
    for (const block of owners.keys()) expect(block < end).toBe(true);
    // The records say which floor and block size they were taken under.
    const records = await gateways[0]!.blocks.read(0n, end);
    expect(records.length).toBe(Number(end));
    for (const r of records) expect({ floor: r.floor, blockSize: r.blockSize }).toEqual({ floor: 0n, blockSize: 50 });
  });

  it('refills ahead: the next block is taken once half of the current one is used', async () => {
    const topic = freshTopic();
    const g = await allocator(topic, { blockSize: 100, floor: 2n ** 62n });
    await waitFor('first block', () => g.ids.blocksTaken === 1);
    expect(await g.ids.allocate(40)).toEqual(Array.from({ length: 40 }, (_, i) => 2n ** 62n + BigInt(i) + 1n));
    await sleep(200);
    expect(g.ids.blocksTaken).toBe(1); // more than half left
    await g.ids.allocate(20);
    await waitFor('second block taken in the background', () => g.ids.blocksTaken === 2);
    // Served from the blocks in hand, without waiting: the second block (offset 1) follows the first.
    const ids = await g.ids.allocate(100);
    expect(ids[0]).toBe(2n ** 62n + 61n);
    expect(ids.at(-1)).toBe(2n ** 62n + 160n);
    await expect(g.ids.allocate(-1)).rejects.toBeInstanceOf(RangeError);
    await expect(g.ids.allocate(1.5)).rejects.toBeInstanceOf(RangeError);
    expect(await g.ids.allocate(0)).toEqual([]);
  });

  it('a floor raised on one gateway is adopted by the others at their next block; a lower one changes nothing', async () => {
    const topic = freshTopic();
    const a = await allocator(topic, { blockSize: 10 });
    const before = await a.ids.allocate(25);
    const high = await allocator(topic, { blockSize: 10, floor: 5_000_000_000n });
    const fromHigh = await high.ids.allocate(3);
    for (const id of fromHigh) expect(id > 5_000_000_000n).toBe(true);
    // a still serves what it holds, then its next block is read against high's record: raised.
    const after = await a.ids.allocate(30);
    expect(a.ids.currentFloor).toBe(5_000_000_000n);
    expect(after.at(-1)! > 5_000_000_000n).toBe(true);
    // A gateway started with a lower floor (or none) continues above the raised one.
    const low = await allocator(topic, { blockSize: 10, floor: 0n });
    expect(low.ids.currentFloor).toBe(5_000_000_000n);
    const fromLow = await low.ids.allocate(5);
    const all = [...before, ...fromHigh, ...after, ...fromLow, ...(await high.ids.allocate(12))];
    expect(new Set(all).size).toBe(all.length);
    expect(increasing([...before, ...after])).toBe(true);
  });

  it('a gateway with another block size issues nothing: its ids would overlap', async () => {
    const topic = freshTopic();
    const a = await allocator(topic, { blockSize: 10 });
    expect(await a.ids.allocate(1)).toEqual([1n]);
    await expect(allocator(topic, { blockSize: 20 })).rejects.toBeInstanceOf(IdBlocksConflictError);
  });

  it('the topic deleted and created again: noticed before its block is used, no id issued twice', { timeout: 90_000 }, async () => {
    const topic = freshTopic();
    const issued: bigint[] = [];
    // The stored-id check: the highest id issued so far + a margin covering blocks others hold.
    const verify = async (position: TopicPosition, floor: bigint, b: number) => {
      const highest = issued.reduce((m, id) => (id > m ? id : m), 0n);
      const needed = highest + 1000n - position.end * BigInt(b);
      return highest > 0n && needed > floor ? needed : floor;
    };
    const g = await allocator(topic, { blockSize: 10, verify });
    for (let i = 0; i < 5; i++) issued.push(...(await g.ids.allocate(10)));
    expect(issued.at(-1)).toBe(50n);

    const kafka = new Kafka({ brokers: s.kafkaBrokers, clientId: 'id-blocks-recreate', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [topic] });
    // Gone, then created anew by another gateway starting meanwhile (offsets restart at 0).
    let other: Opened | null = null;
    for (let i = 0; other === null; i++) {
      other = await allocator(topic, { blockSize: 10, verify }).catch(async (err: unknown) => {
        if (i > 100) throw err;
        await sleep(200);
        return null;
      });
    }
    await admin.disconnect();
    expect(other.verified).toHaveLength(1);
    issued.push(...(await other.ids.allocate(5)));

    // g's blocks in hand were used up; its next block comes from the new topic: noticed, not used.
    // (A Kafka error first is fine: the producer may meet the topic while it is recreated.)
    let refusal: unknown = null;
    for (let i = 0; i < 100 && !(refusal instanceof IdBlocksUnavailableError); i++) {
      try {
        issued.push(...(await g.ids.allocate(10)));
      } catch (err) {
        refusal = err;
        await sleep(50);
      }
    }
    expect(refusal).toBeInstanceOf(IdBlocksUnavailableError);
    await waitFor('g checked the new topic', () => g.ids.ready);
    expect(g.verified).toHaveLength(2);
    issued.push(...(await g.ids.allocate(10)), ...(await other.ids.allocate(10)));
    expect(new Set(issued).size).toBe(issued.length);
  });
});
