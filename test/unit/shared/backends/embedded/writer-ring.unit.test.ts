/**
 * The hand-off of event groups to the SQLite writer thread through the shared ring
 * (shared/backends/embedded/writer-ring.ts, writer-thread.ts, writer-thread-main.cjs), on real
 * SQLite files in a temporary directory: rows stored through the ring equal those of the inline
 * path (which builds rows from the records, the reference); a small ring wraps, queues writes
 * while full and hands a group larger than itself over as a transferred buffer; a thread killed
 * mid-group fails what it held, the next write starts a new one, and nothing acknowledged is lost.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, STORE_PROBE_SQL, type SqliteDatabase } from '../../../../../shared/backends/embedded/database.js';
import { EVENT_ROWS } from '../../../../../shared/backends/embedded/event-row.js';
import { SqliteEventLog } from '../../../../../shared/backends/embedded/event-log.js';
import { UPSERT_LAST_REPORT_SQL } from '../../../../../shared/backends/embedded/trips.js';
import { WriterThread, type GroupToWrite } from '../../../../../shared/backends/embedded/writer-thread.js';
import { EVENT_FIELD_LIST, exampleEventRecord, type EventRecord } from '../../../../../shared/events/schema.js';
import type { AppendOutcome } from '../../../../../shared/backends/types.js';
import { sample } from '../../../../helpers/event-samples.js';

const T0 = Date.UTC(2026, 10, 25, 12);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'writer-ring-'));
  dirs.push(dir);
  return dir;
}

function openLog(offThread: boolean, extra: { ringBytes?: number; maxGroupEvents?: number } = {}): { db: SqliteDatabase; log: SqliteEventLog; errors: unknown[] } {
  const db = openDatabase(tempDir(), 'NORMAL');
  const errors: unknown[] = [];
  const log = new SqliteEventLog(db, { dedupeWindowMs: 60_000, now: () => T0, offThread, synchronous: 'NORMAL', onCommitError: (e) => errors.push(e), ...extra });
  return { db, log, errors };
}

/** Generated records (every kind of value the table allows), a few vehicles so last reports move, unique dedupe keys. */
function records(n: number, seedShift = 0): EventRecord[] {
  return sample(EVENT_FIELD_LIST, n).map((r, i) => ({ ...(r as EventRecord), systemUser: `p${i % 3}`, dominio: `D${i % 7}`, dedupeKey: `k${seedShift}-${i}` }));
}

const rowsOf = (db: SqliteDatabase) => ({
  events: db.prepare('SELECT * FROM events ORDER BY id').safeIntegers().all(),
  reports: db.prepare('SELECT * FROM last_reports ORDER BY system_user, dominio').safeIntegers().all(),
});

/** Appends in calls of varying size, some in the same turn, some after the previous commit. */
async function feed(log: SqliteEventLog, list: EventRecord[]): Promise<AppendOutcome[]> {
  const pending: Promise<AppendOutcome[]>[] = [];
  let i = 0;
  for (let call = 0; i < list.length; call++) {
    const size = [1, 3, 40, 7, 120, 2][call % 6]!;
    pending.push(log.append(list.slice(i, i + size)));
    i += size;
    if (call % 3 === 2) await pending[pending.length - 1];
  }
  return (await Promise.all(pending)).flat();
}

