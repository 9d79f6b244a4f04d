/**
 * `npm run worker` with ClickHouse 26 embedded in the process (npm `chdb`, data in CHDB_PATH)
 * instead of a server: the pipeline bench's CLICKHOUSE_ENGINE=chdb. The worker creates the current
 * schema there; after it exits, the bench opens the same directory to check what was stored.
 */
import { createChdbConnection } from 'chdb/connection';
import type { ClickHouseOptions } from '../../shared/backends/clickhouse/client.js';
import { Metrics } from '../../shared/runtime/metrics.js';
import { runProcess } from '../../shared/runtime/process.js';
import { startWorkerProcess } from '../../worker/process.js';

const dir = process.env.CHDB_PATH;
if (dir === undefined || dir === '') throw new Error('CHDB_PATH (the chdb data directory) is required');
const connection = createChdbConnection({ path: dir }) as unknown as NonNullable<ClickHouseOptions['connection']>;
runProcess('worker', (config, logger) => startWorkerProcess(config, logger, new Metrics(), { probes: false, clickhouseConnection: connection }));
