/**
 * The worker as a process: the consumer (run.ts) plus Redis for last-report times, and optional
 * probes/metrics on ADMIN_HOST:ADMIN_PORT (/healthz, /readyz, /metrics).
 */
import { createServer, type Server } from 'node:http';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import { Metrics } from '../shared/metrics.js';
import { openRedisStores } from '../shared/backends/redis/index.js';
import type { Running } from '../shared/process.js';
import { startWorker, workerOptionsFromConfig, type Worker } from './run.js';

export async function startWorkerProcess(config: Config, logger: Logger, metrics: Metrics, options: { probes: boolean }): Promise<Running> {
  if (config.redisUrl === null) throw new Error('The worker needs REDIS_URL (it records last-report times there).');
  const redis = await openRedisStores({ url: config.redisUrl, keyPrefix: config.redisKeyPrefix, logger: logger.child({ component: 'redis' }) });
  let worker: Worker;
  try {
    worker = await startWorker(
      workerOptionsFromConfig(config, {
        lastReports: redis.lastReports,
        logger: logger.child({ component: 'worker' }),
        metrics: {
          batchSize: (n) => metrics.workerBatchRows.observe(n),
          insertSeconds: (s) => metrics.workerInsertSeconds.observe(s),
          lag: (partition, lag) => metrics.workerLag.set({ partition: String(partition) }, lag),
          poison: () => metrics.workerPoison.inc(),
        },
        onFatal: (err) => {
          logger.fatal({ err }, 'the consumer stopped for good; exiting so the supervisor restarts the worker');
          process.exit(1);
        },
      }),
    );
  } catch (err) {
    await redis.close();
    throw err;
  }
  const probes: Server | null = options.probes ? probeServer(config, logger, metrics, redis.healthy) : null;
  return {
    close: async () => {
      probes?.close();
      await worker.stop();
      await redis.close();
    },
  };
}

function probeServer(config: Config, logger: Logger, metrics: Metrics, healthy: () => Promise<boolean>): Server {
  const server = createServer((req, res) => {
    const send = (status: number, type: string, body: string) => res.writeHead(status, { 'Content-Type': type }).end(body);
    if (req.method !== 'GET') return send(405, 'text/plain; charset=utf-8', 'Method not allowed.\n');
    if (req.url === '/healthz') return send(200, 'application/json', '{"status":"ok"}');
    if (req.url === '/readyz') {
      healthy().then(
        (ok) => send(ok ? 200 : 503, 'application/json', ok ? '{"status":"ok"}' : '{"status":"unavailable"}'),
        () => send(503, 'application/json', '{"status":"unavailable"}'),
      );
      return;
    }
    if (req.url === '/metrics') {
      metrics.text().then((text) => send(200, 'text/plain; version=0.0.4; charset=utf-8', text), () => send(500, 'text/plain', 'metrics failed\n'));
      return;
    }
    send(404, 'text/plain; charset=utf-8', 'Not found.\n');
  });
  server.listen(config.adminPort, config.adminHost, () => logger.info({ url: `http://${config.adminHost}:${config.adminPort}` }, 'worker probes and metrics listening'));
  return server;
}
