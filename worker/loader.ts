import type { EachBatchPayload, KafkaMessage } from 'kafkajs';
import { withTimeout } from '../shared/async.js';
import type { LastReportSink, PoisonStore } from '../shared/backends/types.js';
import { decodeEvent } from '../shared/events/wire.js';
import { toRow } from '../shared/backends/clickhouse/rows.js';
import type { ClickHouseEventWriter, InsertRow } from '../shared/backends/clickhouse/writer.js';
import { retry, RetryAborted, sleep, type BackoffOptions } from './backoff.js';
import { latestReports, offsetsToCommit, type BufferedMessage } from './batch.js';
import { errorText, type WorkerLogger } from './log.js';
import { poisonId } from '../shared/backends/redis/poison.js';

/** Where poison messages are set aside (RedisPoisonStore). */
export type PoisonSink = Pick<PoisonStore, 'add'>;

export interface LoaderOptions {
  topic: string;
  batchRows: number;
  batchMs: number;
  maxBuffered: number;
  backoff: BackoffOptions;
  lastReports: LastReportSink;
  poison?: PoisonSink;
  lastReportTimeoutMs: number;
  logger: WorkerLogger;
  metrics?: {
    batchSize(rows: number): void;
    insertSeconds(seconds: number): void;
    poison(): void;
  };
  /** Commits offsets on the running consumer; throws when it cannot (retried with the next batch). */
  commit(offsets: { topic: string; partition: number; offset: string }[]): Promise<void>;
}

/** The loader's share of WorkerStats. */
export interface LoaderStats {
  /** Rows inserted into ClickHouse (replays included). */
  insertedRows: number;
  /** Successful inserts. */
  batches: number;
  lastBatchSize: number;
  maxBatchSize: number;
  /** Failed insert attempts (each retried). */
  insertRetries: number;
  /** Failed `lastReports.record` attempts (each retried). */
  lastReportRetries: number;
  /** Poison messages skipped. */
  poison: number;
  /** Successful offset commits. */
  commits: number;
  commitFailures: number;
  /** Messages in memory, not yet being inserted. */
  buffered: number;
  /** True while fetching is paused because the buffer is full. */
  paused: boolean;
  /** The last offset this worker committed per partition (the next offset to read). */
  committed: Record<number, string>;
}

