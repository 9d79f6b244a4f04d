/**
 * The worker as a process: the consumer (run.ts) plus Redis for last-report times, and optional
 * probes/metrics on ADMIN_HOST:ADMIN_PORT (/healthz, /readyz, /metrics).
 */
import { redisConfigured, type Config } from '../shared/config/index.js';
import type { Logger } from '../shared/logger.js';
import { Metrics } from '../shared/metrics.js';
import { startProbeServer, type ProbeServer, type Readiness } from '../shared/probes.js';
import { readinessGauge } from '../shared/readiness-metric.js';
import { serverTlsFromConfig } from '../shared/tls.js';
import { openRedisStores, redisStoresOptionsFromConfig } from '../shared/backends/redis/index.js';
import type { Running } from '../shared/process.js';
import { createWorker, workerOptionsFromConfig, type Worker, type WorkerStatus } from './run.js';
import type { ClickHouseOptions } from '../shared/backends/clickhouse/client.js';

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
  if (!redisConfigured(config.redis)) throw new Error('The worker needs REDIS_URL or REDIS_SENTINELS (it records last-report times there).');
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
    const redis = await openRedisStores(redisStoresOptionsFromConfig(config.redis, logger.child({ component: 'redis' })));
    redisHealthy = () => redis.healthy();
    try {
      const workerOptions = workerOptionsFromConfig(config, {
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
      worker = await createWorker(connection === undefined ? workerOptions : { ...workerOptions, clickhouse: { ...workerOptions.clickhouse, connection } });
    } catch (err) {
      await redis.close();
      throw err;
    }
    const running = worker;
    return {
      probesUrl,
      reloadTls: () => Promise.resolve(probes?.reloadTls()),
      close: async () => {
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
