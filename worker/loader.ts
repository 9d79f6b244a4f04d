import { withTimeout } from '../shared/util/async.js';
import type { ConsumedMessage } from '../shared/backends/kafka/fetcher.js';
import { FailureLog } from '../shared/runtime/failure-log.js';
import { decodeEvent } from '../shared/events/wire.js';
import type { ClickHouseEventWriter } from '../shared/backends/clickhouse/writer.js';
import { retry, RetryAborted, sleep } from './backoff.js';
import { insertInPieces } from './insert-pieces.js';
import { batchToken, gridEnd, latestReports, poisonMessage, type BufferedMessage } from './batch.js';
import { OffsetCommits, type PartitionOffsets } from './offset-commits.js';

export type { LoaderStats, PoisonSink } from './loader-types.js';
import type { LoaderOptions, LoaderStats } from './loader-types.js';
import { errorMessage } from '../shared/util/error-message.js';

type State = 'running' | 'draining' | 'stopped' | 'aborted';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  return { promise: new Promise<void>((r) => (resolve = r)), resolve };
}

/** One partition's messages waiting for insert, its insert in flight, and its offsets to commit. */
interface PartitionQueue extends PartitionOffsets {
  buffer: BufferedMessage[];
  flushing: Promise<void> | null;
  timer: NodeJS.Timeout | null;
}

/**
 * Kafka messages → ClickHouse rows: buffers what the consumer reads per partition, inserts each
 * partition's messages in batches (batchRows, cut on a fixed grid of offsets, or batchMs, whichever
 * first), records last reports, then commits that partition's offsets. Partitions insert in
 * parallel, one insert in flight each, so a slow insert of one does not hold the others and order
 * within a partition is kept. A batch is retried with backoff until stored, in halves after an
 * attempt that timed out (insert-pieces.ts); offsets move only after that, so nothing is ever
 * committed that is not in ClickHouse. Memory is bounded by maxBuffered (fetching pauses past it).
 */
export class Loader {
  readonly stats: LoaderStats = {
    insertedRows: 0,
    batches: 0,
    lastBatchSize: 0,
    maxBatchSize: 0,
    insertRetries: 0,
    lastReportRetries: 0,
    poison: 0,
    commits: 0,
    commitFailures: 0,
    buffered: 0,
    inFlight: 0,
    paused: false,
    committed: {},
  };

  private state: State = 'running';
  private readonly queues = new Map<number, PartitionQueue>();
  private drainDeadline = Infinity;
  private assigned = new Set<number>();
  private room: { promise: Promise<void>; resolve: () => void } | null = null;
  private wakeUp!: () => void;
  private readonly wake: { promise: Promise<void> };
  /** Failures of each step, logged once when they start, then a count every few seconds, then once on success. */
  private readonly insertFailures: FailureLog;
  private readonly reportFailures: FailureLog;
  private readonly offsets: OffsetCommits;

  constructor(
    private readonly options: LoaderOptions,
    private readonly writer: Pick<ClickHouseEventWriter, 'encode' | 'insert'>,
  ) {
    this.wake = { promise: new Promise<void>((resolve) => (this.wakeUp = resolve)) };
    this.insertFailures = new FailureLog(options.logger, 'ClickHouse insert failed; retrying (offsets not committed)');
    this.reportFailures = new FailureLog(options.logger, 'last-report update failed; retrying');
    this.offsets = new OffsetCommits({
      topic: options.topic,
      commit: (offsets) => options.commit(offsets),
      logger: options.logger,
      stats: this.stats,
      retryAfterMs: options.backoff.maxMs,
      isAssigned: (partition) => this.assigned.has(partition),
      isRunning: () => this.state === 'running',
      runAsFlush: (partition, work) => this.runAsFlush(this.queue(partition), work),
    });
  }

  get running(): boolean {
    return this.state === 'running';
  }

  /** Inserts fail since the last one that succeeded. */
  get insertsFailing(): boolean {
    return this.insertFailures.failing;
  }

  /** When inserts started failing since the last one that succeeded (epoch ms), null while they work. */
  get insertsFailingSince(): number | null {
    return this.insertFailures.failingSince;
  }

  /** Last-report updates fail since the last one that succeeded. */
  get reportsFailing(): boolean {
    return this.reportFailures.failing;
  }

  /** A method, not an inline comparison: abort() changes the state while drain() awaits. */
  private isDraining(): boolean {
    return this.state === 'draining';
  }

  private queue(partition: number): PartitionQueue {
    let q = this.queues.get(partition);
    if (q === undefined) this.queues.set(partition, (q = { partition, buffer: [], flushing: null, timer: null, pendingCommit: null, commitTimer: null }));
    return q;
  }

  // ---- reading ------------------------------------------------------------------------------

