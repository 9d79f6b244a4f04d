import { Kafka, logLevel, type Admin, type Consumer, type EachBatchPayload, type KafkaMessage, type LogEntry } from 'kafkajs';
import type { Config } from '../shared/config.js';
import type { LastReportSink } from '../shared/backends/types.js';
import { decodeEvent } from '../shared/events/wire.js';
import { createClickHouseClient, type ClickHouseClient, type ClickHouseOptions } from '../shared/backends/clickhouse/client.js';
import { migrate } from '../shared/backends/clickhouse/schema.js';
import { toRow } from '../shared/backends/clickhouse/rows.js';
import { ClickHouseEventWriter, type InsertRow } from '../shared/backends/clickhouse/writer.js';
import { DEFAULT_BACKOFF, retry, RetryAborted, sleep, type BackoffOptions } from './backoff.js';
import { latestReports, offsetsToCommit, type BufferedMessage } from './batch.js';

/** pino-compatible: `logger.info({ ...fields }, 'message')`. */
export interface WorkerLogger {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export interface WorkerMetrics {
  /** Rows of each successful insert. */
  batchSize(rows: number): void;
  /** Duration of each successful insert (the last attempt). */
  insertSeconds(seconds: number): void;
  /** Group lag of a partition: high watermark − committed offset, measured periodically. */
  lag(partition: number, lag: number): void;
  /** One message that could not be decoded, skipped. */
  poison(): void;
}

export interface WorkerOptions {
  brokers: string[];
  topic: string;
  groupId: string;
  clientId: string;
  clickhouse: ClickHouseOptions;
  /** Insert when this many rows are buffered ... */
  batchRows: number;
  /** ... or when the oldest buffered row is this old, whichever first. */
  batchMs: number;
  /** Told the latest event time per provider+Dominio of each stored batch (FechaUltimoReporte). */
  lastReports: LastReportSink;
  logger: WorkerLogger;
  metrics?: WorkerMetrics;
  /** Messages held in memory at most; past it fetching pauses. Default 2 × batchRows. */
  maxBufferedRows?: number;
  /** Retry delays of inserts and last-report updates. Default 100 ms doubling to 5 s. */
  backoff?: BackoffOptions;
  /** How often consumer lag is measured. Default 10 s. */
  lagIntervalMs?: number;
  /** Longest `stop()` spends flushing before it gives up (the rest is re-read later). Default 30 s. */
  drainTimeoutMs?: number;
  /** Longest startup waits for ClickHouse to apply the migrations. Default 60 s. */
  startTimeoutMs?: number;
  /** One attempt of `lastReports.record` longer than this counts as failed. Default 10 s. */
  lastReportTimeoutMs?: number;
  /** Kafka consumer session timeout. Default 30 s. */
  sessionTimeoutMs?: number;
  /** Called when the consumer stopped for good (not restartable): exit and let the supervisor restart. */
  onFatal?: (error: Error) => void;
}

export interface WorkerStats {
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
  /** Group lag per partition at the last measurement. */
  lag: Record<number, number>;
  /** The last offset this worker committed per partition (the next offset to read). */
  committed: Record<number, string>;
}

export interface Worker {
  readonly stats: Readonly<WorkerStats>;
  /** SIGTERM: stop fetching, insert and commit what is buffered (within drainTimeoutMs), disconnect. */
  stop(): Promise<void>;
  /** Like a crash: disconnect at once, without inserting or committing what is buffered. */
  abort(): Promise<void>;
}

type State = 'running' | 'draining' | 'stopped' | 'aborted';

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** kafkajs log lines (warnings and errors only) into the worker's logger. */
function kafkaLogCreator(logger: WorkerLogger) {
  return () =>
    ({ namespace, level, log }: LogEntry): void => {
      const { message, timestamp: _timestamp, ...extra } = log;
      const fields = { ...extra, namespace, source: 'kafkajs' };
      if (level <= logLevel.ERROR) logger.error(fields, message);
      else if (level === logLevel.WARN) logger.warn(fields, message);
      else logger.info(fields, message);
    };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

class KafkaClickHouseWorker implements Worker {
  readonly stats: WorkerStats = {
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
    lag: {},
    committed: {},
  };

  private state: State = 'running';
  private buffer: BufferedMessage[] = [];
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lagTimer: NodeJS.Timeout | null = null;
  private drainDeadline = Infinity;
  /** Offsets stored but not yet committed (a failed commit is retried with the next batch). */
  private readonly pendingCommits = new Map<number, bigint>();
  private assigned = new Set<number>();
  private readonly maxBuffered: number;
  private room: { promise: Promise<void>; resolve: () => void } | null = null;
  private readonly backoff: BackoffOptions;
  private wakeUp!: () => void;
  private readonly wake: { promise: Promise<void> };
  private stopping: Promise<void> | null = null;

  constructor(
    private readonly options: WorkerOptions,
    private readonly client: ClickHouseClient,
    private readonly writer: ClickHouseEventWriter,
    private readonly consumer: Consumer,
    private readonly admin: Admin,
  ) {
    this.maxBuffered = Math.max(options.batchRows, options.maxBufferedRows ?? 2 * options.batchRows);
    this.backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.wake = { promise: new Promise<void>((resolve) => (this.wakeUp = resolve)) };
  }

  async run(): Promise<void> {
    const { consumer, options } = this;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => this.onGroupJoin(payload.memberAssignment[options.topic] ?? []));
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (payload.restart) {
        options.logger.warn({ err: payload.error.message }, 'Kafka consumer crashed; kafkajs restarts it');
      } else if (this.state === 'running') {
        options.logger.error({ err: payload.error.message }, 'Kafka consumer stopped for good');
        (options.onFatal ?? (() => undefined))(payload.error);
      }
    });
    await consumer.connect();
    await consumer.subscribe({ topic: options.topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: async (payload) => this.onBatch(payload),
    });
    const interval = options.lagIntervalMs ?? 10_000;
    this.lagTimer = setInterval(() => void this.measureLag(), interval);
    this.lagTimer.unref();
    void this.measureLag();
  }

  // ---- reading ------------------------------------------------------------------------------

  private async onBatch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    for (const message of batch.messages) {
      if (this.buffer.length >= this.maxBuffered && !(await this.waitForRoom(heartbeat, isStale))) break;
      if (!isRunning() || isStale() || this.state !== 'running') break;
      this.buffer.push({
        partition: batch.partition,
        offset: BigInt(message.offset),
        arrivedAt: Date.now(),
        decoded: this.decode(message, batch.partition),
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
      while (this.buffer.length >= this.maxBuffered) {
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

  /** Poison policy: a message that cannot be decoded is logged (position only), counted, skipped. */
  private decode(message: KafkaMessage, partition: number): BufferedMessage['decoded'] {
    let reason: string;
    try {
      if (message.value === null) throw new Error('message has no value');
      return decodeEvent(message.value);
    } catch (err) {
      reason = errorText(err);
    }
    this.stats.poison++;
    this.options.metrics?.poison();
    this.options.logger.warn(
      { topic: this.options.topic, partition, offset: message.offset, bytes: message.value?.length ?? 0, reason },
      'skipping an event message that cannot be decoded (poison message)',
    );
    return null;
  }

  private onGroupJoin(partitions: number[]): void {
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
    return (
      this.buffer.length >= this.options.batchRows || this.state === 'draining' || Date.now() >= head.arrivedAt + this.options.batchMs
    );
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
    const { logger, metrics } = this.options;
    const storedAt = Date.now();
    const rows: InsertRow[] = [];
    for (const m of messages) {
      if (m.decoded !== null) {
        rows.push({ row: toRow(m.decoded.id, m.decoded.event, storedAt), eventTimeMs: m.decoded.event.eventTime.epochMs });
      }
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
          backoff: this.backoff,
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
      const timeoutMs = this.options.lastReportTimeoutMs ?? 10_000;
      await retry(() => withTimeout(this.options.lastReports.record(updates), timeoutMs, 'last-report update'), {
        backoff: this.backoff,
        shouldStop: this.giveUp,
        wake: this.wake,
        onFailure: (err, attempt, delayMs) => {
          this.stats.lastReportRetries++;
          logger.warn({ err: errorText(err), attempt, delayMs, vehicles: updates.length }, 'last-report update failed; retrying');
        },
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
      await this.consumer.commitOffsets(
        entries.map(([partition, offset]) => ({ topic: this.options.topic, partition, offset: offset.toString() })),
      );
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

  // ---- lag ----------------------------------------------------------------------------------

  private async measureLag(): Promise<void> {
    const { topic, groupId, metrics } = this.options;
    try {
      const [high, groups] = await Promise.all([this.admin.fetchTopicOffsets(topic), this.admin.fetchOffsets({ groupId, topics: [topic] })]);
      const committed = new Map<number, string>();
      for (const t of groups) if (t.topic === topic) for (const p of t.partitions) committed.set(p.partition, p.offset);
      const lag: Record<number, number> = {};
      for (const p of high) {
        const c = committed.get(p.partition);
        const from = c === undefined || c === '-1' ? Number(p.low) : Number(c);
        lag[p.partition] = Math.max(0, Number(p.high) - from);
        metrics?.lag(p.partition, lag[p.partition]!);
      }
      this.stats.lag = lag;
    } catch (err) {
      this.options.logger.warn({ err: errorText(err) }, 'could not measure consumer lag');
    }
  }

  // ---- shutdown -----------------------------------------------------------------------------

  stop(): Promise<void> {
    this.stopping ??= this.drain();
    return this.stopping;
  }

  private async drain(): Promise<void> {
    if (this.state !== 'running') return;
    const drainMs = this.options.drainTimeoutMs ?? 30_000;
    this.state = 'draining';
    this.drainDeadline = Date.now() + drainMs;
    const deadline = setTimeout(() => this.wakeUp(), drainMs);
    this.stopTimers();
    this.notifyRoom();
    try {
      this.consumer.pause([{ topic: this.options.topic }]);
    } catch {
      // not running: nothing to pause
    }
    // Flush everything buffered, batch by batch, until empty or past the deadline.
    for (;;) {
      this.schedule();
      const flushing = this.flushing;
      if (flushing === null) break;
      await Promise.race([flushing, this.wake.promise]);
      if (Date.now() >= this.drainDeadline) break;
    }
    clearTimeout(deadline);
    const left = this.buffer.length;
    if (left > 0) this.options.logger.warn({ messages: left }, 'stopped before storing every buffered message; they are read again on restart');
    this.state = 'stopped';
    await this.close();
  }

  async abort(): Promise<void> {
    if (this.state === 'stopped' || this.state === 'aborted') return;
    this.state = 'aborted';
    this.wakeUp();
    this.notifyRoom();
    this.stopTimers();
    this.buffer = [];
    this.stats.buffered = 0;
    await this.close();
  }

  private stopTimers(): void {
    this.clearTimer();
    if (this.lagTimer !== null) clearInterval(this.lagTimer);
    this.lagTimer = null;
  }

  private async close(): Promise<void> {
    const results = await Promise.allSettled([this.consumer.disconnect(), this.admin.disconnect()]);
    await this.client.close().catch(() => undefined);
    for (const r of results) if (r.status === 'rejected') this.options.logger.warn({ err: errorText(r.reason) }, 'error while disconnecting');
  }
}

/**
 * Applies the ClickHouse migrations (waiting up to startTimeoutMs for ClickHouse), then joins the
 * consumer group and starts storing events. Resolves once the group is joined.
 */
export async function startWorker(options: WorkerOptions): Promise<Worker> {
  if (!(options.batchRows >= 1) || !(options.batchMs >= 1)) throw new Error('batchRows and batchMs must be at least 1');
  const client = createClickHouseClient(options.clickhouse);
  const startDeadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  try {
    const result = await retry(() => migrate(client, options.clickhouse.database), {
      backoff: options.backoff ?? DEFAULT_BACKOFF,
      shouldStop: () => Date.now() > startDeadline,
      onFailure: (err, attempt) => options.logger.warn({ err: errorText(err), attempt }, 'ClickHouse not ready for migrations; retrying'),
    });
    options.logger.info({ database: options.clickhouse.database, applied: result.applied, version: result.current }, 'ClickHouse schema ready');
  } catch (err) {
    await client.close().catch(() => undefined);
    throw err instanceof RetryAborted ? new Error(`ClickHouse migrations failed: ${errorText(err.lastError)}`) : err;
  }

  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    logLevel: logLevel.WARN,
    logCreator: kafkaLogCreator(options.logger),
  });
  const consumer = kafka.consumer({
    groupId: options.groupId,
    sessionTimeout: options.sessionTimeoutMs ?? 30_000,
    heartbeatInterval: 3_000,
    // How long a fetch waits for data when the topic is idle; also bounds how long stop() waits
    // for the fetch in flight.
    maxWaitTimeInMs: 1_000,
    allowAutoTopicCreation: true,
  });
  const admin = kafka.admin();
  const worker = new KafkaClickHouseWorker(options, client, new ClickHouseEventWriter(client, options.clickhouse.database), consumer, admin);
  try {
    await admin.connect();
    await worker.run();
  } catch (err) {
    await worker.abort().catch(() => undefined);
    throw err;
  }
  return worker;
}

/** WorkerOptions from the service configuration (distributed mode needs Kafka and ClickHouse). */
export function workerOptionsFromConfig(
  config: Config,
  deps: Pick<WorkerOptions, 'lastReports' | 'logger' | 'metrics' | 'onFatal'>,
): WorkerOptions {
  if (config.kafkaBrokers === null) throw new Error('KAFKA_BROKERS is required by the worker');
  if (config.clickhouseUrl === null) throw new Error('CLICKHOUSE_URL is required by the worker');
  return {
    brokers: config.kafkaBrokers,
    topic: config.kafkaTopic,
    groupId: config.kafkaGroupId,
    clientId: `${config.kafkaClientId}-worker`,
    clickhouse: {
      url: config.clickhouseUrl,
      database: config.clickhouseDatabase,
      username: config.clickhouseUser,
      password: config.clickhousePassword,
    },
    batchRows: config.workerBatchRows,
    batchMs: config.workerBatchMs,
    ...deps,
  };
}
