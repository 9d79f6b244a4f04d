import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DATABASE_FILE,
  SCHEMA_VERSION,
  openEmbeddedBackends,
  type EmbeddedBackends,
  type EmbeddedOptions,
} from '../../../../../shared/backends/embedded/index.js';
import { MemoryLockoutStore } from '../../../../../shared/backends/embedded/lockouts.js';
import { MemorySessionStore } from '../../../../../shared/backends/embedded/sessions.js';
import { eventRecords } from '../../../../helpers/event-records.js';
import { provider, storeContract } from '../../../../helpers/store-contract.js';

const MINUTE = 60_000;
const WINDOW = 10 * MINUTE;
const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-backends-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A controllable clock shared by the backends and the test. */
function clock(start = T0) {
  const c = { t: start, now: () => c.t };
  return c;
}

async function open(dataDir: string, extra: Partial<EmbeddedOptions> = {}): Promise<EmbeddedBackends> {
  const backends = await openEmbeddedBackends({
    dataDir,
    sqliteSynchronous: 'NORMAL',
    dedupeWindowMs: WINDOW,
    ...extra,
  });
  // Registered after the directory, so it runs before the directory is removed.
  cleanups.push(() => backends.close());
  return backends;
}

/** A second, independent connection to the same file, as another process would have. */
function sideConnection(dataDir: string): Database.Database {
  const db = new Database(path.join(dataDir, DATABASE_FILE));
  db.pragma('busy_timeout = 5000');
  cleanups.push(() => {
    db.close();
  });
  return db;
}

function countEvents(dataDir: string): number {
  const db = new Database(path.join(dataDir, DATABASE_FILE), { readonly: true });
  try {
    return Number(db.prepare('SELECT COUNT(*) FROM events').pluck().get());
  } finally {
    db.close();
  }
}

const event = eventRecords({ eventTimeBase: T0 - 3 * 3_600_000, stepMs: 1, receivedAt: T0, dedupePrefix: 'key-' });

