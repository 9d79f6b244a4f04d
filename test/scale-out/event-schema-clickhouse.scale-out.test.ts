/**
 * The ClickHouse half of test/unit/shared/events/schema.unit.test.ts, against the real 18.16 server: its
 * migrations create exactly the declared columns, generated records round-trip through the writer
 * and store, and a table of every kind survives fields added later.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withFieldMigrations } from '../../shared/events/migrations.js';
import { EVENT_FIELD_LIST, firstRelease, type EventField, type EventRecord } from '../../shared/events/schema.js';
import { eventFieldMigration } from '../../shared/backends/clickhouse/schema.js';
import {
  eventColumns as clickhouseColumns,
  eventRowCodec as clickhouseCodec,
  partitionMonth,
  type StoredRow,
} from '../../shared/backends/clickhouse/rows.js';
import {
  ClickHouseEventStore,
  ClickHouseEventWriter,
  createClickHouseClient,
  migrate as migrateClickHouse,
  quoteIdentifier,
  type ClickHouseClient,
  type Migration,
} from '../../shared/backends/clickhouse/index.js';
import type { StoredEvent } from '../../shared/backends/types.js';
import { byId, EVERY_KIND_FIELDS, FIRST_FIELDS, sample, zeros } from '../helpers/event-samples.js';
import { services, uniqueName } from '../helpers/services.js';

describe('ClickHouse', () => {
  const svc = services();
  let client: ClickHouseClient;
  const databases: string[] = [];
  const newDatabase = () => {
    const db = uniqueName('schema');
    databases.push(db);
    return db;
  };
  beforeAll(() => {
    client = createClickHouseClient({ url: svc.clickhouseUrl, database: 'default', username: 'default', password: '' });
  });
  afterAll(async () => {
    for (const db of databases) await client.command({ query: `DROP DATABASE IF EXISTS ${quoteIdentifier(db)}` });
    await client.close();
  });

  async function tableColumns(db: string): Promise<{ name: string; type: string }[]> {
    const result = await client.query({
      query: `SELECT name, type FROM system.columns WHERE database = '${db}' AND table = 'events' ORDER BY name`,
      format: 'JSONEachRow',
    });
    return result.json<{ name: string; type: string }>();
  }
  const sorted = (columns: { name: string; type: string }[]) => [...columns].sort((a, b) => (a.name < b.name ? -1 : 1));

  /**
   * ClickHouse's Float64 parser for inserted text (18.16, and current releases unless
   * `precise_float_parsing` is set, a setting 18.16 refuses) lands one ulp off for some values:
   * about 0.7% of 6-decimal coordinates (4.820039 is stored as 4.8200389999999995). Reals read
   * back are compared to that precision; every other value exactly.
   */
  function withinOneUlp(fields: readonly EventField[], back: readonly object[], sent: readonly object[]): void {
    const f64 = new Float64Array(1);
    const bits = new BigInt64Array(f64.buffer);
    const ulp = (x: number): number => {
      f64[0] = Math.abs(x);
      bits[0]! += 1n;
      return f64[0] - Math.abs(x);
    };
    back.forEach((row, i) => {
      for (const f of fields) {
        if (f.kind !== 'real') continue;
        const got = (row as Record<string, unknown>)[f.name];
        const want = (sent[i] as Record<string, unknown>)[f.name];
        if (typeof got !== 'number' || typeof want !== 'number' || got === want) continue;
        expect(Math.abs(got - want), `${f.name} of row ${i}: ${got} for ${want}`).toBeLessThanOrEqual(ulp(Math.max(Math.abs(got), Math.abs(want))));
        (row as Record<string, unknown>)[f.name] = want;
      }
    });
  }

  it('the migrations create exactly the declared columns', async () => {
    const db = newDatabase();
    await migrateClickHouse(client, db);
    expect(await tableColumns(db)).toEqual(sorted(clickhouseColumns()));
  });

  it('stores and reads back generated records through the writer and store', async () => {
    const db = newDatabase();
    await migrateClickHouse(client, db);
    const records = sample(EVENT_FIELD_LIST, 300) as EventRecord[];
    const codec = clickhouseCodec();
    const storedAt = Date.UTC(2026, 0, 2, 3, 4, 5);
    await new ClickHouseEventWriter(client, db).insertRows(records.map((r, i) => ({ row: codec.toRow(BigInt(i + 1), r, storedAt), partition: partitionMonth(r.eventTime.epochMs) })));
    const back = (await new ClickHouseEventStore(client, db).recent({ limit: Infinity })).sort(byId);
    withinOneUlp(EVENT_FIELD_LIST, back, records);
    expect(back).toEqual(records.map((r, i) => ({ id: BigInt(i + 1), ...r, storedAt })));
  });

  /** Reads `db`.events back through a codec (reals to ClickHouse's precision). */
  async function readBack(db: string, fields: readonly EventField[], sent: readonly object[]): Promise<StoredEvent[]> {
    const codec = clickhouseCodec(fields);
    const result = await client.query({ query: `SELECT ${codec.storedColumns.join(', ')} FROM ${quoteIdentifier(db)}.events ORDER BY id`, format: 'JSONEachRow' });
    const back = (await result.json<StoredRow>()).map((row) => codec.fromRow(row));
    withinOneUlp(fields, back, sent);
    return back;
  }

  async function insert(db: string, fields: readonly EventField[], records: readonly object[], firstId: number, storedAt: number): Promise<void> {
    const codec = clickhouseCodec(fields);
    const values = records.map((r, i) => codec.toRow(BigInt(firstId + i), r as EventRecord, storedAt));
    await client.insert({ table: `${quoteIdentifier(db)}.events`, values, format: 'JSONEachRow' });
  }

  it('a row an older worker inserts, without the fields added later, reads them as their zero', async () => {
    const db = newDatabase();
    await migrateClickHouse(client, db);
    const storedAt = Date.UTC(2026, 0, 2, 3, 4, 5);
    const [record] = sample(FIRST_FIELDS, 1);
    await insert(db, FIRST_FIELDS, [record!], 5, storedAt);
    expect(await readBack(db, EVENT_FIELD_LIST, [record!])).toEqual([{ id: 5n, ...record, ...zeros(EVENT_FIELD_LIST), storedAt }]);
  });

  it('a table of every kind: derived DDL, rows, reads, and fields added by the migrations their `since` derives', async () => {
    const first = firstRelease(EVERY_KIND_FIELDS);
    const later = EVERY_KIND_FIELDS.filter((f) => f.whenAbsent !== undefined);
    const db = newDatabase();
    const table = (fields: readonly EventField[]) => clickhouseColumns(fields).map((c) => `${c.name} ${c.type}`);
    const storedAt = Date.UTC(2026, 0, 2, 3, 4, 5);
    const created: Migration = { version: 1, name: 'first release', statements: [`CREATE TABLE IF NOT EXISTS {db}.events (${table(first).join(', ')}) ENGINE = MergeTree ORDER BY id`] };
    const migrations = withFieldMigrations('ClickHouse 18.16', [created], eventFieldMigration, { fields: EVERY_KIND_FIELDS });
    expect(migrations.map((m) => m.version)).toEqual([1, 2, 3]);
    await migrateClickHouse(client, db, migrations.slice(0, 1));
    const old = sample(first, 50);
    await insert(db, first, old, 1, storedAt);

    // Version 2 as if a worker had died after one of its statements: the rest is applied, none fails.
    await client.command({ query: migrations[1]!.statements[0]!.replace('{db}', quoteIdentifier(db)) });
    expect((await migrateClickHouse(client, db, migrations)).applied).toEqual([2, 3]);
    expect(await tableColumns(db)).toEqual(sorted(clickhouseColumns(EVERY_KIND_FIELDS)));
    const records = sample(EVERY_KIND_FIELDS, 200);
    await insert(db, EVERY_KIND_FIELDS, records, 100, storedAt);
    // An older worker still running after the migration leaves the new columns out.
    const olderWorker = sample(first, 20);
    await insert(db, first, olderWorker, 1000, storedAt);

    const sent = [...old, ...records, ...olderWorker];
    expect(await readBack(db, EVERY_KIND_FIELDS, sent)).toEqual([
      ...old.map((r, i) => ({ id: BigInt(1 + i), ...r, ...zeros(later), storedAt })),
      ...records.map((r, i) => ({ id: BigInt(100 + i), ...r, storedAt })),
      ...olderWorker.map((r, i) => ({ id: BigInt(1000 + i), ...r, ...zeros(later), storedAt })),
    ]);
    // Any other failing statement still fails its migration.
    await expect(migrateClickHouse(client, db, [...migrations, { version: 4, name: 'broken', statements: ['ALTER TABLE {db}.events ADD COLUMN'] }])).rejects.toThrow();
  });
});
