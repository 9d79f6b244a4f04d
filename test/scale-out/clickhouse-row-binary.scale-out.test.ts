/**
 * The worker's RowBinary encoder (shared/backends/clickhouse/row-binary.ts) against the text path
 * it replaced: the same records are inserted as TabSeparated into one database and as RowBinary
 * into another, and every stored column is read back and compared, on the real ClickHouse 18.16
 * server (18.16 schema) and on ClickHouse 26 embedded by chdb (current schema, and the 18.16 schema
 * an older database keeps on a current release). Records: generated over every value range a
 * field accepts, plus the texts a binary length prefix can get wrong (multi-byte, over 127 bytes,
 * lone surrogates, separators the text format escapes).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_FIELD_LIST, type EventRecord } from '../../shared/events/schema.js';
import { createClickHouseClient, quoteIdentifier, type ClickHouseClient } from '../../shared/backends/clickhouse/index.js';
import { CURRENT_MIGRATIONS } from '../../shared/backends/clickhouse/schema-current.js';
import { MIGRATIONS, migrate } from '../../shared/backends/clickhouse/schema.js';
import { ClickHouseEventWriter, type BinaryBodies } from '../../shared/backends/clickhouse/writer.js';
import type { SchemaFamily } from '../../shared/backends/clickhouse/family.js';
import { BinaryBuffer } from '../../shared/backends/clickhouse/binary-buffer.js';
import { chdbConnection } from '../helpers/chdb.js';
import { makeEvent } from '../helpers/worker-fixture.js';
import { sample } from '../helpers/event-samples.js';
import { services, uniqueName } from '../helpers/services.js';

const STORED_AT = Date.UTC(2026, 10, 25, 21, 0, 7);

/** Texts where a length prefix or an escape could go wrong. */
const AWKWARD_TEXTS = [
  '',
  'tab\there, newline\nthere, cr\r, backslash \\ and quote \' and NUL \0',
  '€'.repeat(42), // 42 UTF-16 units, 126 bytes: the longest the one-byte-length fast path takes
  '€'.repeat(43), // 43 units, 129 bytes: a two-byte length, measured first
  'ñ'.repeat(100), // 200 bytes
  'x'.repeat(5_000),
  'lone \ud800 high and \udc00 low surrogates, a pair 😀',
  '\u007f\u0080\u07ff\u0800\uffff',
];

function awkwardEvents(): EventRecord[] {
  return AWKWARD_TEXTS.map((text, i) =>
    makeEvent({
      dominio: text,
      nroSerie: `${i}`,
      crudo: text,
      rumbo: i % 2 === 0 ? null : -0.1 * i,
      valido: i % 3 === 0 ? null : i % 3 === 1,
      receptionTime: i % 2 === 0 ? null : { epochMs: -62_135_596_800_000 + i, subMsTicks: 9_999 - i },
      receptionTimeText: i % 2 === 0 ? null : text,
      sensors: Array.from({ length: i * 20 }, (_, k) => ({ clave: `${text.slice(0, 10)}${k}`, valor: text })),
      dedupeKey: text,
    }),
  );
}

const records = (): EventRecord[] => [...(sample(EVENT_FIELD_LIST, 300) as EventRecord[]), ...awkwardEvents()];

interface Target {
  client: ClickHouseClient;
  bodies: BinaryBodies;
  /**
   * Receipt times within 60 days: the 18.16 schema's arrivals view partitions by receipt day,
   * which a current release refuses past 100 days per insert (the writer splits by event month only).
   */
  recentReceipts?: true;
  drop: (db: string) => Promise<void>;
}

/**
 * Every column of every row, by id; Float64 columns as their exact bytes: hex of
 * reinterpretAsString, which both releases have (it drops trailing zero bytes).
 */
async function storedRows(client: ClickHouseClient, db: string): Promise<Record<string, unknown>[]> {
  const columns = await (
    await client.query({ query: `SELECT name, type FROM system.columns WHERE database = '${db}' AND table = 'events' ORDER BY name`, format: 'JSONEachRow' })
  ).json<{ name: string; type: string }>();
  const select = columns.map(({ name, type }) => {
    if (/^Float64( |$)/.test(type)) return `hex(reinterpretAsString(${name})) AS ${name}`;
    if (/^Nullable\(Float64\)/.test(type)) return `if(isNull(${name}), NULL, hex(reinterpretAsString(assumeNotNull(${name})))) AS ${name}`;
    return name;
  });
  const result = await client.query({ query: `SELECT ${select.join(', ')} FROM ${quoteIdentifier(db)}.events ORDER BY id`, format: 'JSONEachRow' });
  return result.json<Record<string, unknown>>();
}

