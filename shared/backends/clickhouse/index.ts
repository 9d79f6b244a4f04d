export { clickHouseOptionsFromConfig, createClickHouseClient, isPermanentClickHouseError, type ClickHouseClient, type ClickHouseOptions } from './client.js';
export { ClickHouseEventStore } from './event-store.js';
export { ClickHouseEventWriter, splitByPartition, type BinaryBodies } from './writer.js';
export { MIGRATIONS, migrate, appliedVersions, type Migration } from './schema.js';
export { toRow, partitionMonth } from './rows.js';
export { quoteString, quoteIdentifier, sqlUInt, sqlFloat, wellFormed } from './sql.js';
