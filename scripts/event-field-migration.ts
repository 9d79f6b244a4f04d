/**
 * The schema versions of the three stores, and the migrations derived for the event fields added
 * later (shared/events/migrations.ts), to choose a new field's `since` and read what it will run
 * (docs/architecture.md §Adding an event field):
 *
 *   npx tsx scripts/event-field-migration.ts            the version a new field takes
 *   npx tsx scripts/event-field-migration.ts <field>    the migrations its `since` derives
 */
import { MIGRATIONS as CLICKHOUSE_MIGRATIONS } from '../shared/backends/clickhouse/schema.js';
import { CURRENT_MIGRATIONS, CURRENT_OFFSET } from '../shared/backends/clickhouse/schema-current.js';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../shared/backends/embedded/database.js';
import { EVENT_FIELD_LIST } from '../shared/events/schema.js';

const highest = (versions: readonly number[]): number => Math.max(0, ...versions);
const sqlite = highest(SQLITE_MIGRATIONS.map((m) => m.version));
const legacy = highest(CLICKHOUSE_MIGRATIONS.map((m) => m.version));
const current = highest(CURRENT_MIGRATIONS.map((m) => m.version));

const name = process.argv[2];
if (name === undefined) {
  const next = Math.max(sqlite, legacy, current - CURRENT_OFFSET) + 1;
  console.log(`since: ${next}  (the next schema version: SQLite is at ${sqlite}, ClickHouse 18.16 at ${legacy}, the current ClickHouse schema at ${current})`);
} else {
  const field = EVENT_FIELD_LIST.find((f) => f.name === name);
  if (field === undefined || field.whenAbsent === undefined) {
    const later = EVENT_FIELD_LIST.filter((f) => f.whenAbsent !== undefined).map((f) => f.name);
    console.error(`${name} is not a field added later (one with a \`since\`); those are: ${later.length === 0 ? 'none yet' : later.join(', ')}`);
    process.exitCode = 2;
  } else {
    const at = (version: number, store: string, text: string): void => console.log(`-- ${store}, version ${version}\n${text}\n`);
    const one = SQLITE_MIGRATIONS.find((m) => m.version === field.since);
    if (one !== undefined) at(one.version, 'SQLite (shared/backends/embedded/database.ts)', one.sql);
    for (const [store, list, version] of [
      ['ClickHouse 18.16 (shared/backends/clickhouse/schema.ts)', CLICKHOUSE_MIGRATIONS, field.since],
      ['ClickHouse 24.8+ (shared/backends/clickhouse/schema-current.ts)', CURRENT_MIGRATIONS, CURRENT_OFFSET + field.since],
    ] as const) {
      const m = list.find((x) => x.version === version);
      if (m !== undefined) at(m.version, store, m.statements.join(';\n'));
    }
  }
}
