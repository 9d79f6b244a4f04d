/**
 * Both analysts' schemas, measured: loads N generated events (default 1,000,000) through the
 * worker's own row encoding and writer (ClickHouseEventWriter: encode + JSONEachRow insert) into
 * - the 18.16 schema on the real ClickHouse 18.16 server (`npm run services:up`),
 * - the 18.16 schema on ClickHouse 26 (npm `chdb`, in this process), for a same-engine comparison,
 * - the current schema on ClickHouse 26 (chdb),
 * then merges each table (OPTIMIZE FINAL) and prints bytes on disk per column and in total, the
 * time of each documented query (docs/analytics.md, the schema's own blocks; median of 3), the
 * load rate, and the codec trial the current schema's codecs were chosen from.
 *
 * The events: 20 providers (one is `acme`, the docs' example), 5,000 vehicles, one event per
 * vehicle every 30 s or so through January 2025, positions on a random walk, speeds, headings, two
 * sensors on a third of them, dedupe keys as the gateway makes them (base64 SHA-256).
 *
 * Run: npm run bench:clickhouse   (env EVENTS=n (1000000), BATCH=rows per insert (20000),
 *      SCHEMAS=comma list of legacy-1816,legacy-chdb,current-chdb; services from .services.env)
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createChdbConnection } from 'chdb/connection';
import { createClickHouseClient, quoteIdentifier, quoteString, type ClickHouseClient, type ClickHouseOptions } from '../shared/backends/clickhouse/index.js';
import { ensureSchema } from '../shared/backends/clickhouse/family.js';
import { migrate, MIGRATIONS } from '../shared/backends/clickhouse/schema.js';
import { ClickHouseEventWriter } from '../shared/backends/clickhouse/writer.js';
import type { EventRecord } from '../shared/backends/types.js';
import { exampleEventRecord } from '../shared/events/schema.js';
import { servicesEnv } from './lib/services-env.js';

const EVENTS = Number(process.env.EVENTS ?? 1_000_000);
const BATCH = Number(process.env.BATCH ?? 20_000);
const SCHEMAS = (process.env.SCHEMAS ?? 'legacy-1816,legacy-chdb,current-chdb').split(',');
const ROOT = path.resolve(import.meta.dirname, '..');

/** A small deterministic generator (the same events in every run and every schema). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VEHICLES = 5_000;
const PROVIDERS = 20;
const START = Date.UTC(2025, 0, 1);

function* generate(n: number): Generator<{ id: bigint; event: EventRecord }> {
  const random = rng(18);
  const base = exampleEventRecord();
  const lat = Array.from({ length: VEHICLES }, () => -34.6 + (random() - 0.5) * 2);
  const lon = Array.from({ length: VEHICLES }, () => -58.4 + (random() - 0.5) * 2);
  const perVehicle = Math.max(1, Math.ceil(n / VEHICLES));
  const step = Math.floor((31 * 86_400_000) / perVehicle);
  for (let i = 0; i < n; i++) {
    const v = i % VEHICLES;
    const k = Math.floor(i / VEHICLES);
    lat[v]! += (random() - 0.5) * 0.002;
    lon[v]! += (random() - 0.5) * 0.002;
    const epochMs = START + k * step + Math.floor(random() * 1000);
    const systemUser = v % PROVIDERS === 0 ? 'acme' : `prov${v % PROVIDERS}`;
    const dominio = v === 0 ? 'AB123CD' : `AB${String(v).padStart(4, '0')}CD`;
    const latitud = Math.round(lat[v]! * 1e6) / 1e6;
    const longitud = Math.round(lon[v]! * 1e6) / 1e6;
    const valid = random() > 0.01;
    const eventTime = { epochMs, subMsTicks: Math.floor(random() * 10_000) };
    const withSensors = v % 3 === 0;
    yield {
      id: BigInt(i + 1),
      event: {
        ...base,
        systemUser,
        dominio,
        nroSerie: `SN${v}`,
        codigo: String(1 + Math.floor(random() * 8)),
        latitud: valid ? latitud : 95,
        longitud,
        altitud: Math.round(random() * 300),
        velocidad: Math.round(random() * 1200) / 10,
        rumbo: random() > 0.1 ? Math.floor(random() * 360) : null,
        validPosition: valid,
        valido: random() > 0.8 ? random() > 0.05 : null,
        eventTimeText: new Date(epochMs - 3 * 3_600_000).toISOString().replace('Z', '-03:00'),
        eventTime,
        receptionTimeText: null,
        receptionTime: null,
        receivedAt: epochMs + 500 + Math.floor(random() * 5_000),
        crudo: null,
        sensors: withSensors
          ? [
              { clave: 'temp', valor: (15 + random() * 20).toFixed(1) },
              { clave: 'ign', valor: random() > 0.3 ? '1' : '0' },
            ]
          : [],
        operation: 'LoginYInsertarEventos',
        dedupeKey: createHash('sha256').update(`${systemUser}\0${dominio}\0${epochMs}\0${latitud}\0${longitud}`).digest('base64'),
      },
    };
  }
}


async function rows<T>(client: ClickHouseClient, query: string): Promise<T[]> {
  return (await client.query({ query, format: 'JSONEachRow' })).json<T>();
}

const mb = (bytes: number): string => (bytes / 1e6).toFixed(2);

interface Loaded {
  name: string;
  total: number;
  columns: Map<string, number>;
  loadSeconds: number;
  queries: number[];
}

async function load(name: string, client: ClickHouseClient, database: string, tag: 'current' | '18.16', legacyOnCurrent: boolean): Promise<Loaded> {
  const db = quoteIdentifier(database);
  await client.command({ query: `DROP DATABASE IF EXISTS ${db}` });
  // The 18.16 schema on a current engine: created by its own migrations, as an upgraded server keeps it.
  if (legacyOnCurrent) await migrate(client, database, MIGRATIONS);
  const schema = await ensureSchema(client, database, { retentionDays: 0 });
  const writer = new ClickHouseEventWriter(client, database, { family: schema.family, exactlyOnce: schema.exactlyOnce });
  const started = performance.now();
  let batch: { id: bigint; event: EventRecord }[] = [];
  let n = 0;
  for (const e of generate(EVENTS)) {
    batch.push(e);
    if (batch.length === BATCH) {
      await writer.insert(writer.encode(batch, Date.now()), `bench:0:${n}`);
      n += batch.length;
      batch = [];
    }
  }
  if (batch.length > 0) await writer.insert(writer.encode(batch, Date.now()), `bench:0:${n}`);
  const loadSeconds = (performance.now() - started) / 1000;
  await client.command({ query: `OPTIMIZE TABLE ${db}.events FINAL` });
  const columns = new Map(
    (await rows<{ name: string; bytes: string }>(client, `SELECT name, data_compressed_bytes AS bytes FROM system.columns WHERE database = ${quoteString(database)} AND table = 'events'`)).map((c) => [
      c.name,
      Number(c.bytes),
    ]),
  );
  const [parts] = await rows<{ bytes: string }>(client, `SELECT sum(bytes) AS bytes FROM system.parts WHERE database = ${quoteString(database)} AND table = 'events' AND active`);
  const doc = readFileSync(path.join(ROOT, 'docs/analytics.md'), 'utf8');
  const blocks = [...doc.matchAll(/```sql ([\w.]+)\n([\s\S]*?)```/g)].filter((m) => m[1] === tag).map((m) => m[2]!.replaceAll('gateway.', `${db}.`));
  const queries: number[] = [];
  for (const sql of blocks) {
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      await rows(client, sql);
      times.push(performance.now() - t);
    }
    queries.push(times.sort((a, b) => a - b)[1]!);
  }
  return { name, total: Number(parts?.bytes ?? 0), columns, loadSeconds, queries };
}

/** Candidate codecs of the current schema's numeric and time columns, on the loaded data. */
async function codecTrial(client: ClickHouseClient, database: string): Promise<void> {
  const db = quoteIdentifier(database);
  const candidates: Record<string, { type: string; from: string; codecs: string[] }> = {
    latitud: { type: 'Float64', from: 'latitud', codecs: ['LZ4', 'ZSTD(1)', 'Gorilla, ZSTD(1)', 'FPC, ZSTD(1)'] },
    velocidad: { type: 'Float64', from: 'velocidad', codecs: ['LZ4', 'ZSTD(1)', 'Gorilla, ZSTD(1)', 'FPC, ZSTD(1)'] },
    event_time: { type: "DateTime64(7, 'UTC')", from: 'event_time', codecs: ['LZ4', 'ZSTD(1)', 'Delta(8), ZSTD(1)', 'DoubleDelta, ZSTD(1)'] },
    received_at: { type: "DateTime64(3, 'UTC')", from: 'received_at', codecs: ['LZ4', 'ZSTD(1)', 'Delta(8), ZSTD(1)', 'DoubleDelta, ZSTD(1)'] },
    id: { type: 'UInt64', from: 'id', codecs: ['LZ4', 'ZSTD(1)', 'Delta(8), ZSTD(1)', 'DoubleDelta, ZSTD(1)'] },
    dominio: { type: 'String', from: 'dominio', codecs: ['LZ4', 'ZSTD(1)', 'LowCardinality'] },
  };
  const columns: string[] = [];
  const selects: string[] = [];
  for (const [name, c] of Object.entries(candidates)) {
    c.codecs.forEach((codec, i) => {
      const type = codec === 'LowCardinality' ? `LowCardinality(${c.type})` : `${c.type} CODEC(${codec})`;
      columns.push(`${name}_${i} ${type}`);
      selects.push(c.from);
    });
  }
  await client.command({
    query: `CREATE TABLE ${db}.codec_trial (system_user LowCardinality(String), sort_dominio String, sort_time DateTime64(7, 'UTC'), ${columns.join(', ')}) ENGINE = MergeTree ORDER BY (system_user, sort_dominio, sort_time)`,
  });
  await client.command({ query: `INSERT INTO ${db}.codec_trial SELECT system_user, dominio, event_time, ${selects.join(', ')} FROM ${db}.events` });
  await client.command({ query: `OPTIMIZE TABLE ${db}.codec_trial FINAL` });
  const sizes = new Map(
    (await rows<{ name: string; bytes: string }>(client, `SELECT name, data_compressed_bytes AS bytes FROM system.columns WHERE database = ${quoteString(database)} AND table = 'codec_trial'`)).map((c) => [
      c.name,
      Number(c.bytes),
    ]),
  );
  console.log('\nCodec trial (current schema on ClickHouse 26, same sort order as events; MB on disk):\n');
  console.log('| column | ' + ['1', '2', '3', '4'].map((n) => `candidate ${n}`).join(' | ') + ' |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [name, c] of Object.entries(candidates)) {
    console.log(`| ${name} | ${c.codecs.map((codec, i) => `${codec}: ${mb(sizes.get(`${name}_${i}`) ?? 0)}`).join(' | ')} |`);
  }
}

