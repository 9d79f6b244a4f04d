/** ClickHouse 26 embedded in this process (npm `chdb`), as a transport for @clickhouse/client. */
import { createChdbConnection } from 'chdb/connection';
import type { ClickHouseOptions } from '../../shared/backends/clickhouse/client.js';

/**
 * A chdb connection on the data directory `path`. chdb implements the client's Connection
 * interface against its own copy of @clickhouse/client-common, whose settings type differs from
 * the one bundled with @clickhouse/client by declaration only: one cast, here.
 */
export function chdbConnection(path: string): NonNullable<ClickHouseOptions['connection']> {
  return createChdbConnection({ path }) as unknown as NonNullable<ClickHouseOptions['connection']>;
}
