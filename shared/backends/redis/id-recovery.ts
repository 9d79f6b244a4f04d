import { randomBytes } from 'node:crypto';
import type { RedisIdAllocator } from './ids.js';

export interface IdRecoveryLogger {
  info(o: object, m: string): void;
  warn(o: object, m: string): void;
  error(o: object, m: string): void;
}

export interface IdRecoveryMetrics {
  /** This gateway found the id state gone. */
  lost(): void;
  /** This gateway restored the id state with this floor. */
  restored(floor: bigint): void;
  /** True while this gateway has no id state (its inserts answer -5). */
  recovering(active: boolean): void;
}

export interface IdRecoveryOptions {
  ids: RedisIdAllocator;
  /**
   * The highest event id stored anywhere durable (Kafka topic, ClickHouse), 0 when none; read after
   * the settle wait, by the one gateway that restores.
   */
  highestStoredId(): Promise<bigint>;
  /** ID_FLOOR: the restored counter is never below it. */
  idFloor: bigint;
  /** ID_RECOVERY_MARGIN: added to the highest stored id. */
  margin: bigint;
  /**
   * How long to wait before reading the highest stored id: every append that took its ids before
   * the loss has been answered by then (APPEND_TIMEOUT_MS and a little), so what it published is in
   * the log.
   */
  settleMs: number;
  logger: IdRecoveryLogger;
  metrics?: IdRecoveryMetrics;
  /** The recovery lock expires after this unless extended (every third of it). Default 30 s. */
  lockTtlMs?: number;
  /** How often a gateway waiting for another one's recovery looks again. Default 250 ms. */
  pollMs?: number;
  /** Pause after a failed attempt: doubles from 200 ms up to this. Default 5 s. */
  maxRetryMs?: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Keeps the event-id state of one gateway established, and restores it when Redis lost it.
 *
 * Redis holds the scale-out id counter; after Redis restarts without its data the counter would
 * start again at 1 and hand out ids that already exist in Kafka and ClickHouse. So ids are issued
 * under an epoch (ids.ts), every append checks it, and when it is gone:
 * - every gateway drops its local block and answers inserts -5 (IdStateLostError) until the state is
 *   back; readiness is false meanwhile;
 * - one gateway at a time (a Redis lock with a TTL, extended while it works; if it dies another
 *   takes over) waits `settleMs`, so appends that took ids before the loss are answered and what
 *   they published is in the log, then reads the highest id stored in Kafka and ClickHouse and
 *   restores the counter to max(ID_FLOOR, highest + margin) with a new epoch;
 * - the others see the new epoch (polling, or at their next append) and adopt it.
 * The margin covers ids that are in the log but not readable yet: sends that timed out (answered
 * -5) and that the broker still appends later, from the blocks gateways held. It must exceed the
 * ids the gateways can have taken but not yet published: about gateways × (MAX_IN_FLIGHT_EVENTS +
 * id block size); the default 1,000,000 covers dozens of gateways, and ids are 64-bit.
 *
 * Redis cannot tell a first start from a loss (both: no counter), so a deployment's very first
 * start restores too, and its first id is the margin + 1 (or above ID_FLOOR).
 *
 * What cannot be restored: the resend-dedupe claims. A resend inside the window right after a loss
 * gets a new id and is stored a second time. Run Redis with AOF (docs/running.md).
 */
export class IdRecovery {
  private running: Promise<void> | null = null;
  private closed = false;
  private readonly lockTtlMs: number;
  private readonly pollMs: number;
  private readonly maxRetryMs: number;

  constructor(private readonly options: IdRecoveryOptions) {
    this.lockTtlMs = options.lockTtlMs ?? 30_000;
    this.pollMs = options.pollMs ?? 250;
    this.maxRetryMs = options.maxRetryMs ?? 5_000;
    options.ids.onLost = () => this.trigger();
  }

  /** True while this gateway has no id state (restoring it, or waiting for another gateway to). */
  get recovering(): boolean {
    return this.running !== null || this.options.ids.currentEpoch === null;
  }

