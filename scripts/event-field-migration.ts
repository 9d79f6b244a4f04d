/**
 * Prints the migrations that add an event field declared `addedLater` in shared/events/schema.ts,
 * to paste as new entries of the stores' MIGRATIONS (SQLite, ClickHouse 18.16 and current ClickHouse;
 * docs/architecture.md §Adding an event field):
 *
 *   npx tsx scripts/event-field-migration.ts <fieldName>
 */
import { addColumnSql as clickhouseStatements } from '../shared/backends/clickhouse/rows.js';
import { MIGRATIONS as CLICKHOUSE_MIGRATIONS } from '../shared/backends/clickhouse/schema.js';
import { addCurrentColumnSql } from '../shared/backends/clickhouse/current-rows.js';
import { CURRENT_MIGRATIONS } from '../shared/backends/clickhouse/schema-current.js';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../shared/backends/embedded/database.js';
import { addColumnSql as sqliteStatements } from '../shared/backends/embedded/event-row.js';
import { EVENT_FIELD_LIST } from '../shared/events/schema.js';
import { errorMessage } from '../shared/util/error-message.js';

const name = process.argv[2];
const field = EVENT_FIELD_LIST.find((f) => f.name === name);
if (field === undefined) {
  console.error(`usage: npx tsx scripts/event-field-migration.ts <field>; fields: ${EVENT_FIELD_LIST.map((f) => f.name).join(', ')}`);
  process.exit(2);
}
try {
  const sqlite = sqliteStatements(field);
  const clickhouse = clickhouseStatements(field);
  const nextClickHouse = Math.max(0, ...CLICKHOUSE_MIGRATIONS.map((m) => m.version)) + 1;
  console.log(`// shared/backends/embedded/database.ts: append to MIGRATIONS (it becomes version ${SQLITE_MIGRATIONS.length + 1})`);
  console.log(`  \`\n  -- Event field ${field.name}; rows stored before it read as its zero.\n${sqlite.map((s) => `  ${s}`).join('\n')}\n  \`,`);
  console.log('\n// shared/backends/clickhouse/schema.ts: append to MIGRATIONS');
  console.log(`  {\n    version: ${nextClickHouse},\n    name: 'events.${field.name}',`);
  console.log(`    statements: [${clickhouse.map((s) => `\`${s}\``).join(', ')}],\n  },`);
  const current = addCurrentColumnSql(field);
  const nextCurrent = Math.max(0, ...CURRENT_MIGRATIONS.map((m) => m.version)) + 1;
  console.log('\n// shared/backends/clickhouse/schema-current.ts: append to CURRENT_MIGRATIONS (ClickHouse 24.8+)');
  console.log(`  {\n    version: ${nextCurrent},\n    name: 'events.${field.name}',`);
  console.log(`    statements: [${current.map((s) => `\`${s}\``).join(', ')}],\n  },`);
} catch (err) {
  console.error(errorMessage(err));
  process.exit(1);
}
