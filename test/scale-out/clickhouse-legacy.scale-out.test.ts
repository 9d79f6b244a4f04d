/**
 * The analysts' behaviour on the real ClickHouse 18.16 server (`npm run services:up`), 18.16
 * schema: the same suite test/embedded/clickhouse-current.embedded.test.ts runs on a current ClickHouse (chdb).
 */
import { afterAll } from 'vitest';
import { createClickHouseClient, quoteIdentifier, type ClickHouseClient } from '../../shared/backends/clickhouse/index.js';
import { describeAnalytics, useTarget } from '../helpers/analytics-behaviour.js';
import { services, uniqueName } from '../helpers/services.js';

const databases: string[] = [];
let client: ClickHouseClient | null = null;

const target = useTarget(async () => {
  const svc = services();
  client = createClickHouseClient({ url: svc.clickhouseUrl, database: 'default', username: 'default', password: '' });
  await client.ping();
  return {
    client,
    binaryBodies: 'request',
    newDatabase: () => {
      const db = uniqueName('an');
      databases.push(db);
      return db;
    },
  };
});

afterAll(async () => {
  for (const db of databases) await client?.command({ query: `DROP DATABASE IF EXISTS ${quoteIdentifier(db)}` });
  await client?.close();
});

describeAnalytics('ClickHouse 18.16 server, 18.16 schema', '18.16', target);