async function main(): Promise<void> {
  const results: Loaded[] = [];
  const run = Date.now().toString(36);
  const chdbDir = mkdtempSync(path.join(os.tmpdir(), 'bench-chdb-'));
  const chdb = createClickHouseClient({
    url: 'http://chdb.invalid',
    database: 'default',
    username: 'default',
    password: '',
    connection: createChdbConnection({ path: chdbDir }) as unknown as NonNullable<ClickHouseOptions['connection']>,
  });
  const chdbClient = (): ClickHouseClient => chdb;
  const [version] = await rows<{ v: string }>(chdbClient(), 'SELECT version() AS v');
  if (SCHEMAS.includes('legacy-1816')) {
    const services = servicesEnv();
    const server = createClickHouseClient({ url: services.CLICKHOUSE_URL!, database: 'default', username: 'default', password: '', requestTimeoutMs: 300_000 });
    const database = `bench_schema_${run}`;
    results.push(await load('18.16 schema, ClickHouse 18.16 server', server, database, '18.16', false));
    await server.command({ query: `DROP DATABASE IF EXISTS ${quoteIdentifier(database)}` });
    await server.close();
  }
  if (SCHEMAS.includes('legacy-chdb')) results.push(await load(`18.16 schema, ClickHouse ${version?.v} (chdb)`, chdbClient(), `legacy_${run}`, '18.16', true));
  if (SCHEMAS.includes('current-chdb')) {
    const database = `current_${run}`;
    results.push(await load(`current schema, ClickHouse ${version?.v} (chdb)`, chdbClient(), database, 'current', false));
    await codecTrial(chdbClient(), database);
  }
  await chdb.close();
  rmSync(chdbDir, { recursive: true, force: true });

  console.log(`\n${EVENTS.toLocaleString('en')} generated events, inserts of ${BATCH} rows, ${new Date().toISOString()}, ${os.cpus()[0]?.model ?? ''} x${os.cpus().length}\n`);
  console.log(`| | ${results.map((r) => r.name).join(' | ')} |`);
  console.log(`|---|${results.map(() => '---:').join('|')}|`);
  console.log(`| events table on disk (MB) | ${results.map((r) => mb(r.total)).join(' | ')} |`);
  console.log(`| bytes per event | ${results.map((r) => (r.total / EVENTS).toFixed(1)).join(' | ')} |`);
  console.log(`| load (events/s, this process encoding + server) | ${results.map((r) => Math.round(EVENTS / r.loadSeconds).toLocaleString('en')).join(' | ')} |`);
  const names = [...new Set(results.flatMap((r) => [...r.columns.keys()]))];
  console.log('\nBytes on disk per column (MB; a blank: the schema has no such column):\n');
  console.log(`| column | ${results.map((r) => r.name).join(' | ')} |`);
  console.log(`|---|${results.map(() => '---:').join('|')}|`);
  for (const name of names) console.log(`| ${name} | ${results.map((r) => (r.columns.has(name) ? mb(r.columns.get(name)!) : '')).join(' | ')} |`);
  console.log('\nDocumented queries (docs/analytics.md, each schema its own blocks in the same order; median of 3, ms):\n');
  console.log(`| query | ${results.map((r) => r.name).join(' | ')} |`);
  console.log(`|---|${results.map(() => '---:').join('|')}|`);
  const count = Math.max(...results.map((r) => r.queries.length));
  for (let i = 0; i < count; i++) console.log(`| ${i + 1} | ${results.map((r) => (r.queries[i] === undefined ? '' : r.queries[i]!.toFixed(0))).join(' | ')} |`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
