/**
 * The one declaration of the event (shared/events/schema.ts) and what is derived from it: the
 * stores' columns must be exactly what their migrations create (SQLite here; ClickHouse 18.16 on
 * the real server in event-schema-clickhouse.scale-out.test.ts), every record round-trips through
 * each codec, Kafka messages written by earlier releases (test/fixtures/events/) still decode, and
 * a table using every kind — renamed wire keys, fields `addedLater` — works through every store,
 * which is what adding a field relies on (docs/architecture.md §Adding an event field).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import {
  EVENT_FIELD_LIST,
  EVENT_FIELDS,
  exampleEventRecord,
  firstRelease,
  isFieldValue,
  recordCheck,
  type EventField,
  type EventRecord,
} from '../../../../shared/events/schema.js';
import { decodeEvent, encodeEvent, eventWireCodec, WireFormatError } from '../../../../shared/events/wire.js';
import {
  columnDefinition,
  eventColumns as sqliteColumns,
  eventRowCodec as sqliteCodec,
  EVENT_ROWS,
} from '../../../../shared/backends/embedded/event-row.js';
import { eventFieldMigration, migrate as migrateSqlite } from '../../../../shared/backends/embedded/database.js';
import { withFieldMigrations } from '../../../../shared/events/migrations.js';
import { openEmbeddedBackends } from '../../../../shared/backends/embedded/index.js';
import { eventColumns as clickhouseColumns } from '../../../../shared/backends/clickhouse/rows.js';
import { currentEventColumns } from '../../../../shared/backends/clickhouse/current-rows.js';
import { eventView } from '../../../../gateway/admin/views.js';
import { byId, EVERY_KIND, EVERY_KIND_FIELDS, FIRST_FIELDS, sample, zeros } from '../../../helpers/event-samples.js';
import type { StoredEvent } from '../../../../shared/backends/types.js';
import { REPO } from '../../../helpers/paths.js';

const ROOT = REPO;

// ---- the table itself ---------------------------------------------------------------------------

describe('the event table', () => {
  it('derives unique column and wire names', () => {
    for (const names of [
      sqliteColumns().map((c) => c.name),
      clickhouseColumns().map((c) => c.name),
      EVENT_FIELD_LIST.map((f) => f.wire),
    ]) {
      expect(new Set(names).size).toBe(names.length);
      for (const name of names) expect(name).toMatch(/^[a-z][a-zA-Z0-9_]*$/);
    }
  });

  it('its examples make a record every store accepts, and fields added later read as their zero', () => {
    const example = exampleEventRecord();
    expect(Object.keys(example)).toEqual(Object.keys(EVENT_FIELDS));
    expect(() => EVENT_ROWS.checkStorable(example)).not.toThrow();
    expect(decodeEvent(encodeEvent(1n, example)).event).toEqual(example);
    // A fresh copy each time: a test changing its record changes no other.
    expect(exampleEventRecord().eventTime).not.toBe(example.eventTime);
    for (const f of [...EVENT_FIELD_LIST, ...EVERY_KIND_FIELDS]) {
      if (f.whenAbsent !== undefined) expect(eventWireCodec([f]).decode('{"v":1,"id":"1","event":{}}').event).toEqual({ [f.name]: f.whenAbsent });
    }
  });
});

describe('checks by kind', () => {
  const field = (name: keyof typeof EVERY_KIND) => EVERY_KIND_FIELDS.find((f) => (f.name as string) === name)!;
  const cases: [keyof typeof EVERY_KIND, unknown[], unknown[]][] = [
    ['label', ['', 'ñ🚗'], [null, undefined, 1, true, ['x']]],
    ['note', ['x', null], [undefined, 0]],
    ['ratio', [0, -1.5, Number.MAX_VALUE, 5e-324], [null, NaN, Infinity, -Infinity, '1', 1n]],
    ['maybeRatio', [null, 2.5], [NaN, undefined]],
    ['total', [0, -3, Number.MAX_SAFE_INTEGER], [1.5, 2 ** 53, '3', null]],
    ['flag', [true, false], [0, 1, 'true', null]],
    ['maybeFlag', [null, false], [0]],
    ['seenAt', [0, -62_135_596_800_000, 1_714_554_001_000], [1.5, NaN, null, '0']],
    ['happened', [{ epochMs: 0, subMsTicks: 0 }, { epochMs: -5, subMsTicks: 9999 }], [{ epochMs: 1.5, subMsTicks: 0 }, { epochMs: 1, subMsTicks: 10_000 }, { epochMs: 1, subMsTicks: -1 }, { epochMs: 1 }, [1, 2], null]],
    ['maybeHappened', [null, { epochMs: 1, subMsTicks: 2 }], [{}]],
    ['tags', [[], [{ clave: 'a', valor: '' }]], [null, {}, [{ clave: 1, valor: 'x' }], [{ clave: 'a' }], [null], 'a']],
  ];

  it.each(cases)('%s', (name, accepted, refused) => {
    const f = field(name);
    for (const value of accepted) expect(isFieldValue(f, value), `accepts ${String(value)}`).toBe(true);
    for (const value of refused) expect(isFieldValue(f, value), `refuses ${String(value)}`).toBe(false);
    // The compiled check of a whole record says the same as the field's own.
    const check = recordCheck([f], (x) => x.name);
    for (const value of [...accepted, ...refused]) expect(check({ [name]: value })).toBe(isFieldValue(f, value));
  });
});

// ---- Kafka messages -----------------------------------------------------------------------------

describe('Kafka messages', () => {
  // JSON versions one message a line (.jsonl); binary ones one message a line in hex (.hex).
  const fixtures = fs.readdirSync(path.join(ROOT, 'test/fixtures/events')).filter((f) => f.endsWith('.jsonl') || f.endsWith('.hex'));
  const messages = (file: string): Buffer[] =>
    fs
      .readFileSync(path.join(ROOT, 'test/fixtures/events', file), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => Buffer.from(l, file.endsWith('.hex') ? 'hex' : 'utf8'));

  it('decodes every message of every earlier version (test/fixtures/events)', () => {
    expect(fixtures).toEqual(expect.arrayContaining(['v1.jsonl', 'v2.hex']));
    for (const file of fixtures) {
      const lines = messages(file);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        const { id, event } = decodeEvent(line);
        if (file.endsWith('.jsonl')) expect(id).toBe(BigInt((JSON.parse(line.toString()) as { id: string }).id));
        expect(() => EVENT_ROWS.checkStorable(event)).not.toThrow();
      }
    }
  });

  it('version 2 holds the very records of the version 1 fixtures, and is written as its release wrote it', () => {
    const [json, binary] = [messages('v1.jsonl'), messages('v2.hex')];
    expect(binary).toHaveLength(json.length);
    binary.forEach((message, i) => {
      const decoded = decodeEvent(message);
      expect(decoded).toEqual(decodeEvent(json[i]!));
      const written = encodeEvent(decoded.id, decoded.event, 2);
      // Byte 1 counts the fields the writer knows: it grows with each field added later, whose
      // bytes follow the fixture's.
      expect(written[1]).toBe(EVENT_FIELD_LIST.length);
      expect(Buffer.concat([written.subarray(0, 1), written.subarray(2, message.length)])).toEqual(Buffer.concat([message.subarray(0, 1), message.subarray(2)]));
    });
  });

  it('writes version 1 as the release that wrote the fixture did, plus the zero of each field added since', () => {
    const lines = fs.readFileSync(path.join(ROOT, 'test/fixtures/events/v1.jsonl'), 'utf8').split('\n').filter((l) => l !== '');
    const [full, sparse] = lines.map((line) => decodeEvent(line));
    expect(full!.id).toBe(18446744073709551615n);
    expect(full!.event).toMatchObject({ systemUser: "prov'full\\", valido: true, eventTime: { epochMs: 1709642096789, subMsTicks: 1234 } });
    expect(full!.event.sensors).toEqual([
      { clave: 'temp', valor: '21.5' },
      { clave: "o'k\\", valor: '' },
      { clave: 'ñ', valor: '🚗' },
    ]);
    expect(sparse!.event).toMatchObject({ rumbo: null, valido: null, receptionTime: null, receptionTimeText: null, crudo: null, sensors: [] });
    for (const line of lines) {
      const written = JSON.parse(line) as { event: Record<string, unknown> };
      expect(JSON.stringify(written)).toBe(line);
      const added = EVENT_FIELD_LIST.filter((f) => !(f.wire in written.event)).map((f): [string, unknown] => [f.wire, f.whenAbsent]);
      const { id, event } = decodeEvent(line);
      expect(encodeEvent(id, event).toString('utf8')).toBe(JSON.stringify({ ...written, event: { ...written.event, ...Object.fromEntries(added) } }));
    }
  });

  it('round-trips generated records, in both versions', () => {
    for (const record of sample(EVENT_FIELD_LIST, 300)) {
      expect(decodeEvent(encodeEvent(42n, record as EventRecord)).event).toEqual(record);
      expect(decodeEvent(encodeEvent(42n, record as EventRecord, 2))).toEqual({ id: 42n, event: record });
    }
  });

  it('uses wire names, fills fields added later, and names the field a message lacks', () => {
    const codec = eventWireCodec(EVERY_KIND_FIELDS);
    const records = sample(EVERY_KIND_FIELDS, 100);
    for (const record of records) {
      const message = codec.encode(7n, record as unknown as EventRecord);
      const event = (JSON.parse(message.toString()) as { event: Record<string, unknown> }).event;
      expect(Object.keys(event)).toEqual(EVERY_KIND_FIELDS.map((f) => f.wire));
      expect(codec.decode(message).event).toEqual(record);
    }
    const { flag: _f, maybeTotal: _t, tags: _g, ...older } = (JSON.parse(codec.encode(7n, records[0] as unknown as EventRecord).toString()) as { event: Record<string, unknown> }).event;
    const old = JSON.stringify({ v: 1, id: '7', event: older });
    expect(codec.decode(old).event).toEqual({ ...records[0], flag: false, maybeTotal: null, tags: [] });
    const { etiqueta: _l, ...unlabelled } = older;
    expect(() => codec.decode(JSON.stringify({ v: 1, id: '7', event: unlabelled }))).toThrow(new WireFormatError('event field etiqueta is not a string'));
    expect(() => codec.decode(JSON.stringify({ v: 1, id: '7', event: { ...older, maybeSeenAt: 1.5 } }))).toThrow(/maybeSeenAt is not whole epoch ms or null/);
    expect(() => codec.decode(JSON.stringify({ v: 2, id: '7', event: older }))).toThrow(/unknown event message version 2/);
  });
});

// ---- SQLite -------------------------------------------------------------------------------------

interface TableInfo {
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

function sqliteTable(db: Database.Database): { name: string; type: string; notNull: boolean }[] {
  const info = db.prepare<[], TableInfo>('PRAGMA table_info(events)').all();
  // INTEGER PRIMARY KEY is the rowid: never null, though table_info does not say NOT NULL.
  return info.map((c) => ({ name: c.name, type: c.type, notNull: c.notnull === 1 || c.pk === 1 })).sort((a, b) => a.name.localeCompare(b.name));
}

describe('SQLite', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('the migrations create exactly the declared columns', () => {
    const db = new Database(':memory:');
    migrateSqlite(db);
    expect(sqliteTable(db)).toEqual([...sqliteColumns()].sort((a, b) => a.name.localeCompare(b.name)));
    db.close();
  });

  it('stores and reads back generated records through the event log and store', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'event-schema-'));
    dirs.push(dataDir);
    const b = await openEmbeddedBackends({ dataDir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 60_000 });
    try {
      const records = sample(EVENT_FIELD_LIST, 200).map((r, i) => ({ ...r, dedupeKey: `gen-${i}` }) as EventRecord);
      const outcomes = await b.eventLog.append(records);
      const ids = outcomes.map((o) => (o.ok ? o.id : -1n));
      const stored = (await b.events.recent({ limit: Infinity })).sort(byId);
      expect(stored.map(({ id, storedAt: _s, ...rest }) => ({ id, ...rest }))).toEqual(records.map((r, i) => ({ id: ids[i]!, ...r })));
    } finally {
      await b.close();
    }
  });

  it('refuses a record a store cannot hold, naming the field', () => {
    const bad = { ...exampleEventRecord(), receivedAt: 1.5 };
    expect(() => EVENT_ROWS.checkStorable(bad)).toThrow(new TypeError('Event for acme/AB123CD cannot be stored: event field receivedAt is not whole epoch ms.'));
  });

  it('a row written without the fields added later reads them as their zero', () => {
    const db = new Database(':memory:');
    migrateSqlite(db);
    const first = sqliteCodec(FIRST_FIELDS);
    const [record] = sample(FIRST_FIELDS, 1);
    db.prepare(first.insertSql).run(...first.toRow(5n, record as unknown as EventRecord, 1000));
    const row = db.prepare<[], Record<string, unknown>>('SELECT * FROM events').safeIntegers().get()!;
    expect(EVENT_ROWS.fromRow(row)).toEqual({ id: 5n, ...record, ...zeros(EVENT_FIELD_LIST), storedAt: 1000 });
    db.close();
  });

  it('a table of every kind: derived DDL, rows, reads, and fields added by the migrations their `since` derives', () => {
    const first = firstRelease(EVERY_KIND_FIELDS);
    const later = EVERY_KIND_FIELDS.filter((f) => f.whenAbsent !== undefined);
    const db = new Database(':memory:');
    const columns = (fields: readonly EventField[]) => sqliteColumns(fields).map((c) => (c.name === 'id' ? 'id INTEGER PRIMARY KEY' : columnDefinition(c)));
    const migrations = withFieldMigrations('SQLite', [{ version: 1, sql: `CREATE TABLE events (${columns(first).join(', ')}) STRICT` }], eventFieldMigration, { fields: EVERY_KIND_FIELDS });
    expect(migrations.map((m) => m.version)).toEqual([1, 2, 3]);
    migrateSqlite(db, migrations.slice(0, 1));
    const before = sqliteCodec(first);
    const old = sample(first, 50);
    old.forEach((r, i) => db.prepare(before.insertSql).run(...before.toRow(BigInt(i + 1), r as unknown as EventRecord, 1000 + i)));

    migrateSqlite(db, migrations);
    expect(db.pragma('user_version', { simple: true })).toBe(3);
    expect(sqliteTable(db)).toEqual(sqliteColumns(EVERY_KIND_FIELDS).sort((a, b) => a.name.localeCompare(b.name)));
    const codec = sqliteCodec(EVERY_KIND_FIELDS);
    const records = sample(EVERY_KIND_FIELDS, 200) as unknown as EventRecord[];
    records.forEach((r, i) => {
      codec.checkStorable(r);
      db.prepare(codec.insertSql).run(...codec.toRow(BigInt(100 + i), r, 2000 + i));
    });
    const rows = db.prepare<[], Record<string, unknown>>('SELECT * FROM events ORDER BY id').safeIntegers().all();
    expect(rows.map((row) => codec.fromRow(row))).toEqual([
      ...old.map((r, i) => ({ id: BigInt(i + 1), ...r, ...zeros(later), storedAt: 1000 + i })),
      ...records.map((r, i) => ({ id: BigInt(100 + i), ...r, storedAt: 2000 + i })),
    ]);
    db.close();
  });
});

// ---- docs ---------------------------------------------------------------------------------------

describe('docs', () => {
  it('docs/analytics.md describes every column of both schemas', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/analytics.md'), 'utf8');
    const namesIn = (section: string) => new Set([...section.matchAll(/^\| ([^|]+) \|/gm)].flatMap((m) => [...m[1]!.matchAll(/`([a-z_]+)`/g)].map((n) => n[1]!)));
    const current = namesIn(doc.slice(doc.indexOf('### `events` columns'), doc.indexOf('### `latest_positions` columns')));
    expect([...current].sort()).toEqual(currentEventColumns().map((c) => c.name).sort());
    // The 18.16 section lists the columns that differ; the others are the current section's.
    const legacy = namesIn(doc.slice(doc.indexOf('Columns of `events` that differ from the current schema'), doc.indexOf('### Example queries on 18.16')));
    const legacyNames = clickhouseColumns().map((c) => c.name);
    expect(legacyNames.filter((n) => !legacy.has(n) && !current.has(n))).toEqual([]);
    expect([...legacy].filter((n) => !legacyNames.includes(n))).toEqual([]);
  });
});

// ---- admin view ---------------------------------------------------------------------------------

describe('admin view', () => {
  it('shows every field but the hidden ones, after the id, with times as text', () => {
    const event: StoredEvent = { id: 12n, ...exampleEventRecord(), receptionTime: { epochMs: 1_714_554_000_500, subMsTicks: 1234 }, storedAt: 1_714_554_002_000 };
    const view = eventView(event);
    expect(Object.keys(view)).toEqual(['id', ...EVENT_FIELD_LIST.filter((f) => f.inView).map((f) => f.name), 'storedAt']);
    expect(view).not.toHaveProperty('dedupeKey');
    expect(view).toMatchObject({
      id: '12',
      eventTime: '2024-05-01T09:00:00Z',
      receptionTime: '2024-05-01T09:00:00.5001234Z',
      receivedAt: '2024-05-01T09:00:01.000Z',
      storedAt: '2024-05-01T09:00:02.000Z',
      sensors: [],
    });
  });
});
