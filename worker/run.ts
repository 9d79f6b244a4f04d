import type { Config } from '../shared/config/index.js';
import type { LastReportSink } from '../shared/backends/scale-out-types.js';
import { kafkaSecurityFromConfig, type KafkaSecurity } from '../shared/backends/kafka/security.js';
import { clickHouseOptionsFromConfig, createClickHouseClient, isPermanentClickHouseError, LONG_STATEMENT_TIMEOUT_MS, plaintextOnTlsPort, type ClickHouseClient, type ClickHouseOptions } from '../shared/backends/clickhouse/client.js';
import { ensureSchema } from '../shared/backends/clickhouse/family.js';
import { ClickHouseEventWriter, type InsertFormat } from '../shared/backends/clickhouse/writer.js';
import { KafkaAdmin, type KafkaClientOptions } from '../shared/backends/kafka/client.js';
import { describeKafkaError } from '../shared/backends/kafka/errors.js';
import { DEFAULT_BACKOFF, retry, RetryAborted, type BackoffOptions } from './backoff.js';
import { ConsumerSupervisor, type ConsumerPhase } from './consumer.js';
import { LagMonitor } from './lag.js';
import { Loader, type LoaderStats, type PoisonSink } from './loader.js';
import { type WorkerLogger } from './log.js';
import { errorMessage } from '../shared/util/error-message.js';

export type { WorkerLogger } from './log.js';

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
  /** TLS and SASL of every connection (security.ts); default plaintext. */
  security?: KafkaSecurity;
  topic: string;
  groupId: string;
  clientId: string;
  /** Deadline of one Kafka request (KAFKA_REQUEST_TIMEOUT_MS). Default 5000 ms. */
  requestTimeoutMs?: number;
  /** Kafka connect deadline and TCP keep-alive (KAFKA_CONNECT_TIMEOUT_MS, KAFKA_KEEPALIVE_MS): client.ts defaults. */
  connectTimeoutMs?: number;
  keepAliveMs?: number;
  clickhouse: ClickHouseOptions;
  /** How rows are sent (default RowBinary; bench:worker compares the formats). */
  insertFormat?: InsertFormat;
  /** Days `events` and `arrivals` keep rows in the current schema (ClickHouse 24.8+); 0 keeps all. Default 0. */
  retentionDays?: number;
  /** Insert when this many rows are buffered ... */
  batchRows: number;
  /** ... or when the oldest buffered row is this old, whichever first. */
  batchMs: number;
  /** Told the latest event time per provider+Dominio of each stored batch (FechaUltimoReporte). */
  lastReports: LastReportSink;
  /** Where messages that cannot be loaded are set aside (before their offsets are committed); without it they are only logged and counted. */
  poison?: PoisonSink;
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
  /**
   * Longest startup waits for ClickHouse to apply the migrations. Default 60 s. (Kafka has no such
   * limit: the consumer waits for the broker and the topic for as long as it takes, see consumer.ts.)
   */
  startTimeoutMs?: number;
  /** One attempt of `lastReports.record` longer than this counts as failed. Default 10 s. */
  lastReportTimeoutMs?: number;
  /** Kafka consumer-group session timeout (WORKER_SESSION_TIMEOUT_MS). Default 10 s. */
  sessionTimeoutMs?: number;
  /**
   * Called when the worker stopped for good: a non-retriable Kafka error (authorization, invalid
   * configuration...). Retriable ones never get here: they are retried with backoff and reported
   * by status(). Exit and let the supervisor restart.
   */
  onFatal?: (error: Error) => void;
}

export interface WorkerStats extends LoaderStats {
  /** Group lag per partition at the last measurement. */
  lag: Record<number, number>;
}

/** Whether the worker is consuming, and why not (the worker's /readyz). */
export interface WorkerStatus {
  ready: boolean;
  phase: ConsumerPhase;
  /** null when ready. */
  reason: string | null;
}

export interface Worker {
  readonly stats: Readonly<WorkerStats>;
  status(): WorkerStatus;
  /** Inserts, or last-report updates, failing since their last success (the stuck watchdog). */
  failing(): { inserts: boolean; lastReports: boolean };
  /** When inserts started failing since the last success (epoch ms), null while they work. */
  insertsFailingSince(): number | null;
  /** Resolves at the first join of the consumer group; rejects when the worker fails for good first. */
  readonly joined: Promise<void>;
  /** SIGTERM: stop fetching, insert and commit what is buffered (within drainTimeoutMs), disconnect. */
  stop(): Promise<void>;
  /** Like a crash: disconnect at once, without inserting or committing what is buffered. */
  abort(): Promise<void>;
}
/**
 * The Kafka → ClickHouse worker: a supervised consumer (consumer.ts) feeding the loader
 * (loader.ts: batches, inserts, commits), plus lag measurement (lag.ts). This class wires them and
 * owns the shutdown order.
 */
