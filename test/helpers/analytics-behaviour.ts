/**
 * The analysts' behaviour, one suite for both schemas: the docs/analytics.md queries' answers,
 * copies and retried inserts, latest positions and arrivals. test/scale-out/clickhouse-legacy.scale-out.test.ts runs
 * it on the real ClickHouse 18.16 server (18.16 schema), test/embedded/clickhouse-current.embedded.test.ts on
 * ClickHouse 26.x embedded by npm `chdb` (current schema). The same events go in and the same
 * answers must come out; where the schemas differ on purpose (retried inserts) the suite says so.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../shared/backends/types.js';
import { exampleEventRecord } from '../../shared/events/schema.js';
import { ClickHouseEventStore, ClickHouseEventWriter, quoteIdentifier, type BinaryBodies, type ClickHouseClient } from '../../shared/backends/clickhouse/index.js';
import { ensureSchema, type EnsuredSchema } from '../../shared/backends/clickhouse/family.js';
import { hash64 } from '../../shared/backends/clickhouse/current-rows.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** The `sql` blocks of docs/analytics.md tagged `tag` (```sql current, ```sql 18.16, ```sql migration). */
export function docsBlocks(tag: 'current' | '18.16' | 'migration'): string[] {
  const doc = readFileSync(path.join(ROOT, 'docs/analytics.md'), 'utf8');
  return [...doc.matchAll(/```sql ([\w.]+)\n([\s\S]*?)```/g)].filter((m) => m[1] === tag).map((m) => m[2]!);
}

let seq = 0;
/** An event of provider `acme`, vehicle AB123CD, 2025-01-01, with a unique dedupe key. */
export function analyticsEvent(over: Partial<EventRecord> = {}): EventRecord {
  seq++;
  const epochMs = Date.UTC(2025, 0, 1) + seq * 1000;
  return {
    ...exampleEventRecord(),
    systemUser: 'acme',
    dominio: 'AB123CD',
    eventTime: { epochMs, subMsTicks: seq % 10_000 },
    eventTimeText: new Date(epochMs).toISOString(),
    receivedAt: epochMs + 1_000,
    rumbo: 90,
    dedupeKey: `dk-analytics-${seq}`,
    ...over,
  };
}

export interface AnalyticsTarget {
  client: ClickHouseClient;
  /** How the writer's RowBinary bodies reach the engine ('file' for chdb). */
  binaryBodies: BinaryBodies;
  /** A fresh database name per call. */
  newDatabase(): string;
}

interface Prepared {
  db: string;
  schema: EnsuredSchema;
  writer: ClickHouseEventWriter;
  store: ClickHouseEventStore;
}

async function prepare(target: AnalyticsTarget): Promise<Prepared> {
  const db = target.newDatabase();
  const schema = await ensureSchema(target.client, db, { retentionDays: 0 });
  const writer = new ClickHouseEventWriter(target.client, db, { family: schema.family, exactlyOnce: schema.exactlyOnce, binaryBodies: target.binaryBodies });
  return { db, schema, writer, store: new ClickHouseEventStore(target.client, db) };
}

