import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { IdEpochChangedError, IdStateLostError } from '../id-state.js';
import type { IdAllocator } from '../types.js';
import { asString, isReplyError, RedisDataError, type Guard } from './connection.js';
import { ID_BLOCK, ID_FLOOR, ID_LOCK_EXTEND, ID_LOCK_RELEASE, ID_RESTORE } from './id-scripts.js';
import type { RedisKeys } from './keys.js';

export const DEFAULT_ID_BLOCK_SIZE = 1000;

/** A fresh epoch token: when it was made (base 36, for people reading Redis) and 12 random bytes. */
export function newEpoch(): string {
  return `${Date.now().toString(36)}-${randomBytes(12).toString('hex')}`;
}

/** What Redis holds of the id state. */
export interface IdState {
  epoch: string | null;
  counter: bigint | null;
}

function parseCounter(text: string): bigint {
  if (!/^\d+$/.test(text)) throw new RedisDataError(`Id counter holds ${JSON.stringify(text)}.`);
  return BigInt(text);
}

/**
 * Event ids in blocks from one counter shared by every gateway: INCRBY by k·block returns the last
 * id of k fresh blocks, handed out locally. A call the local block can serve is answered at once;
 * the others queue (FIFO) behind one another, and only the head of the queue refills, so there is
 * never more than one refill in flight, a refill takes just the blocks its caller still needs, and
 * ids increase in call order within one allocator. Ids left in a block when the process stops are
 * never used (gaps, never duplicates).
 *
 * Losing Redis must never reuse an id. Ids are issued under an epoch: the token Redis holds next to
 * the counter (id-scripts.ts). Until this allocator has adopted one (establish, or IdRecovery after
 * a loss) it issues nothing. Every result of allocate() remembers its epoch (epochOf), and the dedupe
 * claim of those ids checks it in the same script, so detection happens on every append, not only
 * at the next refill: a gateway whose local block predates a flush cannot publish from it, even
 * after another gateway restored the state. When a script reports the state lost, the allocator
 * drops its block, rejects every call with IdStateLostError at once (no round trip) and tells
 * `onLost`; when it reports a new epoch, the allocator adopts it, drops its block, and the caller
 * allocates again.
 */