  /**
   * Takes a fetched batch of one partition, in offset order, into the partition's buffer; answers
   * how many messages it took. It stops early (and the consumer fetches the rest again) when the
   * worker stops or the batch is no longer current (the group was joined again meanwhile).
   */
  async onBatch(partition: number, messages: readonly ConsumedMessage[], current: () => boolean): Promise<number> {
    const q = this.queue(partition);
    let taken = 0;
    let arrivedAt = Date.now();
    for (const message of messages) {
      if (this.stats.buffered >= this.options.maxBuffered) {
        if (!(await this.waitForRoom(current))) break;
        arrivedAt = Date.now();
      } else if (taken === 0 && !(current() && this.state === 'running')) break;
      const offset = message.offset;
      q.buffer.push({ partition, offset, arrivedAt, timestamp: message.timestamp, ...this.decode(message, partition) });
      this.stats.buffered++;
      taken++;
      if (q.buffer.length === 1 || this.completeAt(q, offset)) this.schedule(q);
    }
    this.schedule(q);
    return taken;
  }

  /**
   * Backpressure: with maxBuffered messages in memory (ClickHouse slow or down), consumption
   * pauses here until a batch is taken for insert (the group member heartbeats on its own
   * meanwhile). Unread messages stay in Kafka (lag grows). False when the worker is stopping or
   * the batch is no longer current.
   */
  private async waitForRoom(current: () => boolean): Promise<boolean> {
    this.stats.paused = true;
    try {
      while (this.stats.buffered >= this.options.maxBuffered) {
        if (this.state !== 'running' || !current()) return false;
        this.room ??= deferred();
        await Promise.race([this.room.promise, sleep(1_000)]);
      }
      return this.state === 'running' && current();
    } finally {
      this.stats.paused = false;
    }
  }

  private notifyRoom(): void {
    this.room?.resolve();
    this.room = null;
  }

  /**
   * Poison policy: a message that cannot be decoded is logged (position only), counted, and set
   * aside with its reason (store() does it before committing its offset); nothing is stored for it.
   */
  private decode(message: ConsumedMessage, partition: number): Pick<BufferedMessage, 'decoded' | 'poison'> {
    let reason: string;
    try {
      if (message.value === null) throw new Error('message has no value');
      return { decoded: decodeEvent(message.value) };
    } catch (err) {
      reason = errorMessage(err);
    }
    this.stats.poison++;
    this.options.metrics?.poison();
    this.options.logger.warn(
      { topic: this.options.topic, partition, offset: message.offset.toString(), bytes: message.value?.length ?? 0, reason },
      'setting aside an event message that cannot be decoded (poison message)',
    );
    return { decoded: null, poison: poisonMessage(this.options.topic, partition, message, reason) };
  }

  onGroupJoin(partitions: number[]): void {
    this.assigned = new Set(partitions);
    // After a (re)join the consumer reads every assigned partition again from its committed offset,
    // so what is buffered would arrive twice: drop it. A batch being inserted goes on (a replay of it
    // has the same token, or collapses in ClickHouse); offsets of partitions no longer ours are
    // never committed.
    let dropped = 0;
    for (const q of this.queues.values()) {
      dropped += q.buffer.length;
      q.buffer = [];
      this.clearTimer(q);
      if (!this.assigned.has(q.partition)) q.pendingCommit = null;
    }
    this.stats.buffered = 0;
    this.notifyRoom();
    this.options.logger.info({ partitions, dropped }, 'joined the consumer group');
  }

  // ---- batching -----------------------------------------------------------------------------

  private flushAllowed(): boolean {
    return this.state === 'running' || (this.state === 'draining' && Date.now() < this.drainDeadline);
  }

  /** The buffer holds a whole batch: batchRows messages, or everything up to the grid's end. */
  private complete(q: PartitionQueue): boolean {
    const tail = q.buffer[q.buffer.length - 1];
    return tail !== undefined && this.completeAt(q, tail.offset);
  }

  /** complete(), given the offset of the buffer's last message. */
  private completeAt(q: PartitionQueue, lastOffset: bigint): boolean {
    const head = q.buffer[0];
    if (head === undefined) return false;
    return q.buffer.length >= this.options.batchRows || lastOffset + 1n >= gridEnd(head.offset, this.options.batchRows);
  }

  private due(q: PartitionQueue): boolean {
    const head = q.buffer[0];
    if (head === undefined || !this.flushAllowed()) return false;
    return this.complete(q) || this.state === 'draining' || Date.now() >= head.arrivedAt + this.options.batchMs;
  }

  private clearTimer(q: PartitionQueue): void {
    if (q.timer !== null) clearTimeout(q.timer);
    q.timer = null;
  }

  /** Starts a partition's flush when one is due, or arms its timer for its oldest message. */
  private schedule(q: PartitionQueue): void {
    if (q.flushing !== null) return;
    if (this.due(q)) {
      this.clearTimer(q);
      this.runAsFlush(q, () => this.flushLoop(q));
      return;
    }
    const head = q.buffer[0];
    if (head !== undefined && q.timer === null && this.flushAllowed()) {
      const wait = Math.max(0, head.arrivedAt + this.options.batchMs - Date.now());
      q.timer = setTimeout(() => {
        q.timer = null;
        this.schedule(q);
      }, wait);
    }
  }

