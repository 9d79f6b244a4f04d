import type { EachBatchPayload, KafkaMessage } from 'kafkajs';
import { withTimeout } from '../shared/util/async.js';
import { decodeEvent } from '../shared/events/wire.js';
import type { ClickHouseEventWriter } from '../shared/backends/clickhouse/writer.js';
import { retry, RetryAborted, sleep } from './backoff.js';
import { batchToken, gridEnd, latestReports, poisonMessage, type BufferedMessage } from './batch.js';
import { errorText } from './log.js';

export type { LoaderStats, PoisonSink } from './loader-types.js';
import type { LoaderOptions, LoaderStats } from './loader-types.js';

type State = 'running' | 'draining' | 'stopped' | 'aborted';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  return { promise: new Promise<void>((r) => (resolve = r)), resolve };
}

/** One partition's messages waiting for insert, and its insert in flight. */
interface PartitionQueue {
  partition: number;
  buffer: BufferedMessage[];
  flushing: Promise<void> | null;
  timer: NodeJS.Timeout | null;
  /** The stored offset not yet committed (a failed commit is retried with the next batch). */
  pendingCommit: bigint | null;
}

/**
 * Kafka messages → ClickHouse rows: buffers what the consumer reads per partition, inserts each
 * partition's messages in batches (batchRows, cut on a fixed grid of offsets, or batchMs, whichever
 * first), records last reports, then commits that partition's offsets. Partitions insert in
 * parallel, one insert in flight each, so a slow insert of one does not hold the others and order
 * within a partition is kept. A batch is retried with backoff until stored; offsets move only
 * after that, so nothing is ever committed that is not in ClickHouse. Memory is bounded by
 * maxBuffered (fetching pauses past it).
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

  constructor(
    private readonly options: LoaderOptions,
    private readonly writer: ClickHouseEventWriter,
  ) {
    this.wake = { promise: new Promise<void>((resolve) => (this.wakeUp = resolve)) };
  }

  get running(): boolean {
    return this.state === 'running';
  }

  /** A method, not an inline comparison: abort() changes the state while drain() awaits. */
  private isDraining(): boolean {
    return this.state === 'draining';
  }

  private queue(partition: number): PartitionQueue {
    let q = this.queues.get(partition);
    if (q === undefined) this.queues.set(partition, (q = { partition, buffer: [], flushing: null, timer: null, pendingCommit: null }));
    return q;
  }

  // ---- reading ------------------------------------------------------------------------------

  // eslint-disable-next-line @typescript-eslint/unbound-method -- kafkajs passes closures, not methods that need `this`
  async onBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const q = this.queue(batch.partition);
    // Whether to go on is asked again only after an await: nothing can change it in between, and
    // kafkajs' isStale() and resolveOffset() cost more per call than the rest of a message's
    // handling here (a JSON key, a 64-bit parse).
    let proceed = isRunning() && !isStale() && this.state === 'running';
    let last: string | null = null;
    let arrivedAt = Date.now();
    try {
      for (const message of batch.messages) {
        if (!proceed) break;
        if (this.stats.buffered >= this.options.maxBuffered) {
          proceed = (await this.waitForRoom(heartbeat, isStale)) && isRunning() && !isStale() && this.state === 'running';
          if (!proceed) break;
          arrivedAt = Date.now();
        }
        const offset = BigInt(message.offset);
        q.buffer.push({ partition: batch.partition, offset, arrivedAt, timestamp: message.timestamp, ...this.decode(message, batch.partition) });
        this.stats.buffered++;
        last = message.offset;
        if (q.buffer.length === 1 || this.completeAt(q, offset)) this.schedule(q);
      }
    } finally {
      // Moves kafkajs' fetch position only (once, to the last message taken); the group's
      // committed offset moves after the insert.
      if (last !== null) resolveOffset(last);
    }
    this.schedule(q);
  }

  /**
   * Backpressure: with maxBuffered messages in memory (ClickHouse slow or down), consumption
   * pauses here until a batch is taken for insert, heartbeating so the group keeps this member.
   * Unread messages stay in Kafka (lag grows). False when the worker is stopping or the batch is stale.
   */
  private async waitForRoom(heartbeat: () => Promise<void>, isStale: () => boolean): Promise<boolean> {
    this.stats.paused = true;
    try {
      while (this.stats.buffered >= this.options.maxBuffered) {
        if (this.state !== 'running' || isStale()) return false;
        this.room ??= deferred();
        await Promise.race([this.room.promise, sleep(1_000)]);
        // Throws when the group rebalances: kafkajs then rejoins (and onGroupJoin drops the buffer).
        await heartbeat();
      }
      return this.state === 'running';
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
  private decode(message: KafkaMessage, partition: number): Pick<BufferedMessage, 'decoded' | 'poison'> {
    let reason: string;
    try {
      if (message.value === null) throw new Error('message has no value');
      return { decoded: decodeEvent(message.value) };
    } catch (err) {
      reason = errorText(err);
    }
    this.stats.poison++;
    this.options.metrics?.poison();
    this.options.logger.warn(
      { topic: this.options.topic, partition, offset: message.offset, bytes: message.value?.length ?? 0, reason },
      'setting aside an event message that cannot be decoded (poison message)',
    );
    return { decoded: null, poison: poisonMessage(this.options.topic, partition, message, reason) };
  }

  onGroupJoin(partitions: number[]): void {
    this.assigned = new Set(partitions);
    // After a (re)join kafkajs reads every assigned partition again from its committed offset, so
    // what is buffered would arrive twice: drop it. A batch being inserted goes on (a replay of it
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
      this.stats.inFlight++;
      q.flushing = this.flushLoop(q).finally(() => {
        this.stats.inFlight--;
        q.flushing = null;
        this.schedule(q);
      });
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
        if (!(err instanceof RetryAborted)) this.options.logger.error({ err: errorText(err) }, 'batch failed');
        return;
      }
    }
  }

  private giveUp = (): boolean => !this.flushAllowed();

  /** Insert (retried) → last reports (retried) → commit. Throws RetryAborted on abort / drain timeout. */
  private async store(q: PartitionQueue, messages: BufferedMessage[]): Promise<void> {
    const { logger, metrics, backoff } = this.options;
    const decoded = messages.flatMap((m) => (m.decoded === null ? [] : [m.decoded]));
    if (decoded.length > 0) {
      const batch = this.writer.encode(decoded, Date.now());
      const token = batchToken(this.options.topic, q.partition, messages);
      let seconds = 0;
      await retry(
        async () => {
          const started = performance.now();
          await this.writer.insert(batch, token);
          seconds = (performance.now() - started) / 1000;
        },
        {
          backoff,
          shouldStop: this.giveUp,
          wake: this.wake,
          onFailure: (err, attempt, delayMs) => {
            this.stats.insertRetries++;
            logger.warn({ err: errorText(err), attempt, delayMs, rows: batch.rows }, 'ClickHouse insert failed; retrying (offsets not committed)');
          },
        },
      );
      this.stats.insertedRows += batch.rows;
      this.stats.batches++;
      this.stats.lastBatchSize = batch.rows;
      this.stats.maxBatchSize = Math.max(this.stats.maxBatchSize, batch.rows);
      metrics?.batchSize(batch.rows);
      metrics?.insertSeconds(seconds);
    }

    const updates = latestReports(messages);
    if (updates.length > 0) {
      const timeoutMs = this.options.lastReportTimeoutMs;
      await retry(() => withTimeout(this.options.lastReports.record(updates), timeoutMs, 'last-report update'), {
        backoff,
        shouldStop: this.giveUp,
        wake: this.wake,
        onFailure: (err, attempt, delayMs) => {
          this.stats.lastReportRetries++;
          logger.warn({ err: errorText(err), attempt, delayMs, vehicles: updates.length }, 'last-report update failed; retrying');
        },
      });
    }

    const poison = messages.flatMap((m) => (m.poison === undefined ? [] : [m.poison]));
    const sink = this.options.poison;
    if (poison.length > 0 && sink !== undefined) {
      await retry(() => sink.add(poison), {
        backoff,
        shouldStop: this.giveUp,
        wake: this.wake,
        onFailure: (err, attempt, delayMs) => logger.warn({ err: errorText(err), attempt, delayMs, messages: poison.length }, 'setting poison messages aside failed; retrying'),
      });
    }

    if (this.state === 'aborted') throw new RetryAborted(null);
    const next = messages[messages.length - 1]!.offset + 1n;
    if (q.pendingCommit === null || next > q.pendingCommit) q.pendingCommit = next;
    await this.commitPending(q);
  }

  /**
   * Commits a partition's stored offset while it is still assigned; a failure is retried with its
   * next batch. Only this partition's flush commits it, one at a time, so its committed offset
   * never goes back.
   */
  private async commitPending(q: PartitionQueue): Promise<void> {
    const offset = q.pendingCommit;
    if (offset === null) return;
    if (!this.assigned.has(q.partition)) {
      q.pendingCommit = null;
      return;
    }
    try {
      await this.options.commit([{ topic: this.options.topic, partition: q.partition, offset: offset.toString() }]);
    } catch (err) {
      this.stats.commitFailures++;
      this.options.logger.warn({ err: errorText(err), partitions: [q.partition] }, 'offset commit failed; retried with the next batch');
      return;
    }
    this.stats.commits++;
    this.stats.committed[q.partition] = offset.toString();
    if (q.pendingCommit === offset) q.pendingCommit = null;
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
      q.buffer = [];
    }
    this.stats.buffered = 0;
  }
}
