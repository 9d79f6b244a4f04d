/**
 * The real worker (real Kafka) against both ClickHouse schemas: the 18.16 server (at-least-once,
 * copies collapse on merge) and ClickHouse 26 embedded by npm `chdb` (current schema,
 * exactly-once: a batch inserted, not committed, and read again after a crash is dropped by its
 * token). Same events, same scenario, same answers through FINAL; only the raw copies differ.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chdbConnection } from '../helpers/chdb.js';
import { afterAll, describe, expect, it } from 'vitest';
import { ClickHouseEventStore, createClickHouseClient, quoteIdentifier, type ClickHouseClient } from '../../shared/backends/clickhouse/index.js';
import type { LastReportSink } from '../../shared/backends/scale-out-types.js';
import { batchToken, gridEnd, type BufferedMessage } from '../../worker/batch.js';
import { uniqueName } from '../helpers/services.js';
import { CH, ch, committed, ids, makeEvent, newDatabase, newTopic, produce, RecordingSink, start, sumCommitted, useWorkerFixture, waitFor } from '../helpers/worker-fixture.js';

useWorkerFixture();

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'chdb-worker-'));
const chdbClient: ClickHouseClient = createClickHouseClient({ ...CH, database: 'default', connection: chdbConnection(dataDir) });
afterAll(async () => {
  await chdbClient.close();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Backend {
  name: string;
  exactlyOnce: boolean;
  /** A fresh ClickHouse connection for one worker (the worker closes it when it stops). */
  clickhouse: (database: string) => Parameters<typeof start>[0]['clickhouse'];
  client: () => ClickHouseClient;
}

const BACKENDS: Backend[] = [
  { name: 'ClickHouse 18.16 server, 18.16 schema', exactlyOnce: false, clickhouse: (database) => ({ ...CH, database }), client: () => ch },
  {
    name: 'ClickHouse 26 on chdb, current schema',
    exactlyOnce: true,
    clickhouse: (database) => ({ ...CH, database, connection: chdbConnection(dataDir) }),
    client: () => chdbClient,
  },
];

async function rawAndFinal(client: ClickHouseClient, db: string): Promise<{ raw: number; final: number; arrivals: number }> {
  const t = quoteIdentifier(db);
  const r = await client.query({
    query: `SELECT (SELECT count() FROM ${t}.events) AS raw, (SELECT count() FROM ${t}.events FINAL) AS final, (SELECT sum(events) FROM ${t}.arrivals) AS arrivals`,
    format: 'JSONEachRow',
  });
  const [row] = await r.json<{ raw: string; final: string; arrivals: string }>();
  return { raw: Number(row!.raw), final: Number(row!.final), arrivals: Number(row!.arrivals) };
}

describe('batch cuts and tokens', () => {
  const msg = (offset: bigint): BufferedMessage => ({ partition: 2, offset, arrivedAt: 0, timestamp: String(1_700_000_000_000n + offset), decoded: null });

  it('cuts batches on a fixed grid of offsets, so a re-read batch has the same token', () => {
    expect(gridEnd(0n, 100)).toBe(100n);
    expect(gridEnd(99n, 100)).toBe(100n);
    expect(gridEnd(100n, 100)).toBe(200n);
    expect(gridEnd(1234n, 5000)).toBe(5000n);
    expect(batchToken('t', 2, [msg(100n), msg(101n), msg(199n)])).toBe('t:2:100-199@1700000000100');
    expect(batchToken('t', 2, [msg(7n)])).toBe('t:2:7-7@1700000000007');
    // A topic created again starts its offsets over: the timestamp keeps its tokens new.
    expect(batchToken('t', 2, [{ ...msg(7n), timestamp: '1800000000000' }])).not.toBe(batchToken('t', 2, [msg(7n)]));
  });
});

for (const backend of BACKENDS) {
  describe(`worker on ${backend.name}`, () => {
    it('stores each event once through FINAL after a crash between insert and commit; the current schema stores no copy at all', async () => {
      const db = newDatabase();
      const groupId = uniqueName('wg');
      const topic = await newTopic(1);
      // The sink never answers: the first worker inserts its batches but never commits them.
      const stuck: LastReportSink = { record: () => new Promise<void>(() => undefined) };
      const events = ids(400, 7000n).map((id) => ({ id, event: makeEvent({ systemUser: 'eo' }) }));
      const a = await start({ topic, groupId, database: db, clickhouse: backend.clickhouse(db), lastReports: stuck, lastReportTimeoutMs: 600_000, batchRows: 100, batchMs: 600_000 });
      await produce(topic, events);
      await waitFor('a batch inserted by the first worker', () => a.stats.insertedRows >= 100);
      await a.abort();
      expect(sumCommitted(await committed(groupId, topic))).toBe(0);
      const b = await start({ topic, groupId, database: db, clickhouse: backend.clickhouse(db), lastReports: new RecordingSink(), batchRows: 100, batchMs: 600_000 });
      await waitFor('read again and committed', async () => sumCommitted(await committed(groupId, topic)) === 400);
      const got = await rawAndFinal(backend.client(), db);
      expect(got.final).toBe(400);
      if (backend.exactlyOnce) {
        expect(got).toEqual({ raw: 400, final: 400, arrivals: 400 });
      } else {
        expect(got.raw).toBeGreaterThanOrEqual(500);
        expect(got.arrivals).toBe(got.raw);
      }
      const recent = await new ClickHouseEventStore(backend.client(), db).recent({ provider: 'eo', limit: 1000 });
      expect(recent.map((e) => e.id)).toEqual(events.map((e) => e.id).reverse());
      await b.stop();
    });

    it('inserts the partitions in parallel and keeps the latest position per vehicle', async () => {
      const db = newDatabase();
      const groupId = uniqueName('wg');
      const topic = await newTopic(4);
      const sink = new RecordingSink();
      const w = await start({ topic, groupId, database: db, clickhouse: backend.clickhouse(db), lastReports: sink, batchRows: 50, batchMs: 100 });
      const events = ids(600, 20_000n).map((id, i) => ({ id, event: makeEvent({ systemUser: 'par', dominio: `V${i % 16}` }) }));
      await produce(topic, events);
      await waitFor('all committed', async () => sumCommitted(await committed(groupId, topic)) === 600);
      expect(Object.keys(w.stats.committed).length).toBe(4);
      expect(w.stats.maxBatchSize).toBeLessThanOrEqual(50);
      expect((await rawAndFinal(backend.client(), db)).final).toBe(600);
      const r = await backend.client().query({ query: `SELECT dominio, toString(id) AS id FROM ${quoteIdentifier(db)}.latest_positions FINAL ORDER BY dominio`, format: 'JSONEachRow' });
      const latest = await r.json<{ dominio: string; id: string }>();
      // makeEvent gives each event a later time than the one before: the last id of each vehicle wins.
      const expected = new Map<string, string>();
      for (const { id, event } of events) expected.set(event.dominio, id.toString());
      expect(latest).toEqual([...expected].sort(([a], [b]) => a.localeCompare(b)).map(([dominio, id]) => ({ dominio, id })));
      expect([...sink.latest.keys()].sort()).toEqual([...expected.keys()].map((d) => `par|${d}`).sort());
      await w.stop();
    });
  });
}