function differential(label: string, family: SchemaFamily, target: () => Target): void {
  it(`${label}: RowBinary stores what TabSeparated stores, column for column`, async () => {
    const { client, bodies, drop, recentReceipts } = target();
    const list = records().map((event, i) => ({ id: BigInt(i + 1), event: recentReceipts ? { ...event, receivedAt: STORED_AT - (i % 60) * 86_400_000 } : event }));
    const stored: Record<string, unknown>[][] = [];
    for (const format of ['TabSeparated', 'RowBinary'] as const) {
      const db = uniqueName(`rb_${format === 'RowBinary' ? 'bin' : 'tsv'}`);
      await migrate(client, db, family === 'current' ? CURRENT_MIGRATIONS : MIGRATIONS);
      const writer = new ClickHouseEventWriter(client, db, { family, exactlyOnce: family === 'current', format, binaryBodies: bodies });
      await writer.insert(writer.encode(list, STORED_AT), family === 'current' ? 'rb:0:0-1' : null);
      stored.push(await storedRows(client, db));
      await drop(db);
    }
    const [text, binary] = stored as [Record<string, unknown>[], Record<string, unknown>[]];
    expect(binary).toHaveLength(list.length);
    // The reals as sent: RowBinary carries the double itself; text goes through the server's
    // parser (exact on current releases with precise_float_parsing, which the writer sets there).
    if (family === 'current') expect(binary).toEqual(text);
    else expect(withoutReals(binary)).toEqual(withoutReals(text));
    const bits = (x: number): string => {
      const b = Buffer.alloc(8);
      b.writeDoubleLE(x);
      let end = 8;
      while (end > 0 && b[end - 1] === 0) end--;
      return b.subarray(0, end).toString('hex').toUpperCase();
    };
    expect(binary.map((r) => r.latitud)).toEqual(list.map((e) => bits(e.event.latitud)));
    expect(binary.map((r) => r.rumbo)).toEqual(list.map((e) => (e.event.rumbo === null ? null : bits(e.event.rumbo))));
  });
}

/** Rows without their Float64 columns (18.16 parses some decimal texts one ulp away; RowBinary is exact). */
const withoutReals = (rows: Record<string, unknown>[]): Record<string, unknown>[] =>
  rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !EVENT_FIELD_LIST.some((f) => f.kind === 'real' && f.clickhouseColumn === k))));

describe('RowBinary inserts against TabSeparated', () => {
  let server: ClickHouseClient;
  let chdb: ClickHouseClient;
  const chdbDir = mkdtempSync(path.join(os.tmpdir(), 'chdb-row-binary-'));
  beforeAll(() => {
    server = createClickHouseClient({ url: services().clickhouseUrl, database: 'default', username: 'default', password: '' });
    chdb = createClickHouseClient({ url: 'http://chdb.invalid', database: 'default', username: 'default', password: '', connection: chdbConnection(chdbDir) });
  });
  afterAll(async () => {
    await server.close();
    await chdb.close();
    rmSync(chdbDir, { recursive: true, force: true });
  });
  const drop = (client: () => ClickHouseClient) => async (db: string) => {
    await client().command({ query: `DROP DATABASE IF EXISTS ${quoteIdentifier(db)}` });
  };

  differential('ClickHouse 18.16 server, 18.16 schema', 'legacy', () => ({ client: server, bodies: 'request', drop: drop(() => server) }));
  differential('ClickHouse 26 (chdb), current schema', 'current', () => ({ client: chdb, bodies: 'file', drop: drop(() => chdb) }));
  differential('ClickHouse 26 (chdb), 18.16 schema kept on a current release', 'legacy', () => ({ client: chdb, bodies: 'file', drop: drop(() => chdb), recentReceipts: true }));

  it('writes Int64 and DateTime64(7) values exactly at the ends of their ranges', () => {
    const out = new BinaryBuffer(16);
    const cases: [number, number][] = [
      [-62_135_596_800_000, 0],
      [253_402_300_799_999, 9_999],
      [-1, 9_999],
      [0, 1],
    ];
    for (const [ms, ticks] of cases) out.ticks64(ms, ticks);
    for (const n of [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, -1, 0, 2 ** 32]) out.i64(n);
    const bytes = out.bytes();
    const read = (i: number): bigint => bytes.readBigInt64LE(i * 8);
    cases.forEach(([ms, ticks], i) => expect(read(i)).toBe(BigInt(ms) * 10_000n + BigInt(ticks)));
    [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, -1, 0, 2 ** 32].forEach((n, i) => expect(read(cases.length + i)).toBe(BigInt(n)));
  });
});