export class RedisIdAllocator implements IdAllocator {
  /** Next id to hand out and the last id of the local block; next > end = empty. */
  private next = 1n;
  private end = 0n;
  /** The epoch ids are issued under; null = none (not established yet, or lost). */
  private epoch: string | null = null;
  /** Calls waiting in the queue (or being served by it). */
  private queued = 0;
  private tail: Promise<void> = Promise.resolve();
  private readonly epochs = new WeakMap<readonly bigint[], string>();
  /** Blocks taken from Redis (tests and metrics). */
  blocksTaken = 0;
  /** Told each time a script finds the id state gone (IdRecovery restores it). */
  onLost: (() => void) | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly guard: Guard,
    private readonly blockSize = DEFAULT_ID_BLOCK_SIZE,
  ) {
    if (!Number.isSafeInteger(blockSize) || blockSize < 1) throw new RangeError(`Invalid id block size: ${blockSize}`);
  }

  /** The epoch this allocator issues ids under (null: none, inserts answer -5). */
  get currentEpoch(): string | null {
    return this.epoch;
  }

  allocate(count: number): Promise<bigint[]> {
    if (!Number.isSafeInteger(count) || count < 0) return Promise.reject(new RangeError(`Invalid id count: ${count}`));
    if (this.epoch === null) return Promise.reject(new IdStateLostError('The event-id state is being restored; no ids until then.'));
    // Fast path: nobody queued ahead and the local block suffices.
    if (this.queued === 0 && this.end - this.next + 1n >= BigInt(count)) return Promise.resolve(this.take(count, this.epoch));
    this.queued++;
    const result = this.tail.then(() => this.fill(count));
    const done = (): void => {
      this.queued--;
    };
    this.tail = result.then(done, done);
    return result;
  }

  epochOf(ids: readonly bigint[]): string | undefined {
    return this.epochs.get(ids);
  }

  /** Issue ids under `epoch` from now on; a block of another epoch is dropped unused. */
  adopt(epoch: string): void {
    if (epoch === this.epoch) return;
    this.epoch = epoch;
    this.next = 1n;
    this.end = 0n;
  }

  /** The state is gone: drop the block, issue nothing, tell onLost. */
  lose(): void {
    this.epoch = null;
    this.next = 1n;
    this.end = 0n;
    this.onLost?.();
  }

  /**
   * Turns a script's `IDSTATE` error reply to a call made under `requestEpoch` into what the caller
   * throws, updating this allocator on the way (lose or adopt). A reply that arrives after this
   * allocator moved past `requestEpoch` (it adopted a newer state meanwhile) only tells the caller
   * to try again. Other errors come back unchanged.
   */
  stateError(err: unknown, requestEpoch: string): unknown {
    if (!isReplyError(err) || !(err instanceof Error)) return err;
    const m = /^IDSTATE (lost|changed (\S+))/.exec(err.message);
    if (m === null) return err;
    if (this.epoch !== requestEpoch) {
      return this.epoch === null ? new IdStateLostError('The event-id state is being restored; no ids until then.') : new IdEpochChangedError(this.epoch);
    }
    if (m[2] === undefined) {
      this.lose();
      return new IdStateLostError('The event-id state is gone from Redis; no ids until a gateway restores it.', { cause: err });
    }
    this.adopt(m[2]);
    return new IdEpochChangedError(m[2]);
  }

  /** The epoch and counter in Redis (null where missing). */
  readState(): Promise<IdState> {
    return this.guard('ids.readState', async () => {
      const [epoch, counter] = await this.redis.mget(this.keys.eventIdEpoch(), this.keys.eventIdSeq());
      return { epoch: epoch ?? null, counter: counter === null || counter === undefined ? null : parseCounter(counter) };
    });
  }

  /**
   * Compares Redis with this allocator (for readiness probes, so an idle gateway notices too):
   * adopts a newer epoch, or loses a state that is gone. True when ids can be issued.
   */
  async checkState(): Promise<boolean> {
    const { epoch, counter } = await this.readState();
    if (epoch === null || counter === null) {
      if (this.epoch !== null) this.lose();
      return false;
    }
    if (this.epoch !== null) this.adopt(epoch);
    return this.epoch !== null;
  }

  /** Takes the recovery lock for `ttlMs` unless another gateway holds it. */
  tryLock(token: string, ttlMs: number): Promise<boolean> {
    return this.guard('ids.lock', async () => (await this.redis.set(this.keys.eventIdRecoveryLock(), token, 'PX', ttlMs, 'NX')) === 'OK');
  }

  extendLock(token: string, ttlMs: number): Promise<boolean> {
    return this.guard('ids.lock', async () => (await ID_LOCK_EXTEND.run(this.redis, [this.keys.eventIdRecoveryLock()], [token, ttlMs])) === 1);
  }

  releaseLock(token: string): Promise<void> {
    return this.guard('ids.lock', async () => {
      await ID_LOCK_RELEASE.run(this.redis, [this.keys.eventIdRecoveryLock()], [token]);
    });
  }

  /**
   * With the recovery lock: raises the counter to `floor` (never lowers it), writes a new epoch,
   * releases the lock, and issues ids under that epoch. Returns the counter.
   */
  restore(floor: bigint, lockToken: string): Promise<{ epoch: string; counter: bigint }> {
    if (floor < 0n) return Promise.reject(new RangeError(`Invalid id floor: ${floor}`));
    const epoch = newEpoch();
    return this.guard('ids.restore', async () => {
      const keys = [this.keys.eventIdEpoch(), this.keys.eventIdSeq(), this.keys.eventIdRecoveryLock()];
      const counter = parseCounter(asString(await ID_RESTORE.run(this.redis, keys, [lockToken, floor.toString(), epoch]), 'id counter'));
      this.adopt(epoch);
      return { epoch, counter };
    });
  }

  /**
   * Raises the shared counter to at least `floor` (never lowers it), so ids handed out afterwards are
   * above it (ID_FLOOR). When it raises it, the epoch changes too: every gateway drops the block it
   * holds at its next append and continues above the floor. True when the counter was raised.
   */
  async raiseFloor(floor: bigint): Promise<boolean> {
    if (floor < 0n) throw new RangeError(`Invalid id floor: ${floor}`);
    for (;;) {
      const epoch = this.epoch;
      if (epoch === null) throw new IdStateLostError('The event-id state is not established; cannot raise its floor.');
      try {
        const next = newEpoch();
        const reply = await this.guard('ids.raiseFloor', () =>
          ID_FLOOR.run(this.redis, [this.keys.eventIdEpoch(), this.keys.eventIdSeq()], [epoch, floor.toString(), next]),
        );
        if (reply === null) return false;
        this.adopt(asString(reply, 'id epoch'));
        return true;
      } catch (err) {
        const mapped = this.stateError(err, epoch);
        // Another epoch became current meanwhile (adopted): raise under it.
        if (mapped instanceof IdEpochChangedError) continue;
        throw mapped;
      }
    }
  }

  /** Runs at the head of the queue only. All ids of one call come from one epoch. */
  private async fill(count: number): Promise<bigint[]> {
    const epoch = this.epoch;
    if (epoch === null) throw new IdStateLostError('The event-id state is being restored; no ids until then.');
    const out: bigint[] = [];
    while (out.length < count) {
      if (this.next > this.end) await this.refill(count - out.length, epoch);
      out.push(...this.take(Math.min(count - out.length, Number(this.end - this.next + 1n)), epoch));
    }
    this.epochs.set(out, epoch);
    return out;
  }

  private take(count: number, epoch: string): bigint[] {
    const out = new Array<bigint>(count);
    let id = this.next;
    for (let i = 0; i < count; i++) out[i] = id++;
    this.next = id;
    this.epochs.set(out, epoch);
    return out;
  }

  private async refill(needed: number, epoch: string): Promise<void> {
    const blocks = Math.ceil(needed / this.blockSize);
    const size = BigInt(blocks) * BigInt(this.blockSize);
    let text: string;
    try {
      text = await this.guard('ids.allocate', async () =>
        asString(await ID_BLOCK.run(this.redis, [this.keys.eventIdEpoch(), this.keys.eventIdSeq()], [epoch, size.toString()]), 'id counter'),
      );
    } catch (err) {
      throw this.stateError(err, epoch);
    }
    // A state change that arrived while this refill was in flight wins: the block is not used.
    if (this.epoch === null) throw new IdStateLostError('The event-id state is being restored; no ids until then.');
    if (this.epoch !== epoch) throw new IdEpochChangedError(this.epoch);
    const last = parseCounter(text);
    this.next = last - size + 1n;
    this.end = last;
    this.blocksTaken += blocks;
  }
}