  /**
   * At gateway start: adopts the state in Redis, or restores it (a first start, or Redis lost it
   * while this gateway was down), then raises the floor to ID_FLOOR. Failures are thrown (the
   * gateway does not start), not retried.
   */
  async start(): Promise<void> {
    const { ids, idFloor, logger } = this.options;
    const state = await ids.readState();
    if (state.epoch !== null && state.counter !== null) ids.adopt(state.epoch);
    else {
      // Another gateway starting at the same time may hold the lock: wait for its result.
      while (!(await this.restoreOnce('no event-id state in Redis at start (first start, or Redis lost its data)'))) await sleep(this.pollMs);
    }
    if (idFloor > 0n && (await ids.raiseFloor(idFloor))) logger.info({ idFloor: idFloor.toString() }, 'event-id counter raised to ID_FLOOR');
  }

  /** Readiness: ids can be issued, checked against Redis (so an idle gateway notices a loss too). */
  async ready(): Promise<boolean> {
    if (this.running !== null) return false;
    return this.options.ids.checkState();
  }

  /** The id state is gone: recover in the background, once, however many appends notice it. */
  trigger(): void {
    if (this.running !== null || this.closed) return;
    this.options.metrics?.lost();
    this.options.metrics?.recovering(true);
    this.options.logger.error(
      {},
      'event-id state lost in Redis (flushed, restarted without data, or evicted): inserts answer -5 until the counter is restored above every id issued',
    );
    this.running = this.recover().finally(() => {
      this.running = null;
      this.options.metrics?.recovering(this.options.ids.currentEpoch === null);
    });
  }

  /** Stops recovering (an attempt in progress ends at its next step; shutdown does not wait for it). */
  close(): void {
    this.closed = true;
  }

  private async recover(): Promise<void> {
    for (let attempt = 0; !this.closed; attempt++) {
      try {
        if (await this.restoreOnce('event-id state lost')) return;
        attempt = -1; // another gateway holds the lock: wait for it, without backing off
        await sleep(this.pollMs);
      } catch (err) {
        const delayMs = Math.min(this.maxRetryMs, 200 * 2 ** Math.min(attempt, 20));
        this.options.logger.warn({ err, attempt: attempt + 1, delayMs }, 'event-id state recovery failed; retrying');
        await sleep(delayMs);
      }
    }
  }

  /**
   * One attempt: adopts a state another gateway restored, or takes the lock and restores it.
   * False when another gateway holds the lock (try again later).
   */
  private async restoreOnce(why: string): Promise<boolean> {
    const { ids, logger } = this.options;
    const state = await ids.readState();
    if (state.epoch !== null && state.counter !== null) {
      ids.adopt(state.epoch);
      logger.warn({ epoch: state.epoch, counter: state.counter.toString() }, 'event-id state restored by another gateway; issuing ids again');
      return true;
    }
    const token = randomBytes(12).toString('hex');
    if (!(await ids.tryLock(token, this.lockTtlMs))) return false;
    // Extended while the log is read (it may be long); lost only if this process stalls past the TTL.
    const extender = setInterval(() => void ids.extendLock(token, this.lockTtlMs).catch(() => undefined), Math.max(100, this.lockTtlMs / 3));
    extender.unref();
    try {
      // Another gateway may have restored (and released the lock) between the read above and the lock.
      const again = await ids.readState();
      if (again.epoch !== null && again.counter !== null) {
        ids.adopt(again.epoch);
        logger.warn({ epoch: again.epoch, counter: again.counter.toString() }, 'event-id state restored by another gateway; issuing ids again');
        return true;
      }
      logger.warn({ why, settleMs: this.options.settleMs }, 'restoring the event-id state: waiting for appends in flight, then reading the highest stored id');
      await sleep(this.options.settleMs);
      const highest = await this.options.highestStoredId();
      const fromLog = highest + this.options.margin;
      const floor = fromLog > this.options.idFloor ? fromLog : this.options.idFloor;
      const { epoch, counter } = await ids.restore(floor, token);
      this.options.metrics?.restored(counter);
      logger.warn(
        { floor: counter.toString(), highestStored: highest.toString(), margin: this.options.margin.toString(), idFloor: this.options.idFloor.toString(), epoch },
        `event-id state recovered (floor ${counter}); issuing ids above it`,
      );
      return true;
    } finally {
      clearInterval(extender);
      // Already gone after a restore; after a failure, let the next attempt (any gateway) start at once.
      await ids.releaseLock(token).catch(() => undefined);
    }
  }
}
