export { clickHouseOptionsFromConfig, createClickHouseClient, isPermanentClickHouseError, type ClickHouseClient, type ClickHouseOptions } from './client.js';
export { ClickHouseEventStore } from './event-store.js';
export { ClickHouseEventWriter, MAX_PARTITIONS_PER_INSERT, splitByPartition, type BinaryBodies, type EncodedBatch, type InsertFormat, type InsertRow } from './writer.js';
export { MIGRATIONS, migrate, appliedVersions, type Migration, type MigrationResult } from './schema.js';
export { toRow, fromRow, dateTimeText, partitionMonth, type EventRow, type StoredRow } from './rows.js';
export { quoteString, quoteIdentifier, sqlUInt, sqlFloat, wellFormed, SqlValueError } from './sql.js';