describe('database', () => {
  it('creates the data directory, uses WAL and records the schema version', async () => {
    const dataDir = path.join(tempDir(), 'nested', 'data');
    const b = await open(dataDir, { sqliteSynchronous: 'FULL' });
    expect(await b.healthy()).toBe(true);
    await b.close();
    expect(await b.healthy()).toBe(false);

    const db = new Database(path.join(dataDir, DATABASE_FILE), { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();

    // Reopening applies nothing again and keeps the data.
    const again = await open(dataDir);
    expect(await again.providers.create(provider('x'))).not.toBeNull();
  });

  it('refuses a database written by a newer schema', async () => {
    const dataDir = tempDir();
    await (await open(dataDir)).close();
    const db = new Database(path.join(dataDir, DATABASE_FILE));
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    await expect(openEmbeddedBackends({ dataDir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: WINDOW })).rejects.toThrow(
      /newer/,
    );
  });
});

describe('LockoutStore', () => {
  const policy = { maxFailures: 2, userMaxFailures: 1000, windowMs: MINUTE, lockMs: 10 * MINUTE };

  it('sweeps pairs whose failures and lock are over', async () => {
    const store = new MemoryLockoutStore();
    await store.recordFailure('stale', 'a', T0, policy);
    await store.recordFailure('fresh', 'a', T0 + 2 * MINUTE, policy);
    await store.recordFailure('locked', 'a', T0 + 2 * MINUTE - 2, policy);
    await store.recordFailure('locked', 'a', T0 + 2 * MINUTE - 1, policy);
    store.sweep(T0 + 2 * MINUTE);
    expect(store.size).toBe(2);
    expect(await store.recordFailure('fresh', 'a', T0 + 2 * MINUTE + 1, policy)).not.toBeNull();
    store.sweep(T0 + 20 * MINUTE);
    expect(store.size).toBe(0);
  });

  it('keeps memory bounded: past the cap the least recently failing pair is forgotten', async () => {
    const store = new MemoryLockoutStore(1000);
    for (let i = 0; i < 5000; i++) await store.recordFailure(`user-${i % 50}`, `10.1.${i >> 8}.${i & 255}`, T0 + i, policy);
    expect(store.size).toBe(1000);
    // The newest pairs are the ones kept.
    expect(await store.recordFailure('user-49', `10.1.${4999 >> 8}.${4999 & 255}`, T0 + 5000, policy)).not.toBeNull();
  });

  it('reads the client address only while the SystemUser has failures on record, and still finds its locks', async () => {
    const store = new MemoryLockoutStore(3);
    let reads = 0;
    const from = (address: string) => () => {
      reads++;
      return address;
    };
    expect(await store.lockedUntil('u', from('10.0.0.1'), T0)).toBeNull();
    expect(reads).toBe(0);
    await store.recordFailure('u', '10.0.0.1', T0, policy);
    await store.recordFailure('u', '10.0.0.1', T0 + 1, policy);
    expect(await store.lockedUntil('u', from('10.0.0.1'), T0 + 2)).toBe(T0 + 1 + 10 * MINUTE);
    expect(await store.lockedUntil('u', from('10.0.0.2'), T0 + 2)).toBeNull();
    expect(await store.lockedUntil('v', from('10.0.0.1'), T0 + 2)).toBeNull();
    expect(reads).toBe(2);
    // Evicted past the cap (three other pairs), the SystemUser needs no address again.
    for (const user of ['v', 'w', 'x']) await store.recordFailure(user, '10.0.0.9', T0 + 3, policy);
    expect(await store.lockedUntil('u', from('10.0.0.1'), T0 + 4)).toBeNull();
    expect(reads).toBe(2);
    // Swept once its window and lock are over, likewise; a new failure makes it count again.
    store.sweep(T0 + 20 * MINUTE);
    expect(store.size).toBe(0);
    expect(await store.lockedUntil('v', from('10.0.0.9'), T0 + 20 * MINUTE)).toBeNull();
    expect(reads).toBe(2);
    await store.recordFailure('v', '10.0.0.9', T0 + 20 * MINUTE, policy);
    await store.recordFailure('v', '10.0.0.9', T0 + 20 * MINUTE + 1, policy);
    expect(await store.lockedUntil('v', from('10.0.0.9'), T0 + 20 * MINUTE + 2)).toBe(T0 + 20 * MINUTE + 1 + 10 * MINUTE);
    expect(reads).toBe(3);
  });
});

describe('SessionStore', () => {
  it('sweeps expired sessions periodically', async () => {
    const c = clock();
    const b = await open(tempDir(), { now: c.now, sweepIntervalMs: 5 });
    const sessions = b.sessions;
    if (!(sessions instanceof MemorySessionStore)) throw new Error('expected the memory session store');
    await sessions.create('a', 'acme', T0, MINUTE);
    await sessions.create('b', 'acme', T0, 10 * MINUTE);
    expect(sessions.size).toBe(2);
    c.t = T0 + 2 * MINUTE;
    await new Promise((r) => setTimeout(r, 50));
    expect(sessions.size).toBe(1);
    expect(await sessions.touch('b', c.t, MINUTE)).not.toBeNull();
  });
});

describe('TripStore', () => {
  it('fills lastReport from appended events, moving only forward', async () => {
    const b = await open(tempDir());
    await b.trips.addVehicle('acme', 'AA111', 'S1', T0);
    await b.trips.addVehicle('acme', 'BB222', 'S2', T0);
    const last = async () => (await b.trips.listVehicles('acme')).map((v) => v.lastReport);

    const t = 1_714_550_000_000;
    await b.eventLog.append([
      event({ dominio: 'AA111', eventTime: { epochMs: t, subMsTicks: 5 } }),
      event({ dominio: 'AA111', eventTime: { epochMs: t + 1000, subMsTicks: 0 } }),
      event({ dominio: 'AA111', eventTime: { epochMs: t - 1000, subMsTicks: 0 } }),
      // Another provider's events for the same Dominio do not count.
      event({ systemUser: 'other', dominio: 'BB222', eventTime: { epochMs: t, subMsTicks: 0 } }),
    ]);
    expect(await last()).toEqual([{ epochMs: t + 1000, subMsTicks: 0 }, null]);

    // An older event arriving later does not move it back; sub-millisecond ticks count.
    await b.eventLog.append([event({ dominio: 'AA111', eventTime: { epochMs: t + 500, subMsTicks: 0 } })]);
    expect((await last())[0]).toEqual({ epochMs: t + 1000, subMsTicks: 0 });
    await b.eventLog.append([event({ dominio: 'AA111', eventTime: { epochMs: t + 1000, subMsTicks: 7 } })]);
    expect((await last())[0]).toEqual({ epochMs: t + 1000, subMsTicks: 7 });

    // Reported before being registered: still the latest event from that provider for that Dominio.
    await b.eventLog.append([event({ dominio: 'CC333', eventTime: { epochMs: t, subMsTicks: 1 } })]);
    await b.trips.addVehicle('acme', 'CC333', 'S3', T0 + 5);
    expect((await last())[2]).toEqual({ epochMs: t, subMsTicks: 1 });
  });
});

describe('EventLog', () => {
  it('allocates strictly increasing bigint ids and stores every field', async () => {
    const b = await open(tempDir());
    const full = event({
      systemUser: 'acme',
      dominio: 'AB123CD',
      nroSerie: 'SN-ü',
      codigo: '47',
      latitud: -91.5,
      longitud: 181.25,
      altitud: -3.5,
      velocidad: 0,
      rumbo: null,
      validPosition: false,
      valido: false,
      eventTimeText: '2024-05-01T09:00:00.1234567-03:00',
      eventTime: { epochMs: 1_714_564_800_123, subMsTicks: 4567 },
      receptionTimeText: '2024-05-01T09:00:01',
      receptionTime: { epochMs: 1_714_564_801_000, subMsTicks: 0 },
      receivedAt: T0 + 7,
      crudo: '<raw>&amp;</raw>',
      sensors: [
        { clave: 'temp', valor: '21.5' },
        { clave: 'door', valor: '' },
      ],
      operation: 'LoginYInsertarEvento2',
      dedupeKey: 'full-1',
    });
    const [a, bb, cc] = await b.eventLog.append([full, event(), event()]);
    expect(a).toEqual({ ok: true, id: 1n, duplicate: false });
    const ids = [a, bb, cc].map((o) => (o?.ok ? o.id : -1n));
    expect(typeof ids[0]).toBe('bigint');
    expect(ids).toEqual([1n, 2n, 3n]);
    const [d] = await b.eventLog.append([event()]);
    expect(d).toEqual({ ok: true, id: 4n, duplicate: false });

    const stored = (await b.events.recent({ limit: 10 })).find((e) => e.id === 1n);
    expect(stored).toBeDefined();
    const { id, storedAt, ...record } = stored!;
    expect(typeof id).toBe('bigint');
    expect(typeof storedAt).toBe('number');
    expect(record).toEqual(full);
  });

  it('continues ids after a reopen and keeps them exact beyond 2^53', async () => {
    const dataDir = tempDir();
    const b = await open(dataDir);
    await b.eventLog.append([event()]);
    await b.close();
    // Put a large id in, as a long-lived deployment (or an imported history) might have.
    const side = new Database(path.join(dataDir, DATABASE_FILE));
    const big = 2n ** 60n + 1n;
    side.prepare('UPDATE events SET id = ?').run(big);
    side.close();

    const again = await open(dataDir);
    const [next] = await again.eventLog.append([event()]);
    expect(next).toEqual({ ok: true, id: big + 1n, duplicate: false });
    expect((await again.events.recent({ limit: 2 })).map((e) => e.id)).toEqual([big + 1n, big]);
  });

  it('commits all appends made in one event-loop turn together, and all resolve', async () => {
    const b = await open(tempDir(), { maxGroupEvents: 5000 });
    const before = b.eventLogStats().commits;
    const calls = Array.from({ length: 1000 }, () => b.eventLog.append([event(), event()]));
    const results = await Promise.all(calls);
    expect(b.eventLogStats().commits - before).toBe(1);
    const ids = results.flat().map((o) => {
      if (!o.ok || o.duplicate) throw new Error('expected a stored event');
      return o.id;
    });
    expect(ids).toHaveLength(2000);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
    expect(b.eventLogStats().events).toBe(2000);
  });

  it('caps a group and commits the groups in order, one at a time', async () => {
    const b = await open(tempDir(), { maxGroupEvents: 10 });
    const commitsWhenAnswered: number[] = [];
    const appends = Array.from({ length: 25 }, () =>
      b.eventLog.append([event()]).then((r) => {
        commitsWhenAnswered.push(b.eventLogStats().commits);
        return r;
      }),
    );
    const results = await Promise.all(appends);
    expect(b.eventLogStats().commits).toBe(3);
    // Answered group by group, each once its own commit (and every earlier one) was done.
    expect(commitsWhenAnswered).toEqual([...Array<number>(10).fill(1), ...Array<number>(10).fill(2), ...Array<number>(5).fill(3)]);
    expect(results.map((r) => (r[0]?.ok ? r[0].id : 0n))).toEqual(Array.from({ length: 25 }, (_, i) => BigInt(i + 1)));
  });

  it('answers a resent event with the first id: same call, same group, another pending group, later', async () => {
    const dataDir = tempDir();
    const c = clock();
    const b = await open(dataDir, { now: c.now, maxGroupEvents: 3 });
    const e = event({ receivedAt: T0 });
    const resend = (at: number) => ({ ...e, receivedAt: at });

    // Same call and same pending group.
    const p1 = b.eventLog.append([e, resend(T0 + 1)]);
    const p2 = b.eventLog.append([resend(T0 + 2)]);
    // Fill the group so the next copy lands in the next pending group.
    const p3 = b.eventLog.append([event(), event()]);
    const p4 = b.eventLog.append([resend(T0 + 3), event()]);
    const [r1, r2, r3, r4] = await Promise.all([p1, p2, p3, p4]);
    expect(b.eventLogStats().commits).toBe(2);
    expect(r1).toEqual([
      { ok: true, id: 1n, duplicate: false },
      { ok: true, id: 1n, duplicate: true },
    ]);
    expect(r2).toEqual([{ ok: true, id: 1n, duplicate: true }]);
    expect(r3.map((o) => o.ok && o.id)).toEqual([2n, 3n]);
    expect(r4).toEqual([
      { ok: true, id: 1n, duplicate: true },
      { ok: true, id: 4n, duplicate: false },
    ]);

    // After the commit, within the window (measured on receivedAt).
    c.t = T0 + WINDOW - 1;
    expect(await b.eventLog.append([resend(T0 + WINDOW - 1)])).toEqual([{ ok: true, id: 1n, duplicate: true }]);
    expect(countEvents(dataDir)).toBe(4);
    expect(b.eventLogStats().duplicates).toBe(4);
  });

  it('stores a copy outside the window anew, and then dedupes against that one', async () => {
    const dataDir = tempDir();
    const c = clock();
    const b = await open(dataDir, { now: c.now });
    const e = event({ receivedAt: T0 });
    expect(await b.eventLog.append([e])).toEqual([{ ok: true, id: 1n, duplicate: false }]);

    c.t = T0 + WINDOW;
    const later = { ...e, receivedAt: T0 + WINDOW };
    expect(await b.eventLog.append([later])).toEqual([{ ok: true, id: 2n, duplicate: false }]);
    expect(await b.eventLog.append([{ ...e, receivedAt: T0 + WINDOW + 5 }])).toEqual([{ ok: true, id: 2n, duplicate: true }]);
    expect(countEvents(dataDir)).toBe(2);
  });

  it('forgets keys older than the window', async () => {
    const c = clock();
    const b = await open(tempDir(), { now: c.now });
    await b.eventLog.append([event({ receivedAt: T0 }), event({ receivedAt: T0 + 1 })]);
    expect(b.eventLogStats().dedupeKeys).toBe(2);
    c.t = T0 + WINDOW + 1;
    await b.eventLog.append([event({ receivedAt: c.t })]);
    expect(b.eventLogStats().dedupeKeys).toBe(1);
  });

  it('dedupes across a reopen, from the stored window', async () => {
    const dataDir = tempDir();
    const c = clock();
    const b = await open(dataDir, { now: c.now });
    const old = event({ receivedAt: T0 - WINDOW - 1 });
    const recent = event({ receivedAt: T0 - 5 });
    const [o1, r1] = await b.eventLog.append([old, recent]);
    expect(o1?.ok && r1?.ok).toBe(true);
    await b.close();
    expect(countEvents(dataDir)).toBe(2);

    const again = await open(dataDir, { now: c.now });
    expect(again.eventLogStats().dedupeKeys).toBe(1); // only the one inside the window
    const [r2] = await again.eventLog.append([{ ...recent, receivedAt: T0 }]);
    expect(r2).toEqual({ ok: true, id: r1?.ok ? r1.id : -1n, duplicate: true });
    expect(countEvents(dataDir)).toBe(2);
    // The one received before the window is stored again, with a new id.
    const [o2] = await again.eventLog.append([{ ...old, receivedAt: T0 }]);
    expect(o2).toEqual({ ok: true, id: 3n, duplicate: false });
    expect(countEvents(dataDir)).toBe(3);
  });

  it('answers unavailable when a commit fails, forgets those keys, and keeps working', async () => {
    const dataDir = tempDir();
    const errors: unknown[] = [];
    const c = clock();
    const b = await open(dataDir, { now: c.now, onCommitError: (error) => errors.push(error) });
    const [ok] = await b.eventLog.append([event()]);
    expect(ok).toEqual({ ok: true, id: 1n, duplicate: false });

    // Another connection makes every insert fail, as a full disk or an I/O error would.
    const side = sideConnection(dataDir);
    side.exec(`CREATE TRIGGER refuse_events BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'simulated I/O failure'); END`);

    const e = event();
    const [failed, alsoFailed, resentAlone] = await Promise.all([
      b.eventLog.append([e, { ...e, receivedAt: e.receivedAt + 1 }]),
      b.eventLog.append([event()]),
      // A one-event call resending a copy still pending shares that copy's failed commit.
      b.eventLog.append([{ ...e, receivedAt: e.receivedAt + 3 }]),
    ]);
    expect(resentAlone).toEqual([{ ok: false, reason: 'unavailable' }]);
    expect(failed).toEqual([
      { ok: false, reason: 'unavailable' },
      { ok: false, reason: 'unavailable' },
    ]);
    expect(alsoFailed).toEqual([{ ok: false, reason: 'unavailable' }]);
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/simulated I\/O failure/);
    expect(b.eventLogStats().failedCommits).toBe(1);
    expect(countEvents(dataDir)).toBe(1);
    expect(await b.healthy()).toBe(true);

    side.exec('DROP TRIGGER refuse_events');
    // The retry is stored (not answered as a duplicate of an event never acknowledged).
    const [retried] = await b.eventLog.append([e]);
    expect(retried).toMatchObject({ ok: true, duplicate: false });
    expect(retried?.ok && retried.id > 1n).toBe(true);
    expect(await b.eventLog.append([{ ...e, receivedAt: e.receivedAt + 2 }])).toEqual([{ ...retried, duplicate: true }]);
    expect(countEvents(dataDir)).toBe(2);
    // Other stores on the same connection were never affected.
    expect(await b.providers.create(provider('still-here'))).not.toBeNull();
  });

  it('rejects an event SQLite would refuse without failing the others in its group', async () => {
    const b = await open(tempDir());
    const good = b.eventLog.append([event()]);
    await expect(b.eventLog.append([event(), event({ latitud: Number.NaN })])).rejects.toThrow(TypeError);
    expect(await good).toEqual([{ ok: true, id: 1n, duplicate: false }]);
    // Nothing of the refused call was queued.
    expect((await b.eventLog.append([event()]))[0]).toEqual({ ok: true, id: 2n, duplicate: false });
  });

  it('close flushes what is queued, then refuses', async () => {
    const dataDir = tempDir();
    const b = await openEmbeddedBackends({ dataDir, sqliteSynchronous: 'FULL', dedupeWindowMs: WINDOW });
    const pending = b.eventLog.append([event(), event()]);
    await b.close();
    expect(await pending).toEqual([
      { ok: true, id: 1n, duplicate: false },
      { ok: true, id: 2n, duplicate: false },
    ]);
    expect(await b.eventLog.append([event()])).toEqual([{ ok: false, reason: 'unavailable' }]);
    await b.close(); // idempotent
    expect(countEvents(dataDir)).toBe(2);
    expect(await b.eventLog.append([])).toEqual([]);
  });
});

describe('EventStore.recent', () => {
  it('returns the latest first, filtered by provider and Dominio, up to the limit', async () => {
    const b = await open(tempDir());
    await b.eventLog.append([
      event({ systemUser: 'acme', dominio: 'AA' }), // 1
      event({ systemUser: 'acme', dominio: 'BB' }), // 2
      event({ systemUser: 'other', dominio: 'AA' }), // 3
      event({ systemUser: 'acme', dominio: 'AA' }), // 4
    ]);
    const ids = async (q: Parameters<typeof b.events.recent>[0]) => (await b.events.recent(q)).map((e) => e.id);
    expect(await ids({ limit: 10 })).toEqual([4n, 3n, 2n, 1n]);
    expect(await ids({ limit: 2 })).toEqual([4n, 3n]);
    expect(await ids({ provider: 'acme', limit: 10 })).toEqual([4n, 2n, 1n]);
    expect(await ids({ dominio: 'AA', limit: 10 })).toEqual([4n, 3n, 1n]);
    expect(await ids({ provider: 'acme', dominio: 'AA', limit: 1 })).toEqual([4n]);
    expect(await ids({ provider: 'nobody', limit: 10 })).toEqual([]);
    expect(await ids({ limit: 0 })).toEqual([]);
  });
});

describe('memory bounds', () => {
  it('dedupe keys beyond maxDedupeKeys are forgotten oldest first', async () => {
    const dir = tempDir();
    const b = await open(dir, { maxDedupeKeys: 3, now: () => T0 });
    const events = Array.from({ length: 5 }, () => event());
    const ids: bigint[] = [];
    for (const e of events) {
      const [out] = await b.eventLog.append([e]);
      if (!out?.ok) throw new Error('append failed');
      ids.push(out.id);
    }
    expect(b.eventLogStats().dedupeKeys).toBe(3);
    // The newest is still known: same id, not stored again.
    const [again] = await b.eventLog.append([{ ...events[4]! }]);
    expect(again).toEqual({ ok: true, id: ids[4], duplicate: true });
    // The oldest was evicted: a resend is stored anew (best effort past the cap, bounded memory).
    const [old] = await b.eventLog.append([{ ...events[0]! }]);
    expect(old?.ok && old.id > ids[4]!).toBe(true);
    expect(countEvents(dir)).toBe(6);
  });

  it('sessions beyond maxSessions: the least recently used go first', async () => {
    const b = await open(tempDir(), { maxSessions: 3 });
    const ttl = 20 * MINUTE;
    for (const id of ['a', 'b', 'c']) await b.sessions.create(id, 'acme', T0, ttl);
    expect(await b.sessions.touch('a', T0 + 1, ttl)).not.toBeNull(); // a is now the most recent
    await b.sessions.create('d', 'acme', T0 + 2, ttl);
    expect(await b.sessions.touch('b', T0 + 3, ttl)).toBeNull();
    for (const id of ['a', 'c', 'd']) expect(await b.sessions.touch(id, T0 + 3, ttl)).not.toBeNull();
  });
});

describe('commit modes', () => {
  it.each([true, false])('offThreadCommits=%s: groups are committed, durable across a reopen, last reports kept', async (offThreadCommits) => {
    const dir = tempDir();
    const b = await open(dir, { offThreadCommits, now: () => T0 });
    const events = Array.from({ length: 50 }, () => event({ dominio: 'MODE1' }));
    const outcomes = (await Promise.all(events.map((e) => b.eventLog.append([e])))).flat();
    expect(outcomes.every((o) => o.ok)).toBe(true);
    await b.trips.addVehicle('acme', 'MODE1', 'S', T0);
    const latest = events.reduce((a, e) => (e.eventTime.epochMs > a ? e.eventTime.epochMs : a), 0);
    expect((await b.trips.listVehicles('acme'))[0]?.lastReport?.epochMs).toBe(latest);
    await b.close();
    expect(countEvents(dir)).toBe(50);
  });
});

describe('durability settings', () => {
  it.each(['FULL', 'NORMAL'] as const)('events commit with synchronous=%s on the writer thread whatever the state connection uses', async (sync) => {
    const b = await open(tempDir(), { sqliteSynchronous: sync });
    expect(b.eventLog.commitSynchronous).toBe(sync);
  });

  it('inline commits use the connection, which keeps the configured setting', async () => {
    const b = await open(tempDir(), { sqliteSynchronous: 'FULL', offThreadCommits: false });
    expect(b.eventLog.commitSynchronous).toBe('FULL');
  });
});

describe('store contract (embedded)', () => {
  storeContract({ place: tempDir, open: (dataDir) => open(dataDir) });
});