describe('writer ring', () => {
  it('stores exactly the rows the inline path stores, through wrap-arounds and groups larger than the ring', async () => {
    const list = records(600);
    const ring = openLog(true, { ringBytes: 8 * 1024 });
    const inline = openLog(false);
    const [viaRing, viaInline] = [await feed(ring.log, list), await feed(inline.log, list)];
    await Promise.all([ring.log.close(), inline.log.close()]);
    expect(viaRing.every((o) => o.ok)).toBe(true);
    expect(viaRing).toEqual(viaInline);
    const stored = rowsOf(ring.db);
    expect(stored.events).toHaveLength(600);
    expect(stored).toEqual(rowsOf(inline.db));
    expect(ring.errors).toEqual([]);
    // The paths this test is for were taken.
    const handoff = (ring.log as unknown as { writer: WriterThread }).writer.handoff;
    expect(handoff.wraps).toBeGreaterThan(0);
    expect(handoff.transferred).toBeGreaterThan(0);
  });

  it('queues writes while the ring is full and answers each, in order, without blocking the event loop', async () => {
    const db = openDatabase(tempDir(), 'NORMAL');
    const writer = new WriterThread({ file: db.name, synchronous: 'NORMAL', insertRowsSql: [1, 2, 3].map((n) => EVENT_ROWS.insertRowsSql(n)), upsertSql: UPSERT_LAST_REPORT_SQL, probeSql: STORE_PROBE_SQL, ringBytes: 2048 });
    const list = records(400, 1);
    const groups: GroupToWrite[] = [];
    for (let i = 0; i < list.length; i += 5) {
      const events = list.slice(i, i + 5);
      groups.push({ ids: events.map((_, k) => BigInt(i + k + 1)), events, storedAt: T0 + i, reports: [[`p${i}`, 'D', i, i % 10_000]] });
    }
    // 80 writes and probes sent at once: far more than 2 KB holds.
    const settled: number[] = [];
    await Promise.all(groups.flatMap((g, i) => [writer.write(g).then(() => settled.push(i)), writer.probe(T0, 16)]));
    expect(writer.handoff.waitsForSpace).toBeGreaterThan(0);
    expect(writer.handoff.wraps).toBeGreaterThan(0);
    await writer.close();
    expect(settled).toEqual(groups.map((_, i) => i));
    expect(db.prepare('SELECT COUNT(*) FROM events').pluck().get()).toBe(400);
    expect(db.prepare('SELECT COUNT(*) FROM last_reports').pluck().get()).toBe(80);
    // The same rows inserted from the records (the inline path's way) into a second file.
    const reference = openDatabase(tempDir(), 'NORMAL');
    const insert = reference.prepare(EVENT_ROWS.insertSql);
    for (const g of groups) g.events.forEach((e, k) => insert.run(...EVENT_ROWS.toRow(g.ids[k]!, e, g.storedAt)));
    expect(rowsOf(db).events).toEqual(rowsOf(reference).events);
  });

  it("reports the thread's heap, and answers null at once while the thread is held in SQLite (a lock here, a stalled fsync in production)", async () => {
    const db = openDatabase(tempDir(), 'NORMAL');
    const writer = new WriterThread({ file: db.name, synchronous: 'NORMAL', insertRowsSql: [1, 2, 3].map((n) => EVENT_ROWS.insertRowsSql(n)), upsertSql: UPSERT_LAST_REPORT_SQL, probeSql: STORE_PROBE_SQL });
    expect(await writer.heap()).toBeNull();
    const list = records(2, 1);
    // Once the thread has committed a group it is surely up.
    await writer.write({ ids: [1n], events: [list[0]!], storedAt: T0, reports: [] });
    const heap = await writer.heap();
    expect(heap!.total).toBeGreaterThan(heap!.used);
    expect(heap!.used).toBeGreaterThan(1_000_000);
    // Another connection holds the write lock: the thread waits in SQLite's busy handler (native code).
    db.exec('BEGIN IMMEDIATE');
    const write = writer.write({ ids: [2n], events: [list[1]!], storedAt: T0, reports: [] });
    await new Promise((r) => setTimeout(r, 300));
    const asked = Date.now();
    expect(await writer.heap()).toBeNull();
    expect(Date.now() - asked).toBeLessThan(1_000);
    db.exec('COMMIT');
    await write;
    // Free again: it answers.
    expect((await writer.heap())!.total).toBeGreaterThan(0);
    await writer.close();
    expect(db.prepare('SELECT COUNT(*) FROM events').pluck().get()).toBe(2);
  });

  it('answers every write across the wrap of its message numbers', async () => {
    const db = openDatabase(tempDir(), 'NORMAL');
    const writer = new WriterThread({ file: db.name, synchronous: 'NORMAL', insertRowsSql: [1, 2, 3].map((n) => EVENT_ROWS.insertRowsSql(n)), upsertSql: UPSERT_LAST_REPORT_SQL, probeSql: STORE_PROBE_SQL });
    // As after ~2^31 messages (weeks of uptime): the next numbers run past the top and start again.
    (writer as unknown as { seq: number }).seq = 2 ** 31 - 5;
    const list = records(20, 4);
    const writes = list.map((event, i) => writer.write({ ids: [BigInt(i + 1)], events: [event], storedAt: T0, reports: [] }));
    await Promise.all(writes);
    const seq = (writer as unknown as { seq: number }).seq;
    await writer.close();
    expect(seq).toBeLessThan(30);
    expect(db.prepare('SELECT COUNT(*) FROM events').pluck().get()).toBe(20);
  });

  it('commits the messages waiting for it together, and answers a message that fails alone as the only failure', async () => {
    const db = openDatabase(tempDir(), 'NORMAL');
    const writer = new WriterThread({ file: db.name, synchronous: 'NORMAL', insertRowsSql: [1, 2, 3].map((n) => EVENT_ROWS.insertRowsSql(n)), upsertSql: UPSERT_LAST_REPORT_SQL, probeSql: STORE_PROBE_SQL });
    const list = records(40, 6);
    // Twenty groups placed in one turn: the thread finds most of them waiting and commits them together.
    await Promise.all(list.slice(0, 20).map((event, i) => writer.write({ ids: [BigInt(i + 1)], events: [event], storedAt: T0, reports: [] })));
    expect(writer.handoff.commits).toBeLessThan(20);
    // Twenty more, one of them with an id already stored: the shared transaction fails, each is tried alone.
    const outcomes = await Promise.allSettled(
      list.slice(20).map((event, i) => writer.write({ ids: [BigInt(i === 7 ? 3 : 21 + i)], events: [event], storedAt: T0, reports: [] })),
    );
    await writer.close();
    expect(outcomes.map((o) => o.status)).toEqual(list.slice(20).map((_, i) => (i === 7 ? 'rejected' : 'fulfilled')));
    expect((outcomes[7] as PromiseRejectedResult).reason).toBeInstanceOf(Error);
    expect(db.prepare('SELECT COUNT(*) FROM events').pluck().get()).toBe(39);
  });

  it('a thread killed mid-group fails what it held; the next write starts a new thread; nothing acknowledged is lost', async () => {
    const { db, log, errors } = openLog(true, { maxGroupEvents: 50_000 });
    const first = records(300, 2);
    const acked = await log.append(first);
    expect(acked.every((o) => o.ok)).toBe(true);

    // A group big enough that its commit is still running when the kill lands.
    const big = Array.from({ length: 30_000 }, (_, i) => ({ ...exampleEventRecord(), crudo: `x${i}`.repeat(40), dedupeKey: `big-${i}` }));
    const held = log.append(big);
    await new Promise((r) => setImmediate(r)); // the group is handed over on this turn
    await (log as unknown as { writer: WriterThread }).writer.kill();
    const heldOutcomes = await held;
    // 30,000 rows take the thread well over 100 ms; the kill lands within them. Each held event is answered.
    expect(heldOutcomes).toHaveLength(30_000);
    expect(heldOutcomes.every((o) => !o.ok)).toBe(true);
    expect(errors).toHaveLength(1);

    const after = records(100, 3);
    const next = await log.append(after);
    expect(next.every((o) => o.ok)).toBe(true);
    expect(await log.writable()).toBe(true);
    await log.close();

    const storedIds = new Set((db.prepare('SELECT id FROM events').pluck().safeIntegers().all() as bigint[]).map(String));
    for (const o of [...acked, ...next]) if (o.ok) expect(storedIds.has(String(o.id))).toBe(true);
    // The failed group's ids are never reused: the next ids are above them.
    for (const o of next) if (o.ok) expect(o.id > 300n + 30_000n).toBe(true);
    // The killed transaction left nothing behind.
    expect(storedIds.size).toBe(300 + 100);
  }, 60_000);

  it('close drains what is queued; probes commit through the ring', async () => {
    const { db, log } = openLog(true, { ringBytes: 1024 });
    expect(await log.writable()).toBe(true);
    const pending = [log.append(records(50, 4)), log.append(records(60, 5).map((r) => ({ ...r, dedupeKey: `${r.dedupeKey}b` })))];
    await log.close();
    expect((await Promise.all(pending)).flat().every((o) => o.ok)).toBe(true);
    expect(db.prepare('SELECT COUNT(*) FROM events').pluck().get()).toBe(110);
    expect(db.prepare('SELECT at FROM store_probe').pluck().get()).toBe(T0);
  });
});
