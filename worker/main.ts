/**
 * `npm run worker`: consumes the event topic into ClickHouse (KAFKA_BROKERS, CLICKHOUSE_URL) and
 * records last-report times in Redis (REDIS_URL). SIGTERM drains: insert and commit what is
 * buffered, then exit.
 *
 * `npm run worker -- --migrate`: applies the ClickHouse migrations and exits, nothing else. Run it
 * as the migrations user; the worker's own user then needs no DDL (docs/security.md §ClickHouse).
 */
import { clickHouseOptionsFromConfig, createClickHouseClient, LONG_STATEMENT_TIMEOUT_MS } from '../shared/backends/clickhouse/client.js';
import { ensureSchema } from '../shared/backends/clickhouse/family.js';
import { Metrics } from '../shared/runtime/metrics.js';
import { runProcess } from '../shared/runtime/process.js';
import { startWorkerProcess } from './process.js';

runProcess('worker', async (config, logger) => {
  if (!process.argv.includes('--migrate')) return startWorkerProcess(config, logger, new Metrics(), { probes: true });
  if (config.clickhouse.url === null) throw new Error('--migrate needs CLICKHOUSE_URL');
  const options = clickHouseOptionsFromConfig({ ...config.clickhouse, url: config.clickhouse.url });
  const client = createClickHouseClient(options);
  const longStatements = createClickHouseClient({ ...options, requestTimeoutMs: LONG_STATEMENT_TIMEOUT_MS });
  try {
    const schema = await ensureSchema(client, config.clickhouse.database, {
      retentionDays: config.clickhouse.retentionDays,
      longStatements,
      log: (fields, message, level = 'info') => logger[level](fields, message),
    });
    logger.info({ database: config.clickhouse.database, schema: schema.family, applied: schema.applied, version: schema.current }, 'ClickHouse migrations applied');
  } finally {
    await client.close();
    await longStatements.close();
  }
  process.exit(0);
});
