/**
 * The worker as a process: the consumer (run.ts) plus Redis for last-report times, and optional
 * probes/metrics on ADMIN_HOST:ADMIN_PORT (/healthz, /readyz, /metrics).
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import { Metrics } from '../shared/metrics.js';
import { readinessGauge } from '../shared/readiness-metric.js';
import { openRedisStores } from '../shared/backends/redis/index.js';
import type { Running } from '../shared/process.js';
import { createWorker, workerOptionsFromConfig, type Worker, type WorkerStatus } from './run.js';

export interface WorkerProcess extends Running {
  /** http://host:port of the probes (null without them); ADMIN_PORT=0 picks a free port. */
  probesUrl: string | null;
}

/** What /readyz reports: ready, or the reason it is not. */
export type Readiness = () => Promise<{ ready: true } | { ready: false; reason: string }>;

/**
 * Opens Redis, applies the ClickHouse migrations and starts the consumer, then returns while the
 * consumer may still be waiting for Kafka or its topic (retriable: /readyz says why). The probes
 * listen from the start, so a worker that waits is visible. Only a non-retriable error ends the
 * process (exit 1, logged as such).
 */
export async function startWorkerProcess(config: Config, logger: Logger, metrics: Metrics, options: { probes: boolean }): Promise<WorkerProcess> {
  if (config.redisUrl === null) throw new Error('The worker needs REDIS_URL (it records last-report times there).');
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
  const probes: Server | null = options.probes ? await probeServer(config, logger, metrics, readiness) : null;
  const address = probes?.address() as AddressInfo | null | undefined;
  const probesUrl = address ? `http://${config.adminHost}:${address.port}` : null;
  try {
    const redis = await openRedisStores({ url: config.redisUrl, keyPrefix: config.redisKeyPrefix, logger: logger.child({ component: 'redis' }) });
    redisHealthy = redis.healthy;
    try {
      worker = await createWorker(
        workerOptionsFromConfig(config, {
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
        }),
      );
    } catch (err) {
      await redis.close();
      throw err;
    }
    const running = worker;
    return {
      probesUrl,
      close: async () => {
        probes?.close();
        await running.stop();
        await redis.close();
      },
    };
  } catch (err) {
    probes?.close();
    throw err;
  }
}

async function probeServer(config: Config, logger: Logger, metrics: Metrics, readiness: Readiness): Promise<Server> {
  const server = createServer((req, res) => {
    const send = (status: number, type: string, body: string) => res.writeHead(status, { 'Content-Type': type }).end(body);
    if (req.method !== 'GET') return send(405, 'text/plain; charset=utf-8', 'Method not allowed.\n');
    if (req.url === '/healthz') return send(200, 'application/json', '{"status":"ok"}');
    if (req.url === '/readyz') {
      readiness().then(
        (r) => (r.ready ? send(200, 'application/json', '{"status":"ok"}') : send(503, 'application/json', JSON.stringify({ status: 'unavailable', reason: r.reason }))),
        (err: unknown) => send(503, 'application/json', JSON.stringify({ status: 'unavailable', reason: String(err) })),
      );
      return;
    }
    if (req.url === '/metrics') {
      metrics.text().then((text) => send(200, 'text/plain; version=0.0.4; charset=utf-8', text), () => send(500, 'text/plain', 'metrics failed\n'));
      return;
    }
    send(404, 'text/plain; charset=utf-8', 'Not found.\n');
  });
  server.listen(config.adminPort, config.adminHost);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  logger.info({ url: `http://${config.adminHost}:${port}` }, 'worker probes and metrics listening');
  return server;
}
