import { FailureLog } from '../../runtime/failure-log.js';
import type { BlockRecord, TopicPosition } from './blocks-topic.js';
import { IdBlocksConflictError, IdBlocksUnavailableError, type IdAllocator } from '../scale-out-types.js';

const DEFAULT_ID_BLOCK_SIZE = 1000;
/** Records read back before the first block: enough to see past the last record of every stale gateway. */
const START_WINDOW = 2000n;

/** What the allocator needs of the id-blocks topic (ids/blocks-topic.ts). */
export interface BlockLog {
  readonly topic: string;
  append(floor: bigint, blockSize: number): Promise<bigint>;
  /** Creates the topic when missing; true when this call created it. */
  ensure(): Promise<boolean>;
  position(): Promise<TopicPosition>;
  topicId(): Promise<string>;
  read(from: bigint, to: bigint): Promise<BlockRecord[]>;
}

interface KafkaIdAllocatorOptions {
  blocks: BlockLog;
  /** ID_FLOOR: every id is above it. */
  floor: bigint;
  blockSize?: number;
  /**
   * Checks a topic this allocator has not seen before (at start, or after the topic was deleted
   * and created again) against the ids already stored: returns the floor to use, raised when the
   * topic is behind them. scale-out/index.ts reads the highest stored id.
   */
  verify(position: TopicPosition, floor: bigint, blockSize: number): Promise<bigint>;
  logger: { info(o: object, m: string): void; warn(o: object, m: string): void; error(o: object, m: string): void };
  metrics?: { block(floor: bigint): void; unavailable(active: boolean): void };
}

interface Block {
  next: bigint;
  end: bigint;
}

/**
 * Event ids in blocks taken from Kafka. A block is one record produced with acks=all to the
 * single-partition id-blocks topic; the offset Kafka gives it names the ids
 * floor + offset·B + 1 … floor + (offset+1)·B. Kafka never gives one offset twice in a topic (the
 * record is on every in-sync replica before it is acknowledged, and unclean leader election is
 * off), so two blocks never share an id, whatever happens to Redis, which ids no longer touch.
 *
 * - Every record carries the floor and B it was taken under. Before using a block the allocator
 *   reads every record between its previous block and the new one (and, at start, the last
 *   START_WINDOW records): a record with another B stops it (IdBlocksConflictError: ids would
 *   overlap); one with a higher floor (ID_FLOOR raised on another gateway, or a topic found behind
 *   the stored ids) is adopted, the block is dropped and another is taken under it. So the floor
 *   of the blocks any allocator uses only grows along the topic, and ids of different floors never
 *   meet.
 * - After each record it asks for the topic's id again: a topic deleted and created anew (offsets
 *   restart at 0) is noticed before its block is used; the allocator then issues nothing
 *   (IdBlocksUnavailableError, -5) until `verify` has checked the new topic against the stored ids.
 * - Refills run ahead: when less than half a block is left, the next block is taken in the
 *   background, so inserts wait for Kafka only when a burst outruns it. One refill at a time; calls
 *   that the blocks in hand cannot serve queue FIFO behind it, so ids increase in call order.
 */
export class KafkaIdAllocator implements IdAllocator {
  private readonly blockSize: number;
  private floor: bigint;
  private blocks: Block[] = [];
  /** The last offset whose record this allocator has read or written; -1 = none. */
  private checked = -1n;
  private topicId: string | null = null;
  private refilling: Promise<void> | null = null;
  private verifying: Promise<void> | null = null;
  private conflict: IdBlocksConflictError | null = null;
  private queued = 0;
  private tail: Promise<void> = Promise.resolve();
  private closed = false;
  /** Blocks taken (tests and metrics). */
  blocksTaken = 0;
  /** Refills and checks that fail (Kafka down or stalled): logged once, then a count now and then. */
  private readonly refillFailures: FailureLog;
  private readonly checkFailures: FailureLog;

