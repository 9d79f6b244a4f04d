/**
 * The migrations of the event fields added later are derived from each field's `since`
 * (shared/events/migrations.ts) into every store's list, and no shipped migration ever changes:
 * their digests are held here, so an edit of one (or of what a derived one is made from) fails,
 * while a new migration, hand-written or a field's, is simply appended.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eventFieldMigration as sqliteFieldMigration, MIGRATIONS as SQLITE, type SqliteMigration } from '../../../../shared/backends/embedded/database.js';
import { eventFieldMigration as legacyFieldMigration, MIGRATIONS as LEGACY, type Migration } from '../../../../shared/backends/clickhouse/schema.js';
import { CURRENT_MIGRATIONS, CURRENT_OFFSET, currentFieldMigration } from '../../../../shared/backends/clickhouse/schema-current.js';
import { fieldAdditions, withFieldMigrations } from '../../../../shared/events/migrations.js';
import { resolveFields } from '../../../../shared/events/schema.js';
import { EVERY_KIND, EVERY_KIND_FIELDS } from '../../../helpers/event-samples.js';

const digest = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 16);

/** Every shipped migration of each store by version, as a digest of its text (name and statements for ClickHouse). */
const SHIPPED = {
  sqlite: { 1: '1f3bb556e47868fe', 2: '93ad051f6ea44e49', 3: 'ebb488dbad318370', 4: '7a2ce1858aae496a' },
  legacy: { 1: '9daa4d44236e42af', 2: '66c861fdb580da49', 3: '73940fbc08dec3a9' },
  current: { 101: '11b6247fea5059ca' },
} as const;

describe('shipped migrations', () => {
  it.each([
    ['SQLite', SQLITE.map((m) => [m.version, digest(m.sql)] as const), SHIPPED.sqlite],
    ['ClickHouse 18.16', LEGACY.map((m) => [m.version, digest(JSON.stringify([m.name, m.statements]))] as const), SHIPPED.legacy],
    ['ClickHouse 24.8+', CURRENT_MIGRATIONS.map((m) => [m.version, digest(JSON.stringify([m.name, m.statements]))] as const), SHIPPED.current],
  ])('%s: each is as it shipped (append a new migration instead of editing one)', (_store, built, shipped) => {
    const byVersion = new Map(built);
    for (const [version, text] of Object.entries(shipped)) expect(byVersion.get(Number(version)), `migration ${version}`).toBe(text);
    // Versions only grow: whatever comes after the shipped ones is above them.
    expect(built.map(([v]) => v)).toEqual([...built.map(([v]) => v)].sort((a, b) => a - b));
  });
});

describe('migrations derived from `since`', () => {
  it('groups the fields added later by version, in version order, each version in table order', () => {
    expect(fieldAdditions(EVERY_KIND_FIELDS).map((a) => [a.version, a.fields.map((f) => f.name)])).toEqual([
      [2, ['maybeTotal', 'flag', 'tags']],
      [3, ['seenLast']],
    ]);
    expect(() => fieldAdditions(resolveFields({ ...EVERY_KIND, flag: { ...EVERY_KIND.flag, since: 0 } }))).toThrow(/event field flag: since must be a whole schema version/);
    expect(() => fieldAdditions(resolveFields({ ...EVERY_KIND, flag: { ...EVERY_KIND.flag, since: 2.5 } }))).toThrow(/event field flag/);
  });

  // Stand-ins for each store's hand-written migrations (the shipped lists hold the real fields' too).
  const sqliteHandWritten: SqliteMigration[] = [1, 2, 3, 4].map((version) => ({ version, sql: `-- ${version}` }));
  const legacyHandWritten: Migration[] = [1, 2, 3].map((version) => ({ version, name: `hand-written ${version}`, statements: [] }));
  const currentHandWritten: Migration[] = [{ version: 101, name: 'hand-written 101', statements: [] }];

  it('each store gets one migration per version after its hand-written ones, the current schema at 100 + the version', () => {
    const fields = EVERY_KIND_FIELDS;
    const sqlite = withFieldMigrations('SQLite', sqliteHandWritten, sqliteFieldMigration, { fields: fields.map((f) => ({ ...f, since: f.since === 1 ? 1 : f.since + 4 })) });
    expect(sqlite.map((m) => m.version)).toEqual([1, 2, 3, 4, 6, 7]);
    expect(sqlite[4]!.sql).toBe(
      [
        '-- Event fields maybeTotal, flag, tags; rows stored before them read as their zero.',
        'ALTER TABLE events ADD COLUMN maybe_total INTEGER;',
        'ALTER TABLE events ADD COLUMN flag INTEGER NOT NULL DEFAULT 0;',
        "ALTER TABLE events ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';",
      ].join('\n'),
    );
    const legacy = withFieldMigrations('ClickHouse 18.16', legacyHandWritten, legacyFieldMigration, { fields: fields.map((f) => ({ ...f, since: f.since === 1 ? 1 : f.since + 4 })) });
    expect(legacy.map((m) => [m.version, m.name])).toEqual([
      [1, 'hand-written 1'],
      [2, 'hand-written 2'],
      [3, 'hand-written 3'],
      [6, 'event fields maybeTotal, flag, tags'],
      [7, 'event fields seenLast'],
    ]);
    expect(legacy[4]!.statements).toEqual([
      'ALTER TABLE {db}.events ADD COLUMN seen_last DateTime(\'UTC\')',
      'ALTER TABLE {db}.events ADD COLUMN seen_last_ms Int64',
      'ALTER TABLE {db}.events ADD COLUMN seen_last_ticks UInt16',
    ]);
    const current = withFieldMigrations('ClickHouse 24.8+', currentHandWritten, currentFieldMigration, { offset: CURRENT_OFFSET, fields });
    expect(current.map((m) => m.version)).toEqual([101, 102, 103]);
    expect(current[1]!.statements[1]).toBe('ALTER TABLE {db}.events ADD COLUMN IF NOT EXISTS flag Bool');
  });

  it('refuses a field whose version a hand-written migration of any store has, naming both', () => {
    expect(() => withFieldMigrations('SQLite', sqliteHandWritten, sqliteFieldMigration, { fields: EVERY_KIND_FIELDS })).toThrow(
      'event field maybeTotal, flag, tags: since 2 is the version of a hand-written SQLite migration; give it a version no store has used (above 4 for SQLite).',
    );
    expect(() => withFieldMigrations('ClickHouse 18.16', legacyHandWritten, legacyFieldMigration, { fields: EVERY_KIND_FIELDS })).toThrow(/hand-written ClickHouse 18\.16 migration/);
  });
});