class KafkaClickHouseWorker implements Worker {
  private readonly loader: Loader;
  private readonly consumer: ConsumerSupervisor;
  private readonly lag: LagMonitor;
  private stopping: Promise<void> | null = null;
  private closing: Promise<void> | null = null;
  private aborted = false;

  constructor(
    private readonly options: WorkerOptions,
    private readonly client: ClickHouseClient,
    writer: ClickHouseEventWriter,
    private readonly admin: KafkaAdmin,
    kafka: KafkaClientOptions,
  ) {
    const backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.loader = new Loader(
      {
        topic: options.topic,
        batchRows: options.batchRows,
        batchMs: options.batchMs,
        maxBuffered: Math.max(options.batchRows, options.maxBufferedRows ?? 2 * options.batchRows),
        backoff,
        lastReports: options.lastReports,
        ...(options.poison === undefined ? {} : { poison: options.poison }),
        lastReportTimeoutMs: options.lastReportTimeoutMs ?? 10_000,
        logger: options.logger,
        ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
        commit: (offsets) => this.consumer.commitOffsets(offsets),
      },
      writer,
    );
    this.consumer = new ConsumerSupervisor({
      kafka,
      admin,
      topic: options.topic,
      groupId: options.groupId,
      sessionTimeoutMs: options.sessionTimeoutMs ?? 10_000,
      backoff,
      logger: options.logger,
      onBatch: (partition, messages, current) => this.loader.onBatch(partition, messages, current),
      onGroupJoin: (partitions) => {
        this.loader.onGroupJoin(partitions);
        this.lag.start();
      },
      onFatal: (error) => {
        options.logger.error({ err: describeKafkaError(error) }, 'worker stopped: non-retriable Kafka error (retriable ones are retried, never fatal)');
        options.onFatal?.(error);
      },
    });
    const { metrics } = options;
    this.lag = new LagMonitor(admin, {
      topic: options.topic,
      groupId: options.groupId,
      intervalMs: options.lagIntervalMs ?? 10_000,
      logger: options.logger,
      ...(metrics === undefined ? {} : { report: (partition: number, lag: number) => metrics.lag(partition, lag) }),
    });
  }

  get stats(): Readonly<WorkerStats> {
    return { ...this.loader.stats, lag: this.lag.lag };
  }

  get joined(): Promise<void> {
    return this.consumer.joined;
  }

  failing(): { inserts: boolean; lastReports: boolean } {
    return { inserts: this.loader.insertsFailing, lastReports: this.loader.reportsFailing };
  }

  insertsFailingSince(): number | null {
    return this.loader.insertsFailingSince;
  }

  status(): WorkerStatus {
    const { phase, reason } = this.consumer.current;
    if (phase === 'consuming' && !this.loader.running) return { ready: false, phase: 'stopped', reason: 'stopping' };
    return { ready: phase === 'consuming', phase, reason };
  }

  start(): void {
    this.consumer.start();
  }

  stop(): Promise<void> {
    this.stopping ??= this.drain();
    return this.stopping;
  }

  private async drain(): Promise<void> {
    if (this.aborted) return;
    this.lag.stop();
    this.consumer.pause();
    const left = await this.loader.drain(this.options.drainTimeoutMs ?? 30_000);
    if (left > 0) this.options.logger.warn({ messages: left }, 'stopped before storing every buffered message; they are read again on restart');
    await this.close();
  }

  /** Also cuts a stop() that is still draining short. */
  async abort(): Promise<void> {
    if (this.aborted || this.closing !== null) return;
    this.aborted = true;
    this.loader.abort();
    this.lag.stop();
    await this.close();
  }

  private close(): Promise<void> {
    this.closing ??= (async () => {
      await this.consumer.stop();
      await this.admin.close();
      await this.client.close().catch(() => undefined);
    })();
    return this.closing;
  }
}

/**
 * Applies the ClickHouse migrations (waiting up to startTimeoutMs for ClickHouse; failing after
 * that), then starts consuming in the background and returns: the consumer waits for Kafka and the
 * topic as long as needed, and status() tells where it is.
 */