  constructor(private readonly options: KafkaIdAllocatorOptions) {
    this.refillFailures = new FailureLog(options.logger, 'taking the next event-id block failed');
    this.checkFailures = new FailureLog(options.logger, 'checking the id-blocks topic failed; retrying');
    this.blockSize = options.blockSize ?? DEFAULT_ID_BLOCK_SIZE;
    if (!Number.isSafeInteger(this.blockSize) || this.blockSize < 1) throw new RangeError(`Invalid id block size: ${this.blockSize}`);
    this.floor = options.floor;
  }

  /** The floor blocks are taken under now (ID_FLOOR, or higher when raised or rebased). */
  get currentFloor(): bigint {
    return this.floor;
  }

  /**
   * Taking blocks or checking the topic keeps failing (Kafka down or stalled) since the last
   * success. A conflict is not counted: no restart mends a configuration that differs.
   */
  get failing(): boolean {
    return this.refillFailures.failing || this.checkFailures.failing;
  }

  /** True when ids can be issued (not stopped by a conflict, not checking a new topic). */
  get ready(): boolean {
    return this.conflict === null && this.verifying === null && this.topicId !== null && !this.closed;
  }

  /** Reads where the topic is and checks it (verify); the first block is taken right after. */
  async start(): Promise<void> {
    await this.establish();
    this.prefetch();
  }

  close(): void {
    this.closed = true;
  }

  allocate(count: number): Promise<bigint[]> {
    if (!Number.isSafeInteger(count) || count < 0) return Promise.reject(new RangeError(`Invalid id count: ${count}`));
    const refusal = this.refusal();
    if (refusal !== null) return Promise.reject(refusal);
    if (this.queued === 0 && this.available() >= count) {
      const ids = this.take(count);
      this.prefetch();
      return Promise.resolve(ids);
    }
    this.queued++;
    const result = this.tail.then(() => this.fill(count));
    const done = (): void => {
      this.queued--;
    };
    this.tail = result.then(done, done);
    return result;
  }

  private refusal(): Error | null {
    if (this.conflict !== null) return this.conflict;
    if (this.closed) return new IdBlocksUnavailableError('The id allocator is closed.');
    if (this.verifying !== null || this.topicId === null) return new IdBlocksUnavailableError('The id-blocks topic is being checked; no ids until then.');
    return null;
  }

  private available(): number {
    let n = 0n;
    for (const b of this.blocks) n += b.end - b.next + 1n;
    return Number(n);
  }

  private take(count: number): bigint[] {
    const out = new Array<bigint>(count);
    let i = 0;
    while (i < count) {
      const block = this.blocks[0]!;
      while (i < count && block.next <= block.end) out[i++] = block.next++;
      if (block.next > block.end) this.blocks.shift();
    }
    return out;
  }

  /** Runs at the head of the queue only. */
  private async fill(count: number): Promise<bigint[]> {
    while (this.available() < count) {
      const refusal = this.refusal();
      if (refusal !== null) throw refusal;
      await this.refill();
    }
    const ids = this.take(count);
    this.prefetch();
    return ids;
  }

  /** Less than half a block left: take the next one in the background. */
  private prefetch(): void {
    if (this.refilling !== null || this.refusal() !== null || this.available() * 2 >= this.blockSize) return;
    // Calls that need the block will try again and answer -5 if it keeps failing.
    this.refill().catch(() => undefined);
  }

  private refill(): Promise<void> {
    this.refilling ??= this.takeBlock()
      .then(
        () => this.refillFailures.ok(),
        (err: unknown) => {
          if (!(err instanceof IdBlocksUnavailableError || err instanceof IdBlocksConflictError)) this.refillFailures.failed(err);
          throw err;
        },
      )
      .finally(() => {
        this.refilling = null;
      });
    return this.refilling;
  }

