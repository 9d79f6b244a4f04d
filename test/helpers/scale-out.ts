import { pino } from 'pino';
import { loadConfig } from '../../shared/config/index.js';
import type { ScaleOutBackends } from '../../shared/backends/scale-out/index.js';
import { Metrics } from '../../shared/runtime/metrics.js';
import type { Running } from '../../shared/runtime/process.js';
import { startWorkerProcess } from '../../worker/process.js';
import { TestApp } from './harness.js';
import { services, uniqueName } from './services.js';

/** Two gateways and a worker on the real Redis, Kafka and ClickHouse, isolated by names. */
export interface Cluster {
  env: Record<string, string>;
  gw1: TestApp;
  gw2: TestApp;
  worker: Running;
  /** The worker's metrics registry. */
  workerMetrics: Metrics;
  backends(t: TestApp): ScaleOutBackends;
  /** Rows in ClickHouse for these ids (deduplicated view), polled until all arrived or the timeout. */
  waitForRows(ids: readonly number[], timeoutMs?: number): Promise<Map<number, Record<string, unknown>>>;
  stop(): Promise<void>;
}

export async function startCluster(extraEnv: Record<string, string> = {}): Promise<Cluster> {
  const s = services();
  const env: Record<string, string> = {
    REDIS_URL: s.redisUrl,
    REDIS_KEY_PREFIX: `${uniqueName('e2e')}:`,
    KAFKA_BROKERS: s.kafkaBrokers.join(','),
    KAFKA_TOPIC: uniqueName('events'),
    KAFKA_GROUP_ID: uniqueName('worker'),
    CLICKHOUSE_URL: s.clickhouseUrl,
    CLICKHOUSE_DATABASE: uniqueName('gw'),
    WORKER_BATCH_MS: '100',
    APPEND_TIMEOUT_MS: '3000',
    ...extraEnv,
  };
  const gw1 = await TestApp.start(env);
  const gw2 = await TestApp.start(env);
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const workerMetrics = new Metrics({ defaults: false });
  const worker = await startWorkerProcess(loadConfig(env), logger, workerMetrics, { probes: false });
  const backends = (t: TestApp) => t.app.backends as unknown as ScaleOutBackends;
  const clickhouse = () => {
    const ch = (gw1.app.backends as unknown as { clickhouse: ScaleOutBackends['clickhouse'] }).clickhouse;
    if (ch === null) throw new Error('no ClickHouse client');
    return ch;
  };
  return {
    env,
    gw1,
    gw2,
    worker,
    workerMetrics,
    backends,
    async waitForRows(ids, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const result = await clickhouse().query({
          query: `SELECT * FROM ${env.CLICKHOUSE_DATABASE}.events FINAL WHERE id IN (${ids.join(',') || '0'})`,
          format: 'JSONEachRow',
        });
        const rows = await result.json<Record<string, unknown>>();
        const byId = new Map(rows.map((r) => [Number(r.id), r]));
        if (ids.every((id) => byId.has(id)) || Date.now() > deadline) return byId;
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async stop() {
      await worker.close();
      await gw1.stop();
      await gw2.stop();
    },
  };
}
