/**
 * KafkaIdAllocator (shared/backends/ids/allocator.ts) over an in-memory block log: the rules that
 * keep ids unique, without a broker. test/scale-out/id-blocks.scale-out.test.ts runs the same allocator on
 * the real Kafka topic.
 */
import { describe, expect, it } from 'vitest';
import { KafkaIdAllocator, type BlockLog } from '../../../../../shared/backends/ids/allocator.js';
import type { BlockRecord, TopicPosition } from '../../../../../shared/backends/ids/blocks-topic.js';
import { IdBlocksConflictError, IdBlocksUnavailableError } from '../../../../../shared/backends/scale-out-types.js';
import { floorAbove } from '../../../../../shared/backends/ids/floor.js';

/** The id-blocks topic as Kafka keeps it: records at increasing offsets, a topic id, recreation. */
class MemoryBlockLog implements BlockLog {
  readonly topic = 'ids';
  private records: { floor: bigint; blockSize: number }[] = [];
  private id = 1;
  /** Resolves appends only when released (to hold one allocator's refill while another runs). */
  hold: Promise<void> | null = null;

  async append(floor: bigint, blockSize: number): Promise<bigint> {
    if (this.hold !== null) await this.hold;
    this.records.push({ floor, blockSize });
    return BigInt(this.records.length - 1);
  }
  ensure(): Promise<boolean> {
    return Promise.resolve(false);
  }
  position(): Promise<TopicPosition> {
    return Promise.resolve({ topicId: this.topicIdNow(), end: BigInt(this.records.length), start: 0n });
  }
  topicId(): Promise<string> {
    return Promise.resolve(this.topicIdNow());
  }
  read(from: bigint, to: bigint): Promise<BlockRecord[]> {
    const out: BlockRecord[] = [];
    for (let o = from; o < to && o < BigInt(this.records.length); o++) out.push({ offset: o, ...this.records[Number(o)]! });
    return Promise.resolve(out);
  }
  /** Deleted and created again: offsets restart at 0 under a new topic id. */
  recreate(): void {
    this.records = [];
    this.id++;
  }
  private topicIdNow(): string {
    return `topic-${this.id}`;
  }
}

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Every id any allocator has answered: what "stored" means here. */
class Issued {
  readonly all: bigint[] = [];
  highest(): bigint {
    return this.all.reduce((a, b) => (b > a ? b : a), 0n);
  }
  add(ids: bigint[]): bigint[] {
    this.all.push(...ids);
    return ids;
  }
  expectUnique(): void {
    expect(new Set(this.all.map(String)).size).toBe(this.all.length);
  }
}

function allocator(log: MemoryBlockLog, issued: Issued, floor: bigint, blockSize: number, verifyCalls: { n: number } = { n: 0 }): KafkaIdAllocator {
  return new KafkaIdAllocator({
    blocks: log,
    floor,
    blockSize,
    // The real check (ids/floor.ts) against the ids answered so far, with a margin of one block.
    verify: (position, f, b) => {
      verifyCalls.n++;
      return Promise.resolve(floorAbove(issued.highest(), BigInt(b), position.end, b, f));
    },
    logger: quiet,
  });
}

const allocate = async (a: KafkaIdAllocator, issued: Issued, count: number): Promise<bigint[]> => issued.add(await a.allocate(count));