  private async takeBlock(): Promise<void> {
    const { blocks } = this.options;
    for (;;) {
      const refusal = this.refusal();
      if (refusal !== null) throw refusal;
      const floor = this.floor;
      const topicId = this.topicId;
      const offset = await blocks.append(floor, this.blockSize).catch(async (err: unknown) => {
        // Deleted while we run? Then create it anew (offsets restart at 0) and check it as such.
        if (await blocks.ensure().catch(() => false)) this.lost(`the id-blocks topic ${blocks.topic} was deleted; created it again`);
        throw err;
      });
      // Every record since the previous one we know of: another B, or a higher floor?
      const between = offset > this.checked + 1n ? await blocks.read(this.checked + 1n, offset) : [];
      const idNow = await blocks.topicId();
      if (this.topicId !== topicId || this.floor !== floor || this.conflict !== null) continue; // changed meanwhile (a new check): take another
      if (idNow !== topicId || offset <= this.checked) {
        this.lost(`the id-blocks topic ${blocks.topic} was deleted and created again (topic id ${topicId} -> ${idNow}, offset ${offset} after ${this.checked})`);
        throw new IdBlocksUnavailableError('The id-blocks topic was created again; checking it against the stored ids.');
      }
      this.checked = offset;
      if (this.absorb(between)) continue; // a higher floor: this block was taken under the old one
      this.blocks.push({ next: floor + offset * BigInt(this.blockSize) + 1n, end: floor + (offset + 1n) * BigInt(this.blockSize) });
      this.blocksTaken++;
      this.options.metrics?.block(floor);
      return;
    }
  }

  /**
   * Applies what other gateways' records say. A conflicting B stops this allocator for good; a
   * higher floor is adopted and the blocks in hand dropped. True when the floor changed.
   */
  private absorb(records: readonly BlockRecord[]): boolean {
    let highest = this.floor;
    for (const r of records) {
      if (r.blockSize !== this.blockSize) {
        this.conflict = new IdBlocksConflictError(
          `Record ${r.offset} of ${this.options.blocks.topic} was taken with blocks of ${r.blockSize} ids, this gateway uses ${this.blockSize}: their ids would overlap, so this gateway issues none.`,
        );
        this.blocks = [];
        this.options.metrics?.unavailable(true);
        this.options.logger.error({ topic: this.options.blocks.topic, offset: r.offset.toString(), theirs: r.blockSize, ours: this.blockSize }, this.conflict.message);
        throw this.conflict;
      }
      if (r.floor > highest) highest = r.floor;
    }
    if (highest === this.floor) return false;
    this.options.logger.warn({ from: this.floor.toString(), to: highest.toString() }, 'event-id floor raised by another gateway; continuing above it');
    this.floor = highest;
    this.blocks = [];
    return true;
  }

  /** The topic is not the one this allocator knew: drop everything and check the new one. */
  private lost(why: string): void {
    this.blocks = [];
    this.topicId = null;
    this.options.logger.error({ topic: this.options.blocks.topic }, `${why}: inserts answer -5 until it is checked against the stored ids`);
    void this.establish().catch(() => undefined);
  }

  /** Reads the topic's position and recent records, and has `verify` check it. Retries until it succeeds. */
  private establish(): Promise<void> {
    this.verifying ??= (async () => {
      this.options.metrics?.unavailable(true);
      for (let attempt = 0; ; attempt++) {
        try {
          if (attempt > 0) await this.options.blocks.ensure();
          const position = await this.options.blocks.position();
          const from = position.end - START_WINDOW > position.start ? position.end - START_WINDOW : position.start;
          const recent = position.end > from ? await this.options.blocks.read(from, position.end) : [];
          this.absorb(recent);
          this.floor = await this.options.verify(position, this.floor, this.blockSize);
          this.checked = position.end - 1n;
          this.topicId = position.topicId;
          this.blocks = [];
          this.checkFailures.ok();
          return;
        } catch (err) {
          if (err instanceof IdBlocksConflictError || this.closed) throw err;
          if (this.topicId === null && attempt === 0 && this.checked === -1n) throw err; // at start: the gateway does not start
          const delayMs = Math.min(5000, 200 * 2 ** Math.min(attempt, 10));
          this.checkFailures.failed(err, { delayMs });
          await new Promise((r) => setTimeout(r, delayMs).unref());
        }
      }
    })().finally(() => {
      this.verifying = null;
      this.options.metrics?.unavailable(!this.ready);
    });
    return this.verifying;
  }
}
