import type { Redis } from 'ioredis';
import type { IdAllocator } from '../types.js';
import { asString, LuaScript, RedisDataError, type Guard } from './connection.js';

export const DEFAULT_ID_BLOCK_SIZE = 1000;

/**
 * KEYS: counter. ARGV: increment → the counter after INCRBY, as text. Read back with GET because
 * INCRBY's integer reply would reach Lua and JavaScript as a double, inexact past 2^53.
 */
/**
 * KEYS: counter. ARGV: floor (canonical decimal) → 1 when the counter was raised to it, else 0.
 * Compares decimal strings (length, then text), exact at any size, unlike Lua's doubles.
 */
export const ID_FLOOR = new LuaScript(
  'id-floor',
  `local cur = redis.call('GET', KEYS[1]) or '0'
local f = ARGV[1]
if #cur < #f or (#cur == #f and cur < f) then
  redis.call('SET', KEYS[1], f)
  return 1
end
return 0`,
);

export const ID_BLOCK = new LuaScript(
  'id-block',
  `redis.call('INCRBY', KEYS[1], ARGV[1])
return redis.call('GET', KEYS[1])`,
);

/**
 * Event ids in blocks from one counter shared by every gateway: INCRBY by k·block returns the last
 * id of k fresh blocks, handed out locally. A call the local block can serve is answered at once;
 * the others queue (FIFO) behind one another, and only the head of the queue refills, so there is
 * never more than one refill in flight, a refill takes just the blocks its caller still needs, and
 * ids increase in call order within one allocator. Ids left in a block when the process stops are
 * never used (gaps, never duplicates). The first id is 1.
 */
export class RedisIdAllocator implements IdAllocator {
  /** Next id to hand out and the last id of the local block; next > end = empty. */
  private next = 1n;
  private end = 0n;
  /** Calls waiting in the queue (or being served by it). */
  private queued = 0;
  private tail: Promise<void> = Promise.resolve();
  /** Blocks taken from Redis (tests and metrics). */
  blocksTaken = 0;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly guard: Guard,
    private readonly blockSize = DEFAULT_ID_BLOCK_SIZE,
  ) {
    if (!Number.isSafeInteger(blockSize) || blockSize < 1) throw new RangeError(`Invalid id block size: ${blockSize}`);
  }

  allocate(count: number): Promise<bigint[]> {
    if (!Number.isSafeInteger(count) || count < 0) return Promise.reject(new RangeError(`Invalid id count: ${count}`));
    // Fast path: nobody queued ahead and the local block suffices.
    if (this.queued === 0 && this.end - this.next + 1n >= BigInt(count)) return Promise.resolve(this.take(count));
    this.queued++;
    const result = this.tail.then(() => this.fill(count));
    const done = (): void => {
      this.queued--;
    };
    this.tail = result.then(done, done);
    return result;
  }

  /**
   * Raises the shared counter to at least `floor` (never lowers it), so ids handed out afterwards are
   * above it. For startup after a Redis data loss: pass the largest id already stored or published.
   * Blocks already held locally by gateways are not affected. True when the counter was raised.
   */
  raiseFloor(floor: bigint): Promise<boolean> {
    if (floor < 0n) return Promise.reject(new RangeError(`Invalid id floor: ${floor}`));
    return this.guard('ids.raiseFloor', async () => (await ID_FLOOR.run(this.redis, [this.key], [floor.toString()])) === 1);
  }

  /** Runs at the head of the queue only. */
  private async fill(count: number): Promise<bigint[]> {
    const out: bigint[] = [];
    while (out.length < count) {
      if (this.next > this.end) await this.refill(count - out.length);
      out.push(...this.take(Math.min(count - out.length, Number(this.end - this.next + 1n))));
    }
    return out;
  }

  private take(count: number): bigint[] {
    const out = new Array<bigint>(count);
    let id = this.next;
    for (let i = 0; i < count; i++) out[i] = id++;
    this.next = id;
    return out;
  }

  private refill(needed: number): Promise<void> {
    return this.guard('ids.allocate', async () => {
      const blocks = Math.ceil(needed / this.blockSize);
      const size = BigInt(blocks) * BigInt(this.blockSize);
      const text = asString(await ID_BLOCK.run(this.redis, [this.key], [size.toString()]), 'id counter');
      if (!/^\d+$/.test(text)) throw new RedisDataError(`Id counter holds ${JSON.stringify(text)}.`);
      const last = BigInt(text);
      this.next = last - size + 1n;
      this.end = last;
      this.blocksTaken += blocks;
    });
  }
}
