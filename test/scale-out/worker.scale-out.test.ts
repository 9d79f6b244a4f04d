/**
 * The Kafka → ClickHouse worker and the ClickHouse event store, against the real services
 * (`npm run services:up`: Kafka and ClickHouse 18.16). Each suite uses its own topics, consumer
 * groups and database, dropped at the end. The ClickHouse-down test is in test/faults/worker.faults.test.ts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueName } from '../helpers/services.js';
import type { EventInstant, EventRecord, StoredEvent } from '../../shared/backends/types.js';
import type { LastReportSink } from '../../shared/backends/scale-out-types.js';
import {
  ClickHouseEventStore,
  ClickHouseEventWriter,
  MIGRATIONS,
  appliedVersions,
  createClickHouseClient,
  migrate,
  quoteIdentifier,
  quoteString,
  splitByPartition,
  sqlFloat,
  sqlUInt,
  toRow,
  partitionMonth,
  wellFormed,
  type ClickHouseClient,
} from '../../shared/backends/clickhouse/index.js';
import { workerOptionsFromConfig, type Worker } from '../../worker/run.js';
import { backoffDelay } from '../../worker/backoff.js';
import { latestReports, offsetsToCommit, type BufferedMessage } from '../../worker/batch.js';
import { loadConfig } from '../../shared/config/index.js';
import { decodeEvent, encodeEvent, WireFormatError } from '../../shared/events/wire.js';
import { EVENT_FIELD_LIST, FIRST_VERSION } from '../../shared/events/schema.js';
import { eventColumns, EVENT_ROWS } from '../../shared/backends/clickhouse/rows.js';

import { CH, ROOT, sleep, waitFor, makeEvent, type Logged, testLogger, RecordingSink, RecordingMetrics, admin, ch, newTopic, newDatabase, produce, produceRaw, committed, sumCommitted, highWatermarks, counts, start, ids, useWorkerFixture } from '../helpers/worker-fixture.js';

useWorkerFixture();

// ---- pure pieces --------------------------------------------------------------------------------

describe('SQL literals', () => {
  const hostile = [
    "'",
    '\\',
    "\\'",
    "x' OR 1=1 --",
    "'; DROP DATABASE default; --",
    'a\nb\rc\td\0e\u0001\u001f\u007f',
    'ñandú 🚗 中文',
    '\\x41\\n',
    '`backtick` "dq"',
    'trailing\\',
    '{p:String} ? $1',
    "\\\\''\\",
  ];

  it('escapes backslash and quote (and control characters)', () => {
    expect(quoteString("o'brien")).toBe("'o\\'brien'");
    expect(quoteString('a\\b')).toBe("'a\\\\b'");
    expect(quoteString("\\'")).toBe("'\\\\\\''");
    expect(quoteString('x\ny\0')).toBe("'x\\ny\\0'");
    expect(quoteString('\u0001')).toBe("'\\x01'");
    expect(quoteString('lone \ud800 surrogate')).toBe("'lone \ufffd surrogate'");
    expect(wellFormed('ok 🚗 \udc00')).toBe('ok 🚗 \ufffd');
    for (const h of hostile) {
      const q = quoteString(h);
      // Inside the quotes, every quote is escaped: nothing can close the literal early.
      expect(q.slice(1, -1).replace(/\\./gs, '')).not.toMatch(/['\\]/);
    }
  });

  it('refuses bad identifiers and numbers', () => {
    expect(quoteIdentifier('gateway_1')).toBe('`gateway_1`');
    for (const bad of ['', 'a-b', 'a;b', 'db`x', '1abc', 'a b', 'ñ']) expect(() => quoteIdentifier(bad)).toThrow();
    expect(sqlUInt(5)).toBe('5');
    expect(sqlUInt(18446744073709551615n)).toBe('18446744073709551615');
    for (const bad of [-1, 1.5, NaN, Infinity]) expect(() => sqlUInt(bad)).toThrow();
    expect(() => sqlUInt(-1n)).toThrow();
    expect(sqlFloat(-34.5)).toBe('-34.5');
    expect(() => sqlFloat(NaN)).toThrow();
  });

  it('round-trips hostile strings through ClickHouse unchanged', async () => {
    for (const h of [...hostile, 'lone \udc00']) {
      const r = await ch.query({ query: `SELECT ${quoteString(h)} AS s`, format: 'JSONEachRow' });
      const [row] = await r.json<{ s: string }>();
      expect(row!.s).toBe(wellFormed(h));
    }
  });
});

describe('worker pieces', () => {
  const msg = (partition: number, offset: number, event: EventRecord | null, id = 1n): BufferedMessage => ({
    partition,
    offset: BigInt(offset),
    arrivedAt: 0,
    decoded: event === null ? null : { id, event },
  });

  it('commits the next offset per partition, poison included', () => {
    const e = makeEvent();
    const m = offsetsToCommit([msg(0, 5, e), msg(1, 9, null), msg(0, 6, e), msg(2, 0, e)]);
    expect([...m]).toEqual([
      [0, 7n],
      [1, 10n],
      [2, 1n],
    ]);
  });

  it('reports the latest event time per provider and Dominio', () => {
    const at = (epochMs: number, subMsTicks = 0): EventInstant => ({ epochMs, subMsTicks });
    const updates = latestReports([
      msg(0, 1, makeEvent({ systemUser: 'p', dominio: 'A', eventTime: at(1000, 5) })),
      msg(0, 2, makeEvent({ systemUser: 'p', dominio: 'A', eventTime: at(1000, 7) })),
      msg(0, 3, makeEvent({ systemUser: 'p', dominio: 'A', eventTime: at(900) })),
      msg(1, 1, makeEvent({ systemUser: 'q', dominio: 'A', eventTime: at(5) })),
      msg(1, 2, null),
    ]);
    expect(updates).toEqual([
      { systemUser: 'p', dominio: 'A', at: at(1000, 7) },
      { systemUser: 'q', dominio: 'A', at: at(5) },
    ]);
  });

  it('backs off exponentially up to the cap', () => {
    const mid = () => 0.5;
    expect([0, 1, 2, 3, 4, 5, 6, 10].map((a) => backoffDelay(a, { initialMs: 100, maxMs: 5000 }, mid))).toEqual([
      100, 200, 400, 800, 1600, 3200, 5000, 5000,
    ]);
  });

  it('refuses event messages a row cannot hold, with the reason', () => {
    const message = (patch: Record<string, unknown>) => encodeEvent(7n, { ...makeEvent(), ...patch });
    expect(decodeEvent(message({})).id).toBe(7n);
    expect(decodeEvent(message({ rumbo: null, valido: null, receptionTime: null, receptionTimeText: null, crudo: null })).id).toBe(7n);
    const reason = (patch: Record<string, unknown>) => {
      try {
        decodeEvent(message(patch));
        return 'accepted';
      } catch (err) {
        expect(err).toBeInstanceOf(WireFormatError);
        return (err as Error).message;
      }
    };
    expect(reason({ rumbo: 'x' })).toMatch(/rumbo/);
    expect(reason({ validPosition: 1 })).toMatch(/validPosition/);
    expect(reason({ valido: 'yes' })).toMatch(/valido/);
    expect(reason({ eventTime: { epochMs: 1.5, subMsTicks: 0 } })).toMatch(/eventTime/);
    expect(reason({ eventTime: { epochMs: 1, subMsTicks: 10_000 } })).toMatch(/eventTime/);
    expect(reason({ receptionTime: { epochMs: 1 } })).toMatch(/receptionTime/);
    expect(reason({ receivedAt: 1.5 })).toMatch(/receivedAt/);
    expect(reason({ latitud: null })).toMatch(/latitud/);
    expect(reason({ dominio: 5 })).toMatch(/dominio/);
    expect(reason({ sensors: [{ clave: 1, valor: 'x' }] })).toMatch(/sensor/);
    expect(reason({ sensors: {} })).toMatch(/sensors/);
    expect(reason({ crudo: 5 })).toMatch(/crudo/);
  });

  it('splits an insert spanning more months than one block may hold', () => {
    const rows = Array.from({ length: 250 }, (_, i) => {
      const ms = Date.UTC(2000, i, 15);
      return { row: toRow(BigInt(i + 1), makeEvent({ eventTime: { epochMs: ms, subMsTicks: 0 } }), 0), partition: partitionMonth(ms) };
    });
    const groups = splitByPartition(rows);
    expect(groups.map((g) => g.length)).toEqual([100, 100, 50]);
    expect(splitByPartition(rows.slice(0, 100))).toHaveLength(1);
    expect(splitByPartition([])).toEqual([]);
  });

  it('builds options from the service configuration', () => {
    const config = loadConfig({ KAFKA_BROKERS: 'a:1,b:2', CLICKHOUSE_URL: 'http://ch:8123/', WORKER_BATCH_ROWS: '10' });
    const o = workerOptionsFromConfig(config, { lastReports: new RecordingSink(), logger: testLogger([]) });
    expect(o).toMatchObject({
      brokers: ['a:1', 'b:2'],
      topic: 'gateway.events',
      groupId: 'gateway-worker',
      batchRows: 10,
      batchMs: 500,
      clickhouse: { url: 'http://ch:8123', database: 'gateway', username: 'default', password: '' },
    });
    expect(() => workerOptionsFromConfig(loadConfig({}), { lastReports: new RecordingSink(), logger: testLogger([]) })).toThrow(/KAFKA_BROKERS/);
  });
});

// ---- ClickHouse schema and store ---------------------------------------------------------------

describe('ClickHouse schema and event store', () => {
  const db = newDatabase();
  let client: ClickHouseClient;
  let store: ClickHouseEventStore;
  let writer: ClickHouseEventWriter;

  beforeAll(() => {
    client = createClickHouseClient({ ...CH, database: db });
    store = new ClickHouseEventStore(client, db);
    writer = new ClickHouseEventWriter(client, db);
  });
  afterAll(() => client.close());

  it('applies the migrations once (idempotent)', async () => {
    const first = await migrate(client, db);
    expect(first.applied).toEqual(MIGRATIONS.map((m) => m.version));
    const second = await migrate(client, db);
    expect(second).toEqual({ applied: [], current: first.current });
    expect(await appliedVersions(client, db)).toEqual(MIGRATIONS.map((m) => m.version));
    const r = await client.query({ query: `SELECT count() AS n FROM ${quoteIdentifier(db)}.schema_migrations FINAL`, format: 'JSONEachRow' });
    expect(Number((await r.json<{ n: string }>())[0]!.n)).toBe(MIGRATIONS.length);
    const t = await client.query({ query: `SELECT name FROM system.tables WHERE database = ${quoteString(db)} ORDER BY name`, format: 'JSONEachRow' });
    expect((await t.json<{ name: string }>()).map((x) => x.name)).toEqual(['arrivals', 'arrivals_mv', 'events', 'latest_positions', 'latest_positions_mv', 'schema_migrations']);
  });

  const stored = (id: bigint, over: Partial<EventRecord>) => ({ id, event: makeEvent(over) });
  const rowsOf = (list: { id: bigint; event: EventRecord }[]) =>
    list.map(({ id, event }) => ({ row: toRow(id, event, Date.now()), partition: partitionMonth(event.eventTime.epochMs) }));

  it('returns the latest events by id, filtered, once per id', async () => {
    const list = [
      stored(10n, { systemUser: 'p1', dominio: 'A' }),
      stored(11n, { systemUser: 'p1', dominio: 'B' }),
      stored(12n, { systemUser: 'p2', dominio: 'A' }),
      stored(13n, { systemUser: 'p1', dominio: 'A' }),
      stored(14n, { systemUser: "p'3\\", dominio: 'A' }),
      // 2^53 + 1: must not be rounded.
      stored(9007199254740993n, { systemUser: 'p2', dominio: 'B' }),
    ];
    await writer.insertRows(rowsOf(list));
    // A replayed copy of two events (as after a worker crash): stored twice, read once.
    await writer.insertRows(rowsOf([list[0]!, list[3]!]));
    const idsOf = (events: StoredEvent[]) => events.map((e) => e.id);
    expect(idsOf(await store.recent({ limit: 100 }))).toEqual([9007199254740993n, 14n, 13n, 12n, 11n, 10n]);
    expect(idsOf(await store.recent({ limit: 3 }))).toEqual([9007199254740993n, 14n, 13n]);
    expect(idsOf(await store.recent({ limit: Infinity }))).toEqual([9007199254740993n, 14n, 13n, 12n, 11n, 10n]);
    expect(idsOf(await store.recent({ provider: 'p1', limit: 10 }))).toEqual([13n, 11n, 10n]);
    expect(idsOf(await store.recent({ provider: 'p1', limit: 1 }))).toEqual([13n]);
    expect(idsOf(await store.recent({ dominio: 'A', limit: 10 }))).toEqual([14n, 13n, 12n, 10n]);
    expect(idsOf(await store.recent({ provider: 'p1', dominio: 'A', limit: 10 }))).toEqual([13n, 10n]);
    expect(idsOf(await store.recent({ provider: 'p1', dominio: 'A', limit: Infinity }))).toEqual([13n, 10n]);
    expect(idsOf(await store.recent({ provider: "p'3\\", limit: 10 }))).toEqual([14n]);
    expect(await store.recent({ limit: 0 })).toEqual([]);
    expect(await store.recent({ provider: "p1' OR 1=1 --", limit: 10 })).toEqual([]);
    expect(await store.recent({ provider: 'nobody', limit: 10 })).toEqual([]);
    const [first] = await store.recent({ provider: 'p1', dominio: 'A', limit: 1 });
    const { storedAt, ...rest } = first!;
    expect(rest).toEqual({ ...list[3]!.event, id: 13n });
    expect(Math.abs(storedAt - Date.now())).toBeLessThan(60_000);
  });

  it('stores a batch whose event times span more than 100 months', async () => {
    const list = Array.from({ length: 150 }, (_, i) =>
      stored(BigInt(1000 + i), { systemUser: 'months', eventTime: { epochMs: Date.UTC(2010, i, 3), subMsTicks: 0 } }),
    );
    await writer.insertRows(rowsOf(list));
    expect((await store.recent({ provider: 'months', limit: 1000 })).length).toBe(150);
  });

  it('keeps instants outside the DateTime range exactly (clamping only the DateTime columns)', async () => {
    const minValue = -62135596800000; // 0001-01-01T00:00:00Z, .NET DateTime.MinValue
    const far = Date.UTC(2200, 0, 1);
    await writer.insertRows(
      rowsOf([
        stored(2001n, { systemUser: 'range', eventTime: { epochMs: minValue, subMsTicks: 0 } }),
        stored(2002n, { systemUser: 'range', eventTime: { epochMs: far, subMsTicks: 9999 } }),
      ]),
    );
    const got = await store.recent({ provider: 'range', limit: 10 });
    expect(got.map((e) => e.eventTime)).toEqual([
      { epochMs: far, subMsTicks: 9999 },
      { epochMs: minValue, subMsTicks: 0 },
    ]);
    const r = await client.query({
      query: `SELECT toString(id) AS i, toString(event_time) AS t FROM ${quoteIdentifier(db)}.events WHERE system_user = 'range' ORDER BY id`,
      format: 'JSONEachRow',
    });
    // 18.16 prints the zero DateTime as 0000-00-00 00:00:00, current releases as 1970-01-01 00:00:00.
    const rows = await r.json<{ i: string; t: string }>();
    expect(rows[1]).toEqual({ i: '2002', t: '2105-12-31 23:59:59' });
    expect(['1970-01-01 00:00:00', '0000-00-00 00:00:00']).toContain(rows[0]!.t);
  });
});

describe('worker: Kafka → ClickHouse', () => {
  const db = newDatabase();
  const groupId = uniqueName('wg');
  let topic: string;
  let worker: Worker;
  const sink = new RecordingSink();
  const metrics = new RecordingMetrics();
  const log: Logged[] = [];
  let store: ClickHouseEventStore;
  let client: ClickHouseClient;
  let produced = 0;
  let poisonProduced = 0;
  const timeBatch: { id: bigint; event: EventRecord }[] = [];

  beforeAll(async () => {
    topic = await newTopic(4);
    worker = await start({ topic, groupId, database: db, lastReports: sink, metrics: metrics.sink }, log);
    client = createClickHouseClient({ ...CH, database: db });
    store = new ClickHouseEventStore(client, db);
  }, 60_000);
  afterAll(() => client.close());

  it('stores every field of an event exactly', async () => {
    const full = makeEvent({
      systemUser: "prov'full\\",
      dominio: 'AA123BB',
      nroSerie: 'SN-1',
      codigo: '42',
      latitud: -34.603722,
      longitud: -58.381592,
      altitud: 25.5,
      velocidad: 0.1 + 0.2,
      rumbo: null,
      validPosition: false,
      valido: false,
      eventTimeText: '2024-03-05T09:34:56.7891234-03:00',
      eventTime: { epochMs: Date.UTC(2024, 2, 5, 12, 34, 56, 789), subMsTicks: 1234 },
      receptionTimeText: '2024-03-05T09:35:00',
      receptionTime: { epochMs: Date.UTC(2024, 2, 5, 12, 35, 0, 0), subMsTicks: 0 },
      receivedAt: Date.UTC(2024, 2, 5, 12, 35, 1, 250),
      crudo: '$GPRMC,123519,A,4807.038,N\n<raw & "crudo">',
      sensors: [
        { clave: 'temp', valor: '21.5' },
        { clave: "o'k\\", valor: '' },
        { clave: 'ñ', valor: '🚗' },
      ],
      operation: 'LoginYInsertarEvento2',
      dedupeKey: 'dedupe-full',
    });
    const other = makeEvent({ rumbo: 271.25, valido: true, receptionTimeText: null, receptionTime: null, crudo: 'x', sensors: [] });
    const fullId = 18446744073709551615n; // UInt64 max: the id survives as 64 bits
    await produce(topic, [
      { id: fullId, event: full },
      { id: 9007199254740993n, event: other },
    ]);
    produced += 2;

    const rows = await waitFor('the two rows', async () => {
      const r = await client.query({
        query: `SELECT *, toString(event_time) AS et, toString(received_at) AS ra, toString(reception_time) AS rt, toUInt32(stored_at) AS sa
                FROM ${quoteIdentifier(db)}.events FINAL WHERE id IN (${fullId}, 9007199254740993) ORDER BY id DESC`,
        format: 'JSONEachRow',
      });
      const got = await r.json<Record<string, unknown>>();
      return got.length === 2 ? got : undefined;
    });
    const { stored_at, sa, ...row } = rows[0]!;
    // The first release's columns spelled out; those of each field added later (a `since`) as the
    // text row codec writes them, so the worker's RowBinary rows are held to the other codec.
    const later = EVENT_FIELD_LIST.filter((f) => f.since > FIRST_VERSION);
    const laterColumns = new Set(eventColumns(later).slice(1, -1).map((c) => c.name));
    const laterValues = Object.fromEntries(Object.entries(EVENT_ROWS.toRow(fullId, full, 0)).filter(([column]) => laterColumns.has(column)));
    expect(row).toEqual({
      ...laterValues,
      id: '18446744073709551615',
      system_user: "prov'full\\",
      dominio: 'AA123BB',
      nro_serie: 'SN-1',
      codigo: '42',
      latitud: -34.603722,
      longitud: -58.381592,
      altitud: 25.5,
      velocidad: 0.30000000000000004,
      rumbo: null,
      valid_position: 0,
      valido: 0,
      event_time_text: '2024-03-05T09:34:56.7891234-03:00',
      event_time: '2024-03-05 12:34:56',
      event_time_ms: String(Date.UTC(2024, 2, 5, 12, 34, 56, 789)),
      event_time_ticks: 1234,
      reception_time_text: '2024-03-05T09:35:00',
      reception_time: '2024-03-05 12:35:00',
      reception_time_ms: String(Date.UTC(2024, 2, 5, 12, 35, 0, 0)),
      reception_time_ticks: 0,
      received_at: '2024-03-05 12:35:01',
      received_at_ms: String(Date.UTC(2024, 2, 5, 12, 35, 1, 250)),
      crudo: '$GPRMC,123519,A,4807.038,N\n<raw & "crudo">',
      sensor_keys: ['temp', "o'k\\", 'ñ'],
      sensor_values: ['21.5', '', '🚗'],
      operation: 'LoginYInsertarEvento2',
      dedupe_key: 'dedupe-full',
      et: '2024-03-05 12:34:56',
      ra: '2024-03-05 12:35:01',
      rt: '2024-03-05 12:35:00',
    });
    // stored_at is set by the worker (an omitted DEFAULT now() column would be zero on 18.16).
    expect(Math.abs(Number(sa) * 1000 - Date.now())).toBeLessThan(60_000);
    expect(stored_at).not.toMatch(/^0000/);
    expect(rows[1]).toMatchObject({ rumbo: 271.25, valido: 1, valid_position: 1, reception_time: null, reception_time_ms: null, reception_time_ticks: null, reception_time_text: null, crudo: 'x', sensor_keys: [], sensor_values: [] });

    // The store reads back exactly what was sent.
    const [back] = await store.recent({ provider: "prov'full\\", limit: 5 });
    const { storedAt, ...event } = back!;
    expect(event).toEqual({ ...full, id: fullId });
    expect(storedAt).toBe(Number(sa) * 1000);
    const [back2] = await store.recent({ provider: other.systemUser, dominio: other.dominio, limit: 1 });
    const { storedAt: _s2, ...event2 } = back2!;
    expect(event2).toEqual({ ...other, id: 9007199254740993n });
  });

  it('fills latest_positions with the latest event per vehicle', async () => {
    const base = Date.UTC(2024, 5, 1);
    const evs = [
      { id: 501n, event: makeEvent({ systemUser: 'lp', dominio: 'V1', latitud: 1, eventTime: { epochMs: base + 3000, subMsTicks: 1 } }) },
      { id: 502n, event: makeEvent({ systemUser: 'lp', dominio: 'V1', latitud: 2, eventTime: { epochMs: base + 3000, subMsTicks: 2 } }) },
      { id: 503n, event: makeEvent({ systemUser: 'lp', dominio: 'V1', latitud: 3, eventTime: { epochMs: base + 1000, subMsTicks: 0 } }) },
      { id: 504n, event: makeEvent({ systemUser: 'lp', dominio: 'V2', latitud: 4, eventTime: { epochMs: base, subMsTicks: 0 } }) },
    ];
    await produce(topic, evs);
    produced += evs.length;
    const rows = await waitFor('latest positions', async () => {
      const r = await client.query({
        query: `SELECT dominio, toString(id) AS id, latitud FROM ${quoteIdentifier(db)}.latest_positions FINAL WHERE system_user = 'lp' ORDER BY dominio`,
        format: 'JSONEachRow',
      });
      const got = await r.json<{ dominio: string; id: string; latitud: number }>();
      return got.length === 2 && got[0]!.id === '502' ? got : undefined;
    });
    expect(rows).toEqual([
      { dominio: 'V1', id: '502', latitud: 2 },
      { dominio: 'V2', id: '504', latitud: 4 },
    ]);
  });

  it('tells the last-report sink the latest event time per vehicle', async () => {
    const base = Date.UTC(2024, 6, 1);
    const at = (s: number, t = 0): EventInstant => ({ epochMs: base + s * 1000, subMsTicks: t });
    const evs = [
      { id: 601n, event: makeEvent({ systemUser: 'lr', dominio: 'A', eventTime: at(5) }) },
      { id: 602n, event: makeEvent({ systemUser: 'lr', dominio: 'A', eventTime: at(9, 3) }) },
      { id: 603n, event: makeEvent({ systemUser: 'lr', dominio: 'A', eventTime: at(7) }) },
      { id: 604n, event: makeEvent({ systemUser: 'lr', dominio: 'B', eventTime: at(1) }) },
      { id: 605n, event: makeEvent({ systemUser: 'lr2', dominio: 'A', eventTime: at(2) }) },
    ];
    // One vehicle per key, so all of a vehicle's events are in one partition, in order.
    await produce(topic, evs);
    produced += evs.length;
    // The vehicles are in different partitions, so in batches that may end in any order: wait for all three.
    await waitFor('last reports', () => sink.latest.get('lr2|A') !== undefined && sink.latest.get('lr|B') !== undefined && sink.latest.get('lr|A')?.epochMs === base + 9000);
    expect(sink.latest.get('lr|A')).toEqual(at(9, 3));
    expect(sink.latest.get('lr|B')).toEqual(at(1));
    expect(sink.latest.get('lr2|A')).toEqual(at(2));
    // At most one update per vehicle per call.
    for (const call of sink.calls) expect(new Set(call.map((u) => `${u.systemUser}|${u.dominio}`)).size).toBe(call.length);
  });

  it('batches by time when few events arrive', async () => {
    // Every event of the tests before counted first, so that only this test's batches follow `before`.
    await waitFor('the earlier batches counted', () => metrics.batchSizes.reduce((a, b) => a + b, 0) >= produced);
    const before = metrics.batchSizes.length;
    const t0 = Date.now();
    const evs = ids(7, 700n).map((id) => ({ id, event: makeEvent({ systemUser: 'bt' }) }));
    timeBatch.push(...evs);
    await produce(topic, evs);
    produced += evs.length;
    await waitFor('7 rows', async () => (await store.recent({ provider: 'bt', limit: 100 })).length === 7);
    expect(Date.now() - t0).toBeLessThan(5_000);
    // The rows are visible as soon as the server has stored them, a moment before the worker has
    // read the insert's answer and counted the batch.
    const counted = () => metrics.batchSizes.slice(before).reduce((a, b) => a + b, 0);
    await waitFor('the batches counted', () => counted() >= 7);
    const sizes = metrics.batchSizes.slice(before);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(7);
    expect(Math.max(...sizes)).toBeLessThan(5000);
    expect(metrics.insertSeconds.length).toBe(metrics.batchSizes.length);
  });

  it('skips poison messages, counts them and commits past them', async () => {
    const good = ids(3, 800n).map((id) => ({ id, event: makeEvent({ systemUser: 'poison-neighbours' }) }));
    const badRecord = { v: 1, id: '899', event: { ...makeEvent(), rumbo: 'north' } };
    await produceRaw(topic, [
      Buffer.from('not json at all'),
      Buffer.from(JSON.stringify({ v: 99, id: '898', event: makeEvent() })),
      Buffer.from(JSON.stringify(badRecord)),
      null,
    ]);
    poisonProduced += 4;
    await produce(topic, good);
    produced += good.length;
    await waitFor('good neighbours stored', async () => (await store.recent({ provider: 'poison-neighbours', limit: 10 })).length === 3);
    expect(worker.stats.poison).toBe(4);
    expect(metrics.poisons).toBe(4);
    const warned = log.filter((l) => /poison/.test(l.message));
    expect(warned).toHaveLength(4);
    // Logged by position and reason only, never the payload.
    for (const w of warned) expect(JSON.stringify(w.fields)).not.toMatch(/not json at all|north/);
    const high = await highWatermarks(topic);
    expect(high).toBe(produced + poisonProduced);
    await waitFor('offsets committed past the poison', async () => sumCommitted(await committed(groupId, topic)) === high);
    await waitFor('lag measured as 0', () => Object.values(worker.stats.lag).reduce((a, b) => a + b, 0) === 0 && Object.keys(worker.stats.lag).length === 4);
    expect([...metrics.lags.values()].every((l) => l === 0)).toBe(true);
  });

  it('replays (offsets reset to the beginning) without duplicate rows', async () => {
    const before = await counts(db);
    expect(before.rows).toBe(before.ids);
    await worker.stop();
    await admin.resetOffsets({ groupId, topic, earliest: true });
    expect(sumCommitted(await committed(groupId, topic))).toBe(0);
    const replayed = new RecordingSink();
    // Migrations run again at start: idempotent.
    const again = await start({ topic, groupId, database: db, lastReports: replayed });
    const high = await highWatermarks(topic);
    await waitFor('replay committed', async () => sumCommitted(await committed(groupId, topic)) === high);
    expect(again.stats.insertedRows).toBe(produced);
    const after = await counts(db);
    expect(after.ids).toBe(before.ids);
    expect(after.rows).toBe(before.ids);
    const recent = await store.recent({ limit: 100_000 });
    expect(recent.length).toBe(before.ids);
    expect(new Set(recent.map((e) => e.id)).size).toBe(recent.length);
    // Re-producing identical messages (a producer retry) does not duplicate either.
    await produce(topic, timeBatch);
    produced += timeBatch.length;
    await waitFor('re-produced stored', async () => sumCommitted(await committed(groupId, topic)) === (await highWatermarks(topic)));
    expect((await store.recent({ provider: 'bt', limit: 100 })).length).toBe(7);
    const final = await counts(db);
    expect(final.rows).toBe(final.ids);
    expect(final.ids).toBe(before.ids);
    await again.stop();
  });
});

describe('worker: every wire version', () => {
  it('stores the fixture messages of versions 1, 2 and 3 (test/fixtures/events) from one topic, none set aside', async () => {
    const fixture = (file: string): Buffer[] =>
      readFileSync(path.join(ROOT, 'test/fixtures/events', file), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => Buffer.from(l, file.endsWith('.hex') ? 'hex' : 'utf8'));
    const byVersion = ['v1.jsonl', 'v2.hex', 'v3.hex'].map(fixture);
    // The three files hold the same records under the same ids; the versions' first bytes differ.
    expect(byVersion.map((m) => m.map((b) => b[0]))).toEqual([[0x7b, 0x7b], [2, 2], [0x09, 0x09]]);
    const db = newDatabase();
    const topic = await newTopic(1);
    const groupId = uniqueName('wv');
    const metrics = new RecordingMetrics();
    const worker = await start({ topic, groupId, database: db, metrics: metrics.sink });
    const client = createClickHouseClient({ ...CH, database: db });
    try {
      // One version after the other, each waited for, so each insert is of one version's rows.
      for (const [v, messages] of byVersion.entries()) {
        await produceRaw(topic, messages);
        await waitFor(`version ${v + 1} committed`, async () => sumCommitted(await committed(groupId, topic)) === 2 * (v + 1));
      }
      expect(worker.stats.poison).toBe(0);
      expect(metrics.poisons).toBe(0);
      const store = new ClickHouseEventStore(client, db);
      const expected = byVersion[0]!.map((m) => decodeEvent(m));
      for (const { id, event } of expected) {
        const [back] = await store.recent({ provider: event.systemUser, dominio: event.dominio, limit: 1 });
        const { storedAt: _, ...stored } = back!;
        expect(stored).toEqual({ ...event, id });
      }
      // Every version's messages were inserted (the store collapses the same id's rows).
      expect(metrics.batchSizes.reduce((a, b) => a + b, 0)).toBe(6);
    } finally {
      await worker.stop();
      await client.close();
    }
  });
});

describe('worker batching by rows and draining on stop', () => {
  const db = newDatabase();
  const groupId = uniqueName('wg');

  it('inserts full batches of batchRows, and the remainder on stop()', async () => {
    // One partition: batches are per partition.
    const topic = await newTopic(1);
    const metrics = new RecordingMetrics();
    const w = await start({ topic, groupId, database: db, batchRows: 100, batchMs: 600_000, metrics: metrics.sink });
    await produce(
      topic,
      ids(250, 1n).map((id) => ({ id, event: makeEvent({ systemUser: 'rows' }) })),
    );
    await waitFor('two full batches', () => w.stats.insertedRows === 200);
    await sleep(1_000);
    expect(w.stats.insertedRows).toBe(200);
    expect(w.stats.buffered).toBe(50);
    expect(metrics.batchSizes).toEqual([100, 100]);
    expect(sumCommitted(await committed(groupId, topic))).toBe(200);
    await w.stop();
    expect(metrics.batchSizes).toEqual([100, 100, 50]);
    expect(sumCommitted(await committed(groupId, topic))).toBe(250);
    expect(await counts(db)).toEqual({ rows: 250, ids: 250, raw: 250 });
  });
});

describe('worker crashes', () => {
  it('loses nothing and duplicates nothing when killed with a buffered batch', async () => {
    const db = newDatabase();
    const groupId = uniqueName('wg');
    const topic = await newTopic(4);
    const a = await start({ topic, groupId, database: db, batchRows: 10_000, batchMs: 600_000 });
    await produce(
      topic,
      ids(300, 1n).map((id) => ({ id, event: makeEvent({ systemUser: 'crash1' }) })),
    );
    await waitFor('buffered', () => a.stats.buffered === 300);
    await a.abort(); // no flush, no commit
    expect(sumCommitted(await committed(groupId, topic))).toBe(0);
    const b = await start({ topic, groupId, database: db });
    await waitFor('replayed and committed', async () => sumCommitted(await committed(groupId, topic)) === 300);
    expect(await counts(db)).toEqual({ rows: 300, ids: 300, raw: 300 });
    await b.stop();
  });

  it('collapses rows inserted before a crash and inserted again after it', async () => {
    const db = newDatabase();
    const groupId = uniqueName('wg');
    const topic = await newTopic(4);
    // The sink never answers: rows are inserted, but the offsets are never committed.
    const stuck: LastReportSink = { record: () => new Promise<void>(() => undefined) };
    const a = await start({ topic, groupId, database: db, lastReports: stuck, lastReportTimeoutMs: 600_000 });
    await produce(
      topic,
      ids(400, 5000n).map((id) => ({ id, event: makeEvent({ systemUser: 'crash2' }) })),
    );
    await waitFor('inserted by the first worker', () => a.stats.insertedRows >= 1);
    const insertedByA = a.stats.insertedRows;
    await a.abort();
    expect(sumCommitted(await committed(groupId, topic))).toBe(0);
    const sink = new RecordingSink();
    const b = await start({ topic, groupId, database: db, lastReports: sink });
    await waitFor('replayed and committed', async () => sumCommitted(await committed(groupId, topic)) === 400);
    const c = await counts(db);
    expect(c.ids).toBe(400);
    expect(c.rows).toBe(400);
    // The first worker's rows were inserted again (stored twice until a merge collapses them;
    // FINAL / LIMIT 1 BY id hide the copies meanwhile).
    expect(insertedByA).toBeGreaterThan(0);
    expect(b.stats.insertedRows).toBe(400);
    expect(c.raw).toBeGreaterThanOrEqual(400);
    const store = new ClickHouseEventStore(ch, db);
    const recent = await store.recent({ provider: 'crash2', limit: 1000 });
    expect(recent.length).toBe(400);
    expect(sink.calls.length).toBeGreaterThan(0);
    await b.stop();
  });
});

describe('throughput', () => {
  it('stores 100,000 events and reports the insert rate', async () => {
    const total = Number(process.env.WORKER_BENCH_EVENTS ?? 100_000);
    const db = newDatabase();
    const groupId = uniqueName('wg');
    const topic = await newTopic(4);
    const events = ids(total, 1n).map((id) => ({
      id,
      event: makeEvent({ systemUser: `bench${Number(id) % 20}`, sensors: [{ clave: 'ign', valor: '1' }], crudo: 'raw' }),
    }));
    const p0 = performance.now();
    await produce(topic, events);
    const produceSeconds = (performance.now() - p0) / 1000;
    const metrics = new RecordingMetrics();
    const t0 = performance.now();
    const w = await start({ topic, groupId, database: db, batchRows: 5000, batchMs: 500, metrics: metrics.sink });
    const joined = performance.now();
    await waitFor('all stored', () => w.stats.insertedRows >= total, 120_000);
    const seconds = (performance.now() - joined) / 1000;
    const sizes = metrics.batchSizes;
    const insertTotal = metrics.insertSeconds.reduce((a, b) => a + b, 0);
    console.log(
      `[worker throughput] ${total} events: produced in ${produceSeconds.toFixed(1)} s; worker start ${((joined - t0) / 1000).toFixed(1)} s; ` +
        `stored in ${seconds.toFixed(1)} s = ${Math.round(total / seconds)} rows/s end to end; ` +
        `${sizes.length} inserts, sizes min ${Math.min(...sizes)} / median ${[...sizes].sort((a, b) => a - b)[sizes.length >> 1]} / max ${Math.max(...sizes)}; ` +
        `time inside inserts ${insertTotal.toFixed(1)} s = ${Math.round(total / insertTotal)} rows/s`,
    );
    expect(Math.max(...sizes)).toBeLessThanOrEqual(5000);
    await waitFor('committed', async () => sumCommitted(await committed(groupId, topic)) === total);
    expect(await counts(db)).toMatchObject({ rows: total, ids: total });
    await w.stop();
  }, 180_000);
});

// ---- faults (last) -------------------------------------------------------------------------------