  /** Takes the next batch from the front of a partition's buffer: up to the grid's end. */
  private take(q: PartitionQueue): BufferedMessage[] {
    const end = gridEnd(q.buffer[0]!.offset, this.options.batchRows);
    let n = 0;
    while (n < q.buffer.length && n < this.options.batchRows && q.buffer[n]!.offset < end) n++;
    return q.buffer.splice(0, n);
  }

  private async flushLoop(q: PartitionQueue): Promise<void> {
    while (this.due(q)) {
      const messages = this.take(q);
      this.stats.buffered -= messages.length;
      this.notifyRoom();
      try {
        await this.store(q, messages);
      } catch (err) {
        if (!(err instanceof RetryAborted)) this.options.logger.error({ err: errorMessage(err) }, 'batch failed');
        return;
      }
    }
  }

  private giveUp = (): boolean => !this.flushAllowed();

  /** Insert (retried) → last reports (retried) → commit. Throws RetryAborted on abort / drain timeout. */
  private async store(q: PartitionQueue, messages: BufferedMessage[]): Promise<void> {
    const { logger, metrics, backoff } = this.options;
    await insertInPieces(messages, {
      writer: this.writer,
      tokenOf: (piece) => batchToken(this.options.topic, q.partition, piece),
      backoff,
      shouldStop: this.giveUp,
      wake: this.wake,
      onFailure: (err, { attempt, delayMs, rows, split }) => {
        this.stats.insertRetries++;
        this.insertFailures.failed(errorMessage(err), { attempt, delayMs, rows, ...(split ? { split: 'timed out: inserting it in two halves' } : {}) });
      },
      onStored: (rows, seconds) => {
        this.insertFailures.ok();
        this.stats.insertedRows += rows;
        this.stats.batches++;
        this.stats.lastBatchSize = rows;
        this.stats.maxBatchSize = Math.max(this.stats.maxBatchSize, rows);
        metrics?.batchSize(rows);
        metrics?.insertSeconds(seconds);
      },
    });

    const updates = latestReports(messages);
    if (updates.length > 0) {
      const timeoutMs = this.options.lastReportTimeoutMs;
      await retry(() => withTimeout(this.options.lastReports.record(updates), timeoutMs, 'last-report update'), {
        backoff,
        shouldStop: this.giveUp,
        wake: this.wake,
        onFailure: (err, attempt, delayMs) => {
          this.stats.lastReportRetries++;
          this.reportFailures.failed(errorMessage(err), { attempt, delayMs, vehicles: updates.length });
        },
      });
      this.reportFailures.ok();
    }

    const poison = messages.flatMap((m) => (m.poison === undefined ? [] : [m.poison]));
    const sink = this.options.poison;
    if (poison.length > 0 && sink !== undefined) {
      await retry(() => sink.add(poison), {
        backoff,
        shouldStop: this.giveUp,
        wake: this.wake,
        onFailure: (err, attempt, delayMs) => logger.warn({ err: errorMessage(err), attempt, delayMs, messages: poison.length }, 'setting poison messages aside failed; retrying'),
      });
    }

    if (this.state === 'aborted') throw new RetryAborted(null);
    await this.offsets.stored(q, messages[messages.length - 1]!.offset + 1n);
  }

  /** Runs `work` as the partition's one flush in flight (unless one is in flight), then schedules the next. */
  private runAsFlush(q: PartitionQueue, work: () => Promise<void>): boolean {
    if (q.flushing !== null) return false;
    this.stats.inFlight++;
    q.flushing = work().finally(() => {
      this.stats.inFlight--;
      q.flushing = null;
      this.schedule(q);
    });
    return true;
  }

  // ---- shutdown -----------------------------------------------------------------------------

  /** Stores what is buffered, batch by batch, until empty or `drainMs` passed; returns what was left. */
  async drain(drainMs: number): Promise<number> {
    if (this.state !== 'running') return this.stats.buffered;
    this.state = 'draining';
    this.drainDeadline = Date.now() + drainMs;
    const deadline = setTimeout(() => this.wakeUp(), drainMs);
    for (const q of this.queues.values()) this.clearTimer(q);
    this.notifyRoom();
    for (;;) {
      for (const q of this.queues.values()) this.schedule(q);
      const flushing = [...this.queues.values()].flatMap((q) => (q.flushing === null ? [] : [q.flushing]));
      if (flushing.length === 0) break;
      await Promise.race([Promise.all(flushing), this.wake.promise]);
      // The wake promise stays resolved once woken: stop looping on it (deadline, or abort()).
      if (Date.now() >= this.drainDeadline || !this.isDraining()) break;
    }
    clearTimeout(deadline);
    if (this.isDraining()) this.state = 'stopped';
    return this.stats.buffered;
  }

  /** Like a crash: drop what is buffered, stop retrying, commit nothing more. */
  abort(): void {
    this.state = 'aborted';
    this.wakeUp();
    this.notifyRoom();
    for (const q of this.queues.values()) {
      this.clearTimer(q);
      this.offsets.cancelRetry(q);
      q.buffer = [];
    }
    this.stats.buffered = 0;
  }
}