describe('KafkaIdAllocator on an in-memory block log', () => {
  it('names blocks by offsets: floor + offset·B + 1 … floor + (offset+1)·B', async () => {
    const log = new MemoryBlockLog();
    const issued = new Issued();
    const a = allocator(log, issued, 1_000n, 10);
    await a.start();
    expect(await allocate(a, issued, 3)).toEqual([1_001n, 1_002n, 1_003n]);
    a.close();
  });

  it('gives several gateways on one topic disjoint ids, each increasing in call order', async () => {
    const log = new MemoryBlockLog();
    const issued = new Issued();
    const gateways = [allocator(log, issued, 0n, 7), allocator(log, issued, 0n, 7), allocator(log, issued, 0n, 7)];
    for (const g of gateways) await g.start();
    const perGateway = await Promise.all(
      gateways.map(async (g) => {
        const mine: bigint[] = [];
        // Calls of all sizes, many at once, so refills and queued calls interleave across gateways.
        const calls = await Promise.all(Array.from({ length: 40 }, (_, i) => allocate(g, issued, (i % 5) + 1)));
        for (const ids of calls) mine.push(...ids);
        return mine;
      }),
    );
    issued.expectUnique();
    for (const mine of perGateway) expect(mine).toEqual([...mine].sort((x, y) => (x < y ? -1 : 1)));
    for (const g of gateways) g.close();
  });

  it("adopts a higher floor another gateway's records carry, dropping the blocks taken under the old one", async () => {
    const log = new MemoryBlockLog();
    const issued = new Issued();
    const low = allocator(log, issued, 0n, 10);
    await low.start();
    await allocate(low, issued, 3);
    const high = allocator(log, issued, 1_000_000n, 10);
    await high.start();
    await allocate(high, issued, 10);
    // `low` still holds a block under floor 0; past it, its next block reads `high`'s record.
    await allocate(low, issued, 20);
    expect(low.currentFloor).toBe(1_000_000n);
    const lowAfter = await allocate(low, issued, 5);
    expect(lowAfter.every((id) => id > 1_000_000n)).toBe(true);
    issued.expectUnique();
    low.close();
    high.close();
  });

  it('a gateway started with a lower floor than the topic adopts the topic\'s at start', async () => {
    const log = new MemoryBlockLog();
    const issued = new Issued();
    const first = allocator(log, issued, 500n, 10);
    await first.start();
    await allocate(first, issued, 1);
    // The topic is marked as checked: verify keeps whatever floor the allocator brings to it.
    const later = new KafkaIdAllocator({ blocks: log, floor: 0n, blockSize: 10, verify: (_p, f) => Promise.resolve(f), logger: quiet });
    await later.start();
    expect(later.currentFloor).toBe(500n);
    first.close();
    later.close();
  });

  it('refuses to start beside records of another block size (their ids would overlap)', async () => {
    const log = new MemoryBlockLog();
    const issued = new Issued();
    const a = allocator(log, issued, 0n, 10);
    await a.start();
    await allocate(a, issued, 1);
    const b = allocator(log, issued, 0n, 20);
    await expect(b.start()).rejects.toBeInstanceOf(IdBlocksConflictError);
    a.close();
  });

  it('stops for good when a record of another block size appears later, and says why', async () => {
    const log = new MemoryBlockLog();
    const issued = new Issued();
    const a = allocator(log, issued, 0n, 10);
    await a.start();
    await allocate(a, issued, 6); // the next block is already in hand (taken at half)
    await log.append(0n, 20); // a misconfigured gateway's record
    await expect(a.allocate(30)).rejects.toBeInstanceOf(IdBlocksConflictError);
    await expect(a.allocate(1)).rejects.toThrow(/blocks of 20 ids, this gateway uses 10/);
    expect(a.ready).toBe(false);
    a.close();
  });

  it('notices a topic deleted and created again, answers unavailable while checking it, then continues above every id issued', async () => {
    const log = new MemoryBlockLog();
    const issued = new Issued();
    const verifyCalls = { n: 0 };
    const a = allocator(log, issued, 0n, 10, verifyCalls);
    await a.start();
    expect(verifyCalls.n).toBe(1);
    const before = await allocate(a, issued, 25);
    log.recreate();
    // The next block comes from the new topic: offsets restarted, so it must not be used.
    await expect(a.allocate(20)).rejects.toBeInstanceOf(IdBlocksUnavailableError);
    for (let i = 0; i < 50 && !a.ready; i++) await new Promise((r) => setTimeout(r, 5));
    expect(a.ready).toBe(true);
    expect(verifyCalls.n).toBe(2);
    const after = await allocate(a, issued, 25);
    const highestBefore = before.reduce((x, y) => (y > x ? y : x));
    expect(after.every((id) => id > highestBefore)).toBe(true);
    issued.expectUnique();
    a.close();
  });

  it('raises the floor at start when the topic is behind the stored ids', async () => {
    const log = new MemoryBlockLog();
    const issued = new Issued();
    issued.add([123_456n]); // stored by an earlier deployment whose topic is gone
    const a = allocator(log, issued, 0n, 100);
    await a.start();
    const [first] = await allocate(a, issued, 1);
    expect(first).toBeGreaterThan(123_456n);
    a.close();
  });

  it('queues calls the blocks in hand cannot serve behind the refill, in call order', async () => {
    const log = new MemoryBlockLog();
    const issued = new Issued();
    const a = allocator(log, issued, 0n, 4);
    await a.start();
    let release!: () => void;
    log.hold = new Promise((r) => (release = r));
    const pending = [a.allocate(3), a.allocate(3), a.allocate(1)];
    log.hold = null;
    release();
    const [x, y, z] = await Promise.all(pending);
    expect([...x!, ...y!, ...z!]).toEqual([...x!, ...y!, ...z!].sort((p, q) => (p < q ? -1 : 1)));
    expect(new Set([...x!, ...y!, ...z!].map(String)).size).toBe(7);
    a.close();
  });

  it('refuses bad counts and calls after close', async () => {
    const log = new MemoryBlockLog();
    const a = allocator(log, new Issued(), 0n, 10);
    await a.start();
    await expect(a.allocate(-1)).rejects.toThrow(RangeError);
    a.close();
    await expect(a.allocate(1)).rejects.toBeInstanceOf(IdBlocksUnavailableError);
  });
});
