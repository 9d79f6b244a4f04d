/**
 * The worker as a process: the consumer (run.ts) plus Redis for last-report times, and optional
 * probes/metrics on ADMIN_HOST:ADMIN_PORT (/healthz, /readyz, /metrics).
 */
import { redisConfigured, type Config } from '../shared/config/index.js';
import type { Logger } from '../shared/runtime/logger.js';
import { Metrics } from '../shared/runtime/metrics.js';
import { startProbeServer, type ProbeServer, type Readiness } from '../shared/runtime/probes.js';
import { readinessGauge } from '../shared/runtime/readiness-metric.js';
import { serverTlsFromConfig } from '../shared/runtime/tls.js';
import { openRedisStores, redisStoresOptionsFromConfig } from '../shared/backends/redis/index.js';
import { redisAnswers } from '../shared/backends/redis/client.js';
import { kafkaAnswers, kafkaClientOptions } from '../shared/backends/kafka/client.js';
import type { Running } from '../shared/runtime/process.js';
import { StuckWatchdog } from '../shared/runtime/stuck-watchdog.js';
import { createWorker, workerOptionsFromConfig, type Worker, type WorkerOptions, type WorkerStatus } from './run.js';
import { clickhouseAnswers, type ClickHouseOptions } from '../shared/backends/clickhouse/client.js';

export interface WorkerProcess extends Running {
  /** http://host:port of the probes (null without them); ADMIN_PORT=0 picks a free port. */
  probesUrl: string | null;
}

/**
 * Opens Redis, applies the ClickHouse migrations and starts the consumer, then returns while the
 * consumer may still be waiting for Kafka or its topic (retriable: /readyz says why). The probes
 * listen from the start, so a worker that waits is visible. Only a non-retriable error ends the
 * process (exit 1, logged as such).
 */
export async function startWorkerProcess(
  config: Config,
  logger: Logger,
  metrics: Metrics,
  options: { probes: boolean; /** Another transport to ClickHouse than HTTP (bench/lib/chdb-worker.ts). */ clickhouseConnection?: ClickHouseOptions['connection'] },
): Promise<WorkerProcess> {
  if (!redisConfigured(config.redis)) throw new Error('The worker needs REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES (it records last-report times there).');
  let worker: Worker | null = null;
  let redisHealthy: () => Promise<boolean> = async () => false;
  const readiness: Readiness = async () => {
    if (worker === null) return { ready: false, reason: 'starting (ClickHouse migrations)' };
    const status: WorkerStatus = worker.status();
    if (!status.ready) return { ready: false, reason: status.reason ?? status.phase };
    if (!(await redisHealthy())) return { ready: false, reason: 'Redis does not answer' };
    return { ready: true };
  };
  readinessGauge(metrics, 'worker_ready', 'Whether the worker is ready (1) or not (0): the check its /readyz makes', async () => (await readiness()).ready);
  const probes: ProbeServer | null = options.probes
    ? await startProbeServer({ host: config.admin.host, port: config.admin.port, readiness, metrics: () => metrics.text(), logger: logger.child({ component: 'probes' }), tls: serverTlsFromConfig(config) })
    : null;
  const probesUrl = probes?.url ?? null;
  try {
    // The same options for the stores and the watchdog's probes (TLS files read once).
    const redisOptions = redisStoresOptionsFromConfig(config.redis, logger.child({ component: 'redis' }));
    const redis = await openRedisStores(redisOptions);
    redisHealthy = () => redis.healthy();
    let workerOptions: WorkerOptions;
    try {
      workerOptions = workerOptionsFromConfig(config, {
          lastReports: redis.lastReports,
          poison: redis.poison,
          logger: logger.child({ component: 'worker' }),
          metrics: {
            batchSize: (n) => metrics.workerBatchRows.observe(n),
            insertSeconds: (s) => metrics.workerInsertSeconds.observe(s),
            lag: (partition, lag) => metrics.workerLag.set({ partition: String(partition) }, lag),
            poison: () => metrics.workerPoison.inc(),
          },
          onFatal: (err) => {
            logger.fatal({ err }, 'the consumer stopped on a non-retriable error; exiting so the supervisor restarts the worker');
            process.exit(1);
          },
        });
      const connection = options.clickhouseConnection;
      if (connection !== undefined) workerOptions = { ...workerOptions, clickhouse: { ...workerOptions.clickhouse, connection } };
      worker = await createWorker(workerOptions);
    } catch (err) {
      await redis.close();
      throw err;
    }
    const running = worker;
    // The last resort of self-healing (shared/runtime/stuck-watchdog.ts): each client against a fresh
    // connection to its engine; stuck past STUCK_EXIT_SECONDS, the process stops and exits 1.
    const kafkaOptions = kafkaClientOptions(config.kafka);
    const clickhouse = workerOptions.clickhouse;
    const consuming = (): boolean => {
      const { ready, phase } = running.status();
      return ready || phase === 'failed' || phase === 'stopped';
    };
    const watchdog = new StuckWatchdog(
      [
        { name: 'Kafka consumer', engine: 'Kafka', healthy: consuming, engineAnswers: () => kafkaAnswers(kafkaOptions, config.kafka.topic) },
        {
          name: 'ClickHouse inserts',
          engine: 'ClickHouse',
          healthy: () => !running.failing().inserts,
          // Inserts that time out go in in pieces (insert-pieces.ts): failing and working by turns is not stuck.
          failingSince: () => running.insertsFailingSince(),
          engineAnswers: () => clickhouseAnswers(clickhouse),
        },
        { name: 'last-report updates', engine: 'Redis', healthy: () => !running.failing().lastReports, engineAnswers: () => redisAnswers(redisOptions) },
        { name: 'Redis client', engine: 'Redis', healthy: () => redis.healthy(), engineAnswers: () => redisAnswers(redisOptions) },
      ],
      { limitMs: config.health.stuckExitMs, logger },
    );
    watchdog.start();
    return {
      probesUrl,
      failed: watchdog.failed,
      reloadTls: () => Promise.resolve(probes?.reloadTls()),
      close: async () => {
        watchdog.stop();
        await probes?.close();
        await running.stop();
        await redis.close();
      },
    };
  } catch (err) {
    await probes?.close();
    throw err;
  }
}