export async function createWorker(options: WorkerOptions): Promise<Worker> {
  if (!(options.batchRows >= 1) || !(options.batchMs >= 1)) throw new Error('batchRows and batchMs must be at least 1');
  const client = createClickHouseClient(options.clickhouse);
  // Another transport (chdb's in-process engine) has no request timeout to outlast, and is shared: closing a second client would close it.
  const longStatements = options.clickhouse.connection === undefined ? createClickHouseClient({ ...options.clickhouse, requestTimeoutMs: LONG_STATEMENT_TIMEOUT_MS }) : client;
  const closeLong = (): Promise<void> => (longStatements === client ? Promise.resolve() : longStatements.close().catch(() => undefined));
  const startDeadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  const database = options.clickhouse.database;
  let writer: ClickHouseEventWriter;
  const refused = { permanent: false, lastText: '' };
  try {
    const url = options.clickhouse.url;
    const migrate = (): ReturnType<typeof ensureSchema> =>
      ensureSchema(client, database, { retentionDays: options.retentionDays ?? 0, longStatements, log: (fields, message, level = 'info') => options.logger[level](fields, message) }).catch(async (err: unknown) => {
        throw (await plaintextOnTlsPort(url, err)) ?? err;
      });
    const schema = await retry(migrate, {
      backoff: options.backoff ?? DEFAULT_BACKOFF,
      // A refused password or certificate does not get better by waiting: stop at once.
      shouldStop: () => refused.permanent || Date.now() > startDeadline,
      onFailure: (err, attempt) => {
        refused.permanent = isPermanentClickHouseError(err);
        // Once per new reason, then every tenth attempt: a long wait is a few lines, not a loop.
        const text = errorMessage(err);
        if (!refused.permanent && (text !== refused.lastText || attempt % 10 === 0)) {
          options.logger.warn({ err: text, attempt }, 'ClickHouse not ready for migrations; retrying');
        }
        refused.lastText = text;
      },
    });
    options.logger.info(
      { database, server: schema.server.text, schema: schema.family, exactlyOnce: schema.exactlyOnce, applied: schema.applied, version: schema.current },
      'ClickHouse schema ready',
    );
    if (schema.exactlyOnce && schema.family === 'legacy') {
      options.logger.warn({ database }, 'this database holds the 18.16 schema on a current ClickHouse: kept as is (docs/analytics.md tells how to move it to the current schema)');
    }
    await closeLong();
    writer = new ClickHouseEventWriter(client, database, {
      family: schema.family,
      exactlyOnce: schema.exactlyOnce,
      // Another transport than HTTP is chdb's in-process engine: RowBinary goes to it as a file.
      binaryBodies: options.clickhouse.connection === undefined ? 'request' : 'file',
      ...(options.insertFormat === undefined ? {} : { format: options.insertFormat }),
    });
  } catch (err) {
    await closeLong();
    await client.close().catch(() => undefined);
    throw err instanceof RetryAborted ? new Error(`ClickHouse at ${describeUrl(options.clickhouse.url)} ${refused.permanent ? 'refused the worker' : 'migrations failed'}: ${errorMessage(err.lastError)}`) : err;
  }
  const kafka: KafkaClientOptions = {
    brokers: options.brokers,
    clientId: options.clientId,
    ...(options.security === undefined ? {} : { security: options.security }),
    requestTimeoutMs: options.requestTimeoutMs ?? 5000,
    ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
    ...(options.keepAliveMs === undefined ? {} : { keepAliveMs: options.keepAliveMs }),
  };
  const admin = await KafkaAdmin.open(kafka);
  const worker = new KafkaClickHouseWorker(options, client, writer, admin, kafka);
  worker.start();
  return worker;
}

/** scheme://host:port of a URL, without credentials, for messages. */
function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'the configured URL';
  }
}

/** createWorker, then waits for the first join of the consumer group (tests, tools). */
export async function startWorker(options: WorkerOptions): Promise<Worker> {
  const worker = await createWorker(options);
  try {
    await worker.joined;
  } catch (err) {
    await worker.abort().catch(() => undefined);
    throw err;
  }
  return worker;
}

/** WorkerOptions from the service configuration (scale-out mode needs Kafka and ClickHouse). */
export function workerOptionsFromConfig(
  config: Config,
  deps: Pick<WorkerOptions, 'lastReports' | 'poison' | 'logger' | 'metrics' | 'onFatal'>,
): WorkerOptions {
  if (config.kafka.brokers === null) throw new Error('KAFKA_BROKERS is required by the worker');
  if (config.clickhouse.url === null) throw new Error('CLICKHOUSE_URL is required by the worker');
  return {
    brokers: config.kafka.brokers,
    security: kafkaSecurityFromConfig(config.kafka),
    topic: config.kafka.topic,
    groupId: config.kafka.groupId,
    clientId: `${config.kafka.clientId}-worker`,
    requestTimeoutMs: config.kafka.requestTimeoutMs,
    connectTimeoutMs: config.kafka.connectTimeoutMs,
    keepAliveMs: config.kafka.keepAliveMs,
    clickhouse: { ...clickHouseOptionsFromConfig({ ...config.clickhouse, url: config.clickhouse.url }), requestTimeoutMs: config.clickhouse.insertTimeoutMs },
    batchRows: config.worker.batchRows,
    batchMs: config.worker.batchMs,
    sessionTimeoutMs: config.worker.sessionTimeoutMs,
    retentionDays: config.clickhouse.retentionDays,
    ...deps,
  };
}
