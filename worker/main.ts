/**
 * `npm run worker`: consumes the event topic into ClickHouse (KAFKA_BROKERS, CLICKHOUSE_URL) and
 * records last-report times in Redis (REDIS_URL). SIGTERM drains: insert and commit what is
 * buffered, then exit.
 */
import { Metrics } from '../shared/runtime/metrics.js';
import { runProcess } from '../shared/runtime/process.js';
import { startWorkerProcess } from './process.js';

runProcess('worker', (config, logger) => startWorkerProcess(config, logger, new Metrics(), { probes: true }));