type State = 'running' | 'draining' | 'stopped' | 'aborted';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Kafka messages → ClickHouse rows: buffers what the consumer reads, inserts it in batches
 * (batchRows or batchMs, whichever first), records last reports, then commits the offsets. A batch
 * is retried with backoff until stored; offsets move only after that, so nothing is ever committed
 * that is not in ClickHouse. Memory is bounded by maxBuffered (fetching pauses past it).
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
    paused: false,
    committed: {},
  };

  private state: State = 'running';
  private buffer: BufferedMessage[] = [];
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private drainDeadline = Infinity;
  /** Offsets stored but not yet committed (a failed commit is retried with the next batch). */
  private readonly pendingCommits = new Map<number, bigint>();
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

  // ---- reading ------------------------------------------------------------------------------

  // eslint-disable-next-line @typescript-eslint/unbound-method -- kafkajs passes closures, not methods that need `this`
  async onBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    for (const message of batch.messages) {
      if (this.buffer.length >= this.options.maxBuffered && !(await this.waitForRoom(heartbeat, isStale))) break;
      if (!isRunning() || isStale() || this.state !== 'running') break;
      this.buffer.push({
        partition: batch.partition,
        offset: BigInt(message.offset),
        arrivedAt: Date.now(),
        ...this.decode(message, batch.partition),
      });
      // Moves kafkajs' fetch position only; the group's committed offset moves after the insert.
      resolveOffset(message.offset);
      if (this.buffer.length === 1 || this.buffer.length >= this.options.batchRows) {
        this.stats.buffered = this.buffer.length;
        this.schedule();
      }
    }
    this.stats.buffered = this.buffer.length;
    this.schedule();
  }

  /**
   * Backpressure: with maxBuffered messages in memory (ClickHouse slow or down), consumption
   * pauses here until a batch is taken for insert, heartbeating so the group keeps this member.
   * Unread messages stay in Kafka (lag grows). False when the worker is stopping or the batch is stale.
   */
  private async waitForRoom(heartbeat: () => Promise<void>, isStale: () => boolean): Promise<boolean> {
    this.stats.paused = true;
    try {
      while (this.buffer.length >= this.options.maxBuffered) {
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
    const poison = {
      id: poisonId(partition, message.offset),
      topic: this.options.topic,
      partition,
      offset: message.offset,
      key: message.key?.toString('utf8') ?? null,
      reason,
      at: Date.now(),
      value: message.value ?? Buffer.alloc(0),
      truncated: false,
    };
    return { decoded: null, poison };
  }

  onGroupJoin(partitions: number[]): void {
    this.assigned = new Set(partitions);
    // After a (re)join kafkajs reads every assigned partition again from its committed offset, so
    // what is buffered would arrive twice: drop it. A batch being inserted goes on (a replay of it
    // collapses in ClickHouse); offsets of partitions no longer ours are never committed.
    const dropped = this.buffer.length;
    this.buffer = [];
    this.stats.buffered = 0;
    for (const p of [...this.pendingCommits.keys()]) if (!this.assigned.has(p)) this.pendingCommits.delete(p);
    this.clearTimer();
    this.notifyRoom();
    this.options.logger.info({ partitions, dropped }, 'joined the consumer group');
  }

  // ---- batching -----------------------------------------------------------------------------

  private flushAllowed(): boolean {
    return this.state === 'running' || (this.state === 'draining' && Date.now() < this.drainDeadline);
  }

  private due(): boolean {
    const head = this.buffer[0];
    if (head === undefined || !this.flushAllowed()) return false;
    return this.buffer.length >= this.options.batchRows || this.state === 'draining' || Date.now() >= head.arrivedAt + this.options.batchMs;
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Starts a flush when one is due, or arms the timer for the oldest buffered message. */
  private schedule(): void {
    if (this.flushing !== null) return;
    if (this.due()) {
      this.clearTimer();
      this.flushing = this.flushLoop().finally(() => {
        this.flushing = null;
        this.schedule();
      });
      return;
    }
    const head = this.buffer[0];
    if (head !== undefined && this.timer === null && this.flushAllowed()) {
      const wait = Math.max(0, head.arrivedAt + this.options.batchMs - Date.now());
      this.timer = setTimeout(() => {
        this.timer = null;
        this.schedule();
      }, wait);
    }
  }

  private async flushLoop(): Promise<void> {
    while (this.due()) {
      const messages = this.buffer.splice(0, this.options.batchRows);
      this.stats.buffered = this.buffer.length;
      this.notifyRoom();
      try {
        await this.store(messages);
      } catch (err) {
        if (!(err instanceof RetryAborted)) this.options.logger.error({ err: errorText(err) }, 'batch failed');
        return;
      }
    }
  }

  private giveUp = (): boolean => !this.flushAllowed();

  /** Insert (retried) → last reports (retried) → commit. Throws RetryAborted on abort / drain timeout. */
  private async store(messages: BufferedMessage[]): Promise<void> {
    const { logger, metrics, backoff } = this.options;
    const storedAt = Date.now();
    const rows: InsertRow[] = [];
    for (const m of messages) {
      if (m.decoded !== null) rows.push({ row: toRow(m.decoded.id, m.decoded.event, storedAt), eventTimeMs: m.decoded.event.eventTime.epochMs });
    }
    if (rows.length > 0) {
      let seconds = 0;
      await retry(
        async () => {
          const started = performance.now();
          await this.writer.insert(rows);
          seconds = (performance.now() - started) / 1000;
        },
        {
          backoff,
          shouldStop: this.giveUp,
          wake: this.wake,
          onFailure: (err, attempt, delayMs) => {
            this.stats.insertRetries++;
            logger.warn({ err: errorText(err), attempt, delayMs, rows: rows.length }, 'ClickHouse insert failed; retrying (offsets not committed)');
          },
        },
      );
      this.stats.insertedRows += rows.length;
      this.stats.batches++;
      this.stats.lastBatchSize = rows.length;
      this.stats.maxBatchSize = Math.max(this.stats.maxBatchSize, rows.length);
      metrics?.batchSize(rows.length);
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
    for (const [partition, next] of offsetsToCommit(messages)) {
      const seen = this.pendingCommits.get(partition);
      if (seen === undefined || next > seen) this.pendingCommits.set(partition, next);
    }
    await this.commitPending();
  }

  /** Commits the stored offsets of partitions still assigned; a failure is retried with the next batch. */
  private async commitPending(): Promise<void> {
    for (const p of [...this.pendingCommits.keys()]) if (!this.assigned.has(p)) this.pendingCommits.delete(p);
    const entries = [...this.pendingCommits];
    if (entries.length === 0) return;
    try {
      await this.options.commit(entries.map(([partition, offset]) => ({ topic: this.options.topic, partition, offset: offset.toString() })));
    } catch (err) {
      this.stats.commitFailures++;
      this.options.logger.warn({ err: errorText(err), partitions: entries.map(([p]) => p) }, 'offset commit failed; retried with the next batch');
      return;
    }
    this.stats.commits++;
    for (const [partition, offset] of entries) {
      this.stats.committed[partition] = offset.toString();
      if (this.pendingCommits.get(partition) === offset) this.pendingCommits.delete(partition);
    }
  }

  // ---- shutdown -----------------------------------------------------------------------------

  /** Stores what is buffered, batch by batch, until empty or `drainMs` passed; returns what was left. */
  async drain(drainMs: number): Promise<number> {
    if (this.state !== 'running') return this.buffer.length;
    this.state = 'draining';
    this.drainDeadline = Date.now() + drainMs;
    const deadline = setTimeout(() => this.wakeUp(), drainMs);
    this.clearTimer();
    this.notifyRoom();
    for (;;) {
      this.schedule();
      const flushing = this.flushing;
      if (flushing === null) break;
      await Promise.race([flushing, this.wake.promise]);
      // The wake promise stays resolved once woken: stop looping on it (deadline, or abort()).
      if (Date.now() >= this.drainDeadline || !this.isDraining()) break;
    }
    clearTimeout(deadline);
    if (this.isDraining()) this.state = 'stopped';
    return this.buffer.length;
  }

  /** Like a crash: drop what is buffered, stop retrying, commit nothing more. */
  abort(): void {
    this.state = 'aborted';
    this.wakeUp();
    this.notifyRoom();
    this.clearTimer();
    this.buffer = [];
    this.stats.buffered = 0;
  }
}