async function rows<T = Record<string, unknown>>(client: ClickHouseClient, query: string): Promise<T[]> {
  const r = await client.query({ query, format: 'JSONEachRow' }).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${query}`);
  });
  return r.json<T>();
}

const countOf = async (client: ClickHouseClient, query: string): Promise<number> => Number((await rows<{ n: string }>(client, query))[0]!.n);

export function describeAnalytics(label: string, tag: 'current' | '18.16', target: () => AnalyticsTarget): void {
  describe(`analytics behaviour (${label})`, () => {
    it('answers every docs/analytics.md query as documented', async () => {
      const { client } = target();
      const { db, schema, writer } = await prepare(target());
      expect(schema.family).toBe(tag === 'current' ? 'current' : 'legacy');
      const at = (h: number, m: number) => Date.UTC(2025, 0, 1, h, m);
      const t = (ms: number, ticks = 0): Partial<EventRecord> => ({ eventTime: { epochMs: ms, subMsTicks: ticks }, receivedAt: ms + 2_500 });
      const sensors = (temp: string) => [
        { clave: 'temp', valor: temp },
        { clave: 'ign', valor: '1' },
      ];
      const events = [
        analyticsEvent({ ...t(at(10, 0)), sensors: sensors('20.5'), dedupeKey: 'same' }),
        analyticsEvent({ ...t(at(10, 5), 17), latitud: 95, longitud: 30, validPosition: false, sensors: sensors('21') }),
        analyticsEvent({ ...t(at(11, 0)), valido: false, validPosition: false }),
        analyticsEvent({ ...t(at(12, 0)), dedupeKey: 'same' }),
        analyticsEvent({ ...t(at(10, 30)), dominio: 'ZZ999' }),
        analyticsEvent({ ...t(at(10, 30)), systemUser: 'other', dominio: 'X1' }),
      ].map((event, i) => ({ id: BigInt(i + 1), event }));
      const encoded = writer.encode(events, Date.now());
      await writer.insert(encoded, 'docs:0:1-6');
      // An unmerged copy (a batch read again and cut differently: another token), so the copies queries have something to show.
      await client.command({ query: `SYSTEM STOP MERGES ${quoteIdentifier(db)}.events` });
      await writer.insert(writer.encode([events[1]!], Date.now()), 'docs:0:2-2');

      const blocks = docsBlocks(tag);
      expect(blocks.length).toBe(14);
      const results: Record<string, unknown>[][] = [];
      for (const sql of blocks) {
        const got = await rows(client, sql.replaceAll('gateway.', `${quoteIdentifier(db)}.`));
        expect(got.length, sql).toBeGreaterThan(0);
        results.push(got);
      }
      const [track, latest, latestArgMax, latestValid, perHour, invalid, temp, sensorKeys, delay, dupCount, dupIds, resent, folded] = results;
      expect(track!.map((r) => r.id)).toEqual(['1', '2', '3', '4']);
      expect(latest!.map((r) => [r.dominio, r.id])).toEqual([
        ['AB123CD', '4'],
        ['ZZ999', '5'],
      ]);
      expect(latestArgMax!.map((r) => [r.system_user, r.dominio, r.id])).toEqual([
        ['acme', 'AB123CD', '4'],
        ['acme', 'ZZ999', '5'],
        ['other', 'X1', '6'],
      ]);
      expect(latestValid!.map((r) => r.dominio)).toEqual(['AB123CD', 'ZZ999']);
      expect(perHour!.filter((r) => r.system_user === 'acme').map((r) => Number(r.events))).toEqual([3, 1, 1]);
      expect(invalid).toEqual([{ system_user: 'acme', invalid: '2', out_of_range: '1', lat_lon_swapped: '1', device_said_invalid: '1' }]);
      expect(temp!.map((r) => r.temp)).toEqual(['20.5', '21']);
      expect(sensorKeys!.map((r) => r.clave).sort()).toEqual(['ign', 'temp']);
      expect(delay!.find((r) => r.system_user === 'acme')).toMatchObject({ clock_ahead: '0', delay_seconds_p50_p90_p99: [2.5, 2.5, 2.5] });
      expect(dupCount).toEqual([{ row_count: '7', ids: '6', unmerged_copies: '1' }]);
      expect(dupIds).toEqual([{ id: '2', copies: '2' }]);
      expect(resent).toEqual([expect.objectContaining({ dedupe_key: tag === 'current' ? hash64('same') : 'same', ids: '2' })]);
      expect(folded!.map((r) => r.id)).toEqual(['3']);
    });

    it('stores a retried insert (same token) once on a current release, and reads every id once on both', async () => {
      const { client } = target();
      const { db, schema, writer, store } = await prepare(target());
      const events = Array.from({ length: 20 }, (_, i) => ({ id: BigInt(100 + i), event: analyticsEvent({ systemUser: 'retry', dominio: `R${i % 3}` }) }));
      const encoded = writer.encode(events, Date.now());
      await client.command({ query: `SYSTEM STOP MERGES ${quoteIdentifier(db)}.events` });
      await writer.insert(encoded, 'topic:3:100-119');
      await writer.insert(encoded, 'topic:3:100-119');
      const raw = await countOf(client, `SELECT count() AS n FROM ${quoteIdentifier(db)}.events`);
      expect(raw).toBe(schema.exactlyOnce ? 20 : 40);
      expect(await countOf(client, `SELECT count() AS n FROM ${quoteIdentifier(db)}.events FINAL`)).toBe(20);
      const arrivals = await countOf(client, `SELECT sum(events) AS n FROM ${quoteIdentifier(db)}.arrivals`);
      expect(arrivals).toBe(schema.exactlyOnce ? 20 : 40);
      const recent = await store.recent({ provider: 'retry', limit: 100 });
      expect(recent.map((e) => e.id)).toEqual(events.map((e) => e.id).reverse());
      const { storedAt, ...first } = recent[recent.length - 1]!;
      expect(storedAt).toBeGreaterThan(0);
      // The current schema keeps a hash of the dedupe key, which the admin view does not show.
      expect(first).toEqual({ ...events[0]!.event, id: 100n, ...(schema.family === 'current' ? { dedupeKey: '' } : {}) });
    });

    it('keeps the latest position per vehicle whatever the arrival order', async () => {
      const { client } = target();
      const { db, writer } = await prepare(target());
      const base = Date.UTC(2025, 5, 1);
      const late = analyticsEvent({ systemUser: 'lp', dominio: 'V1', eventTime: { epochMs: base + 60_000, subMsTicks: 5 }, latitud: -30 });
      const early = analyticsEvent({ systemUser: 'lp', dominio: 'V1', eventTime: { epochMs: base + 60_000, subMsTicks: 4 }, latitud: -31 });
      const other = analyticsEvent({ systemUser: 'lp', dominio: 'V2', eventTime: { epochMs: base, subMsTicks: 0 }, latitud: -32 });
      await writer.insert(writer.encode([{ id: 1n, event: late }], Date.now()), 'lp:0:0-0');
      await writer.insert(writer.encode([{ id: 2n, event: early }, { id: 3n, event: other }], Date.now()), 'lp:0:1-2');
      const got = await rows(client, `SELECT dominio, id, latitud FROM ${quoteIdentifier(db)}.latest_positions FINAL ORDER BY dominio`);
      expect(got).toEqual([
        { dominio: 'V1', id: '1', latitud: -30 },
        { dominio: 'V2', id: '3', latitud: -32 },
      ]);
    });

    it('counts arrivals per provider and 10 s for the operators overview', async () => {
      const { writer, store } = await prepare(target());
      const now = Date.now();
      const bucket = Math.floor(now / 10_000) * 10_000;
      const list = [
        ...Array.from({ length: 3 }, () => analyticsEvent({ systemUser: 'arr1', receivedAt: bucket + 1_000 })),
        analyticsEvent({ systemUser: 'arr2', receivedAt: bucket + 2_000 }),
      ].map((event, i) => ({ id: BigInt(i + 1), event }));
      await writer.insert(writer.encode(list, now), `arr:0:1-4`);
      const activity = await store.activity(bucket - 60_000);
      expect(activity.buckets).toEqual([{ at: bucket, events: 4 }]);
      expect(activity.providers.map((p) => [p.systemUser, p.events]).sort()).toEqual([
        ['arr1', 3],
        ['arr2', 1],
      ]);
    });
  });
}

/** The target made in a beforeAll of the calling file (a client needs the services or chdb ready). */
export function useTarget(make: () => Promise<AnalyticsTarget>): () => AnalyticsTarget {
  let target: AnalyticsTarget | null = null;
  beforeAll(async () => {
    target = await make();
  });
  return () => {
    if (target === null) throw new Error('analytics target not ready');
    return target;
  };
}
