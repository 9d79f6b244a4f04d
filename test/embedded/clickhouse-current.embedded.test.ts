/**
 * The current schema (ClickHouse 24.8+) on a current ClickHouse: 26.x embedded in this process by
 * npm `chdb` (a devDependency), through the same @clickhouse/client calls the worker and the
 * gateway make (chdb plugs in as the client's connection). No external service. The analysts'
 * behaviour suite is the one test/scale-out/clickhouse-legacy.scale-out.test.ts runs on the real 18.16 server.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chdbConnection } from '../helpers/chdb.js';
import { afterAll, describe, expect, it } from 'vitest';
import { createClickHouseClient, migrate, MIGRATIONS, quoteIdentifier, quoteString, type ClickHouseClient, type Migration } from '../../shared/backends/clickhouse/index.js';
import { currentEventColumns, currentRowCodec, dateTime64Text, hash64, instantFromTicks, MAX_INSTANT_MS, MIN_INSTANT_MS } from '../../shared/backends/clickhouse/current-rows.js';
import { ensureSchema, isCurrentRelease, parseServerVersion } from '../../shared/backends/clickhouse/family.js';
import { applyRetention, CURRENT_MIGRATIONS, CURRENT_OFFSET, currentFieldMigration, retentionOf } from '../../shared/backends/clickhouse/schema-current.js';
import { fieldAdditions, withFieldMigrations } from '../../shared/events/migrations.js';
import { EVENT_FIELD_LIST, firstRelease, type EventRecord } from '../../shared/events/schema.js';
import { EVERY_KIND_FIELDS, sample, zeros } from '../helpers/event-samples.js';
import { ClickHouseEventStore } from '../../shared/backends/clickhouse/event-store.js';
import { ClickHouseEventWriter } from '../../shared/backends/clickhouse/writer.js';
import { analyticsEvent, describeAnalytics, docsBlocks, useTarget } from '../helpers/analytics-behaviour.js';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'chdb-current-'));
let counter = 0;
const newDatabase = (): string => `cur_${++counter}`;
let client: ClickHouseClient | null = null;

const target = useTarget(async () => {
  client = createClickHouseClient({ url: 'http://chdb.invalid', database: 'default', username: 'default', password: '', connection: chdbConnection(dataDir) });
  await client.ping();
  return { client, newDatabase, binaryBodies: 'file' };
});

afterAll(async () => {
  await client?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const rows = async <T = Record<string, unknown>>(query: string): Promise<T[]> => (await target().client.query({ query, format: 'JSONEachRow' })).json<T>();

describe('schema choice by server version', () => {
  it('reads versions and draws the line at 24.8', () => {
    expect(isCurrentRelease(parseServerVersion('18.16.1'))).toBe(false);
    expect(isCurrentRelease(parseServerVersion('24.3.5.47'))).toBe(false);
    expect(isCurrentRelease(parseServerVersion('24.8.14.39'))).toBe(true);
    expect(isCurrentRelease(parseServerVersion('25.3.1'))).toBe(true);
    expect(isCurrentRelease(parseServerVersion('26.7.2.1'))).toBe(true);
    expect(() => parseServerVersion('banana')).toThrow(/cannot read ClickHouse version/);
  });

  it('creates the current schema on a current release, once (migrations run twice)', async () => {
    const db = newDatabase();
    const first = await ensureSchema(target().client, db, { retentionDays: 0 });
    expect(first.server.major).toBeGreaterThanOrEqual(26);
    expect(first).toMatchObject({ family: 'current', exactlyOnce: true, applied: CURRENT_MIGRATIONS.map((m) => m.version) });
    const second = await ensureSchema(target().client, db, { retentionDays: 0 });
    expect(second).toMatchObject({ family: 'current', applied: [] });
    const columns = await rows<{ name: string; type: string; compression_codec: string }>(
      `SELECT name, type, compression_codec FROM system.columns WHERE database = ${quoteString(db)} AND table = 'events' ORDER BY position`,
    );
    // The table is exactly the rendering of EVENT_FIELDS (types and codecs): the first release's
    // columns, then those of each field added later, in the order their migrations add them.
    const added = fieldAdditions().flatMap((a) => a.fields.flatMap((f) => currentEventColumns([f]).slice(1, -1)));
    expect(columns.map((c) => `${c.name} ${c.type}${c.compression_codec === '' ? '' : ` ${c.compression_codec}`}`)).toEqual(
      [...currentEventColumns(firstRelease(EVENT_FIELD_LIST)), ...added].map((c) => `${c.name} ${c.type}`),
    );
    expect(columns.map((c) => c.name).sort()).toEqual(currentEventColumns().map((c) => c.name).sort());
    const tables = await rows<{ name: string }>(`SELECT name FROM system.tables WHERE database = ${quoteString(db)} ORDER BY name`);
    expect(tables.map((t) => t.name)).toEqual(['arrivals', 'arrivals_mv', 'events', 'latest_positions', 'latest_positions_mv', 'schema_migrations']);
  });

  it('a table of every kind: the fields added later come in by the migrations their `since` derives (100 + since), old rows read their zero', async () => {
    const { client: c } = target();
    const db = newDatabase();
    const first = firstRelease(EVERY_KIND_FIELDS);
    const table = currentEventColumns(first).map((col) => `${col.name} ${col.type}`);
    const created: Migration = { version: 101, name: 'first release', statements: [`CREATE TABLE IF NOT EXISTS {db}.events (${table.join(', ')}) ENGINE = MergeTree ORDER BY id`] };
    const migrations = withFieldMigrations('ClickHouse 24.8+', [created], currentFieldMigration, { offset: CURRENT_OFFSET, fields: EVERY_KIND_FIELDS });
    expect((await migrate(c, db, migrations.slice(0, 1))).applied).toEqual([101]);
    const storedAt = Date.UTC(2026, 0, 2, 3, 4, 5);
    const insert = async (fields: typeof EVERY_KIND_FIELDS, records: readonly object[], firstId: number): Promise<void> => {
      const codec = currentRowCodec(fields);
      await c.insert({ table: `${quoteIdentifier(db)}.events`, values: records.map((r, i) => codec.toRow(BigInt(firstId + i), r as EventRecord, storedAt)), format: 'JSONEachRow' });
    };
    const old = sample(first, 20);
    await insert(first, old, 1);
    expect((await migrate(c, db, migrations)).applied).toEqual([102, 103]);
    const columns = await rows<{ name: string; type: string }>(`SELECT name, type FROM system.columns WHERE database = ${quoteString(db)} AND table = 'events' ORDER BY name`);
    expect(columns.map((col) => col.name)).toEqual(currentEventColumns(EVERY_KIND_FIELDS).map((col) => col.name).sort());
    const records = sample(EVERY_KIND_FIELDS, 20);
    await insert(EVERY_KIND_FIELDS, records, 100);
    const codec = currentRowCodec(EVERY_KIND_FIELDS);
    const back = (await rows(`SELECT ${codec.storedColumns.join(', ')} FROM ${quoteIdentifier(db)}.events ORDER BY id`)).map((row) => codec.fromRow(row));
    const later = EVERY_KIND_FIELDS.filter((f) => f.whenAbsent !== undefined);
    expect(back).toEqual([...old.map((r, i) => ({ id: BigInt(1 + i), ...r, ...zeros(later), storedAt })), ...records.map((r, i) => ({ id: BigInt(100 + i), ...r, storedAt }))]);
  });

  it('keeps an 18.16-shaped database on the 18.16 schema, and the documented copy moves it to the current one', async () => {
    const { client: c } = target();
    const old = newDatabase();
    await migrate(c, old, MIGRATIONS);
    const choice = await ensureSchema(c, old, { retentionDays: 0 });
    expect(choice).toMatchObject({ family: 'legacy', exactlyOnce: true, applied: [] });
    const writer = new ClickHouseEventWriter(c, old, { family: choice.family, exactlyOnce: choice.exactlyOnce, binaryBodies: 'file' });
    const events = [
      analyticsEvent({ systemUser: 'move', eventTime: { epochMs: MIN_INSTANT_MS, subMsTicks: 1 }, sensors: [{ clave: 'a', valor: 'b' }] }),
      analyticsEvent({ systemUser: 'move', receptionTime: { epochMs: Date.UTC(2025, 0, 1), subMsTicks: 1234 }, receptionTimeText: 'r', valido: false }),
      analyticsEvent({ systemUser: 'move', dedupeKey: 'k+/=' }),
    ].map((event, i) => ({ id: BigInt(i + 1), event }));
    await writer.insert(writer.encode(events, Date.now()), 'move:0:0-2');
    const before = await new ClickHouseEventStore(c, old).recent({ limit: 10 });
    expect(before.map((e) => e.id)).toEqual([3n, 2n, 1n]);

    const fresh = newDatabase();
    expect((await ensureSchema(c, fresh, { retentionDays: 0 })).family).toBe('current');
    const [copy] = docsBlocks('migration');
    await c.command({ query: copy!.replaceAll('gateway.', `${quoteIdentifier(fresh)}.`).replaceAll('old.', `${quoteIdentifier(old)}.`) });
    const after = await new ClickHouseEventStore(c, fresh).recent({ limit: 10 });
    expect(after.map(({ storedAt: _s, ...e }) => e)).toEqual(before.map(({ storedAt: _s, ...e }) => ({ ...e, dedupeKey: '' })));
    const keys = await rows<{ id: string; dedupe_key: string }>(`SELECT toString(id) AS id, toString(dedupe_key) AS dedupe_key FROM ${quoteIdentifier(fresh)}.events ORDER BY id`);
    expect(keys.map((k) => k.dedupe_key)).toEqual(events.map((e) => hash64(e.event.dedupeKey)));
    expect(await rows(`SELECT dominio, toString(id) AS id FROM ${quoteIdentifier(fresh)}.latest_positions FINAL`)).toEqual([{ dominio: 'AB123CD', id: '3' }]);
  });
});

describe('current schema: values', () => {
  it('stores every field exactly, instants from 0001-01-01 to 9999-12-31 at 100 ns, reals as sent', async () => {
    const { client: c } = target();
    const db = newDatabase();
    const schema = await ensureSchema(c, db, { retentionDays: 0 });
    const writer = new ClickHouseEventWriter(c, db, { family: schema.family, exactlyOnce: true, binaryBodies: 'file' });
    const list = [
      analyticsEvent({ systemUser: 'x', eventTime: { epochMs: MIN_INSTANT_MS, subMsTicks: 0 }, eventTimeText: '0001-01-01T00:00:00' }),
      analyticsEvent({ systemUser: 'x', eventTime: { epochMs: MAX_INSTANT_MS, subMsTicks: 9999 }, receptionTime: { epochMs: -1, subMsTicks: 9999 }, receptionTimeText: 'r' }),
      analyticsEvent({ systemUser: "o'brien\\", dominio: 'ñandú 🚗', crudo: 'a\nb\t\0', latitud: 4.820039, longitud: -58.381592, valido: true, sensors: [{ clave: 'k', valor: '' }, { clave: 'k', valor: 'twice' }] }),
    ].map((event, i) => ({ id: i === 2 ? 9007199254740993n : BigInt(i + 1), event }));
    await writer.insert(writer.encode(list, Date.now()), 'values:0:0-2');
    const got = await new ClickHouseEventStore(c, db).recent({ limit: 10 });
    expect(got.map(({ storedAt: _s, ...e }) => e)).toEqual(
      [...list].reverse().map(({ id, event }) => ({ ...event, id, dedupeKey: '' })),
    );
    const text = await rows<{ t: string }>(`SELECT toString(event_time) AS t FROM ${quoteIdentifier(db)}.events WHERE system_user = 'x' ORDER BY id`);
    expect(text.map((r) => r.t)).toEqual(['0001-01-01 00:00:00.0000000', '9999-12-31 23:59:59.9999999']);
    // Current releases parse decimal text to the nearest double (18.16 is one ulp off for this one).
    expect(await rows(`SELECT latitud = 4.820039 AS exact FROM ${quoteIdentifier(db)}.events WHERE valido`)).toEqual([{ exact: 1 }]);
  });

  it('writes DateTime64 text for the whole range and reads ticks back', () => {
    expect(dateTime64Text({ epochMs: MIN_INSTANT_MS, subMsTicks: 0 })).toBe('0001-01-01 00:00:00.0000000');
    expect(dateTime64Text({ epochMs: -1, subMsTicks: 9999 })).toBe('1969-12-31 23:59:59.9999999');
    expect(dateTime64Text({ epochMs: MAX_INSTANT_MS, subMsTicks: 9999 })).toBe('9999-12-31 23:59:59.9999999');
    // Outside what a .NET DateTime holds (no client can send it): held at the ends.
    expect(dateTime64Text({ epochMs: MIN_INSTANT_MS - 5, subMsTicks: 7 })).toBe('0001-01-01 00:00:00.0000000');
    expect(dateTime64Text({ epochMs: MAX_INSTANT_MS + 5, subMsTicks: 7 })).toBe('9999-12-31 23:59:59.9999999');
    expect(instantFromTicks('-1')).toEqual({ epochMs: -1, subMsTicks: 9999 });
    expect(instantFromTicks('-621355968000000000')).toEqual({ epochMs: MIN_INSTANT_MS, subMsTicks: 0 });
    expect(hash64('same')).toBe('677529369334489940');
  });

  it('sets, changes and removes the retention TTL, and drops rows older than it', async () => {
    const { client: c } = target();
    const db = newDatabase();
    await ensureSchema(c, db, { retentionDays: 30 });
    const engine = async (table: string) => (await rows<{ e: string }>(`SELECT engine_full AS e FROM system.tables WHERE database = ${quoteString(db)} AND name = '${table}'`))[0]!.e;
    expect(retentionOf(await engine('events'))).toBe(30);
    expect(retentionOf(await engine('arrivals'))).toBe(30);
    const writer = new ClickHouseEventWriter(c, db, { family: 'current', exactlyOnce: true, binaryBodies: 'file' });
    const now = Date.now();
    const events = [analyticsEvent({ systemUser: 'ttl', receivedAt: now - 40 * 86_400_000 }), analyticsEvent({ systemUser: 'ttl', receivedAt: now })].map((event, i) => ({ id: BigInt(i + 1), event }));
    await writer.insert(writer.encode(events, now), 'ttl:0:0-1');
    await c.command({ query: `OPTIMIZE TABLE ${quoteIdentifier(db)}.events FINAL` });
    expect(await rows(`SELECT toString(id) AS id FROM ${quoteIdentifier(db)}.events`)).toEqual([{ id: '2' }]);
    await applyRetention(c, db, 90);
    expect(retentionOf(await engine('events'))).toBe(90);
    await applyRetention(c, db, 0);
    expect(retentionOf(await engine('events'))).toBeNull();
    expect(retentionOf(await engine('arrivals'))).toBeNull();
  });
});

describeAnalytics('ClickHouse 26 on chdb, current schema', 'current', target);
