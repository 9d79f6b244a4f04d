import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  openRedisStores,
  RedisDataError,
  RedisKeys,
  RedisUnavailableError,
  type RedisStores,
  type RedisStoresOptions,
} from '../../shared/backends/redis/index.js';
import { hashSlot } from '../../shared/backends/redis/slots.js';
import { newSessionId } from '../../shared/domain/session-ids.js';
import { services, uniqueName } from '../helpers/services.js';

import { provider, storeContract } from '../helpers/store-contract.js';
import { REPO } from '../helpers/paths.js';
import { freePort } from '../helpers/spawned.js';
import { sleep } from '../helpers/wait.js';

const MINUTE = 60_000;
const DAY = 24 * 3_600_000;
const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);

/** Every key of this file starts with it, so parallel files and runs never collide. */
const FILE_PREFIX = uniqueName('redis-backends-test');
let testSerial = 0;

let redisUrl = '';
/** A plain client for inspecting and cleaning up keys. */
let admin: Redis;

beforeAll(async () => {
  // Throws a clear error when the services were not started: the suite fails, it never skips.
  redisUrl = services().redisUrl;
  admin = new Redis(redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 2000 });
  admin.on('error', () => {});
  expect(await admin.ping()).toBe('PONG');
});

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  if (admin === undefined) return;
  await deleteByPrefix(`${FILE_PREFIX}:`);
  expect(await keysWithPrefix(`${FILE_PREFIX}:`)).toEqual([]);
  await admin.quit();
});

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function keysWithPrefix(prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    found.push(...batch);
  } while (cursor !== '0');
  return found;
}

async function deleteByPrefix(prefix: string): Promise<void> {
  const found = await keysWithPrefix(prefix);
  for (let i = 0; i < found.length; i += 500) await admin.del(...found.slice(i, i + 500));
}

/** A fresh key prefix for one test, whose keys are deleted after it. */
function freshPrefix(): string {
  const prefix = `${FILE_PREFIX}:${++testSerial}:`;
  cleanups.unshift(() => deleteByPrefix(prefix)); // runs last, after the stores are closed
  return prefix;
}

const quietLogger = { warn: () => {} };

async function open(keyPrefix: string, extra: Partial<RedisStoresOptions> = {}): Promise<RedisStores> {
  const stores = await openRedisStores({ url: redisUrl, keyPrefix, logger: quietLogger, ...extra });
  cleanups.push(() => stores.close());
  return stores;
}

describe('openRedisStores', () => {
  it('answers healthy until closed; close is idempotent', async () => {
    const s = await open(freshPrefix());
    expect(await s.healthy()).toBe(true);
    await s.close();
    await s.close();
    expect(await s.healthy()).toBe(false);
  });

  it('a client that ends by itself (ioredis does, in a failover race) is connected again; close() ends it for good', async () => {
    const warnings: string[] = [];
    const s = await openRedisStores({ url: redisUrl, keyPrefix: freshPrefix(), logger: { warn: (_o, msg) => warnings.push(msg) } });
    // Ended without this module asking: the state ioredis leaves a Sentinel client in when its
    // failover detector fires mid-connect (every call then fails with "Connection is closed.").
    s.redis.disconnect();
    await new Promise((r) => s.redis.once('end', r));
    const deadline = Date.now() + 5000;
    while (!(await s.healthy())) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await s.providers.get('nobody')).toBeNull();
    expect(warnings).toContain('Redis client ended by itself; connecting it again');
    await s.close();
    await new Promise((r) => setTimeout(r, 300));
    expect(s.redis.status).toBe('end');
    expect(await s.healthy()).toBe(false);
  });

  it('fails fast with a clear error when Redis cannot be reached', async () => {
    const port = await freePort();
    const started = Date.now();
    const err: unknown = await openRedisStores({ url: `redis://127.0.0.1:${port}`, logger: quietLogger }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RedisUnavailableError);
    expect((err as Error).message).toMatch(new RegExp(`Redis at redis://127\\.0\\.0\\.1:${port} is unavailable`));
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

describe('ProviderStore', () => {
  it('stores explicit fields: booleans as 1/0, numbers as decimal text, a null time zone as no field', async () => {
    const k = new RedisKeys(freshPrefix());
    const b = await open(k.prefix);
    await b.providers.create({ ...provider('x:y'), requireRegisteredVehicles: true });
    expect(await admin.hgetall(k.provider('x:y'))).toEqual({
      systemUser: 'x:y',
      passwordHash: 'scrypt$16384$8$1$c2FsdA==$aGFzaA==',
      enabled: '1',
      requireRegisteredVehicles: '1',
      createdAt: String(T0),
      updatedAt: String(T0),
    });
    expect(await admin.smembers(k.providers())).toEqual(['x:y']);
    await b.providers.update('x:y', { enabled: false, timeZone: 'UTC' }, T0 + 1);
    expect(await admin.hmget(k.provider('x:y'), 'enabled', 'timeZone')).toEqual(['0', 'UTC']);

    // A value of a shape this module did not write fails the call as a data error naming the key
    // (not its value), on every try, and the connection goes on serving the other calls.
    await admin.hset(k.provider('x:y'), 'enabled', 'yes');
    for (let i = 0; i < 2; i++) {
      const err: unknown = await b.providers.get('x:y').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RedisDataError);
      expect((err as Error).message).toBe(`Expected '1' or '0' for ${k.provider('x:y')} enabled, got 3 characters of something else.`);
    }
    expect(await b.providers.get('nobody')).toBeNull();
    await admin.hset(k.provider('x:y'), 'enabled', '1');
    expect((await b.providers.get('x:y'))?.enabled).toBe(true);
  });

  it('is shared by gateways: one of two racing creates wins; the other sees it', async () => {
    const prefix = freshPrefix();
    const [a, b] = await Promise.all([open(prefix), open(prefix)]);
    for (let i = 0; i < 20; i++) {
      const name = `race-${i}`;
      const results = await Promise.all([a.providers.create(provider(name)), b.providers.create(provider(name, T0 + 1))]);
      expect(results.filter((r) => r !== null)).toHaveLength(1);
    }
    expect(await b.providers.get('race-0')).not.toBeNull();
    expect(await a.providers.list()).toHaveLength(20);
    await a.providers.update('race-0', { enabled: false }, T0 + 2);
    expect((await b.providers.get('race-0'))?.enabled).toBe(false); // nothing cached
  });
});

describe('LockoutStore', () => {
  const policy = { maxFailures: 10, userMaxFailures: 100, windowMs: 15 * MINUTE, lockMs: 15 * MINUTE };

  it('keeps one hash per SystemUser that Redis expires after the window and the lock (plus slack)', async () => {
    const k = new RedisKeys(freshPrefix());
    const b = await open(k.prefix);
    await b.lockouts.recordFailure('u', 'a', T0, policy);
    const failuresTtl = await admin.pttl(k.lockout('u'));
    expect(failuresTtl).toBeGreaterThan(15 * MINUTE - 5000);
    expect(failuresTtl).toBeLessThanOrEqual(16 * MINUTE);
    for (let i = 1; i < 10; i++) await b.lockouts.recordFailure('u', 'a', T0 + i, policy);
    expect(await admin.hget(k.lockout('u'), 'l:a')).toBe(String(T0 + 9 + 15 * MINUTE));
    // The operators' index holds the lock's end too (a second call: the index is in a slot of its own).
    expect(await admin.zscore(k.lockoutIndex(), 'u')).toBe(String(T0 + 9 + 15 * MINUTE));
    // Epoch milliseconds survive Lua exactly (no 1.7e+12 formatting).
    expect(await b.lockouts.lockedUntil('u', () => 'a', T0 + 10)).toBe(T0 + 9 + 15 * MINUTE);
  });

  it('counts atomically across gateways', async () => {
    const prefix = freshPrefix();
    const [a, b] = await Promise.all([open(prefix), open(prefix)]);
    // 100 failures from 100 addresses through two gateways: exactly the 100th locks the SystemUser.
    const locks = await Promise.all(
      Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? a : b).lockouts.recordFailure('shared', `192.0.2.${i}`, T0 + i, policy)),
    );
    expect(locks.filter((l) => l !== null)).toHaveLength(1);
    expect(await a.lockouts.list(T0 + 200)).toEqual([{ systemUser: 'shared', address: null, until: expect.any(Number) as number }]);
  });

  it('keeps at most the threshold of failure times per address, and drops stale addresses', async () => {
    const k = new RedisKeys(freshPrefix());
    const b = await open(k.prefix);
    const small = { ...policy, userMaxFailures: 50 };
    for (let i = 0; i < 9; i++) await b.lockouts.recordFailure('flood', 'same', T0 + i, small);
    expect((await admin.hget(k.lockout('flood'), 'f:same'))?.split(',')).toHaveLength(9);
    // Addresses that failed once, window after window, below the SystemUser-wide ceiling: the
    // stale ones are pruned, so the hash never holds much more than two windows' worth.
    for (let w = 0; w < 6; w++) {
      for (let i = 0; i < 45; i++) await b.lockouts.recordFailure('flood', `w${w}-${i}`, T0 + w * 16 * MINUTE + i, small);
    }
    expect(await admin.hlen(k.lockout('flood'))).toBeLessThanOrEqual(2 * 50 + 8);
    // Once the SystemUser is locked everywhere, nothing more is recorded.
    for (let i = 0; i < 60; i++) await b.lockouts.recordFailure('flood', `late-${i}`, T0 + 200 * MINUTE + i, small);
    const fields = await admin.hkeys(k.lockout('flood'));
    expect(fields.filter((f) => f.startsWith('f:late-'))).toHaveLength(50);
  });
});

describe('SessionStore', () => {
  it('is shared by gateways, keeps odd SystemUsers intact and gives the key a real expiry', async () => {
    const k = new RedisKeys(freshPrefix());
    const [a, b] = await Promise.all([open(k.prefix), open(k.prefix)]);
    const user = 'ñandú "quoted" \\ / \u{1F69A}';
    const { id } = await a.sessions.create(newSessionId(), user, T0, 20 * MINUTE);
    expect(await b.sessions.touch(id, T0 + MINUTE, 20 * MINUTE)).toEqual({ id, systemUser: user, expiresAt: T0 + 21 * MINUTE });
    expect(await a.sessions.touch(id, T0 + 2 * MINUTE, 20 * MINUTE)).toEqual({ id, systemUser: user, expiresAt: T0 + 22 * MINUTE });
    const ttl = await admin.pttl(k.session(id));
    expect(ttl).toBeGreaterThan(20 * MINUTE - 5000);
    expect(ttl).toBeLessThanOrEqual(20 * MINUTE);
    expect(await b.sessions.destroy(id, T0 + 3 * MINUTE)).toBe(true);
    expect(await admin.exists(k.session(id))).toBe(0);

    // Redis frees abandoned sessions by itself.
    const short = await a.sessions.create(newSessionId(), 'acme', Date.now(), 100);
    await sleep(250);
    expect(await admin.exists(k.session(short.id))).toBe(0);
  });

  it('hands out ids that carry the provider\'s hash slot, so the session lives in its provider\'s slot', async () => {
    const k = new RedisKeys(freshPrefix());
    const a = await open(k.prefix);
    for (const user of ['acme', 'x}y', 'ñandú', '{tagged}']) {
      const given = newSessionId();
      const { id } = await a.sessions.create(given, user, T0, 20 * MINUTE);
      expect(id).toMatch(/^[a-z0-5]{24}$/);
      expect(id.slice(0, 21)).toBe(given.slice(0, 21));
      // The session key's slot is the provider's (Redis computes the same: test/cluster/).
      expect(hashSlot(k.session(id))).toBe(hashSlot(k.provider(user)));
      expect(await a.sessions.touch(id, T0 + MINUTE, 20 * MINUTE)).toMatchObject({ id, systemUser: user });
    }
  });
});

describe('CommandStore', () => {
  it('never applies a call twice when its reply is lost with the connection', async () => {
    const prefix = freshPrefix();
    const s = await open(prefix, { commandTimeoutMs: 500 });
    // Written to the socket, then the connection is cut before the reply can arrive.
    const pending = s.commands.enqueue({ systemUser: 'acme', cmd: 'CC', unidad: 'U', equipo: 'E', now: T0, expiresAt: T0 + DAY });
    (s.redis as Redis).stream.destroy();
    const outcome = await pending.then(
      () => 'ok',
      (e: unknown) => e,
    );
    if (outcome !== 'ok') expect(outcome).toBeInstanceOf(RedisUnavailableError);
    // Queued at most once (ioredis would resend the script after reconnecting unless told not to).
    expect((await s.commands.list('acme', T0)).length).toBeLessThanOrEqual(1);
    expect(await s.healthy()).toBe(true);
  });

  it('two gateways racing ComandoProcesado: exactly one finishes it', async () => {
    const prefix = freshPrefix();
    const [a, b] = await Promise.all([open(prefix), open(prefix)]);
    for (let i = 0; i < 25; i++) {
      const c = await a.commands.enqueue({ systemUser: 'acme', cmd: 'CC', unidad: 'U', equipo: 'E', now: T0, expiresAt: T0 + DAY });
      // Same outcome (a retried call on another gateway): one 'finished', one 'already-same'.
      const same = await Promise.all([a.commands.finish('acme', c.numero, true, T0 + 1), b.commands.finish('acme', c.numero, true, T0 + 1)]);
      expect([...same].sort()).toEqual(['already-same', 'finished']);

      // Opposite outcomes: one wins, the other is rejected, and the stored state is the winner's.
      const d = await b.commands.enqueue({ systemUser: 'acme', cmd: 'CC', unidad: 'U', equipo: 'E', now: T0, expiresAt: T0 + DAY });
      const opposite = await Promise.all([a.commands.finish('acme', d.numero, true, T0 + 2), b.commands.finish('acme', d.numero, false, T0 + 2)]);
      expect([...opposite].sort()).toEqual(['finished', 'rejected']);
      const stored = (await a.commands.list('acme', T0 + 3)).find((x) => x.numero === d.numero);
      expect(stored?.state).toBe(opposite[0] === 'finished' ? 'succeeded' : 'failed');
      expect(stored?.history.filter((h) => h.kind === 'finished')).toHaveLength(1);
    }
    expect(await a.commands.deliverNext('acme', T0 + 10)).toBeNull();

    // Concurrent polls from both gateways count every delivery.
    const c = await a.commands.enqueue({ systemUser: 'acme', cmd: 'CC', unidad: 'U', equipo: 'E', now: T0, expiresAt: T0 + DAY });
    await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).commands.deliverNext('acme', T0 + 20)));
    expect((await b.commands.deliverNext('acme', T0 + 21))).toMatchObject({ numero: c.numero, deliveries: 41 });
  });
});

describe('TripStore and LastReportSink', () => {
  it('fills lastReport from recorded reports, moving only forward', async () => {
    const b = await open(freshPrefix());
    await b.trips.addVehicle('acme', 'AA111', 'S1', T0);
    await b.trips.addVehicle('acme', 'BB222', 'S2', T0);
    const last = async () => (await b.trips.listVehicles('acme')).map((v) => v.lastReport);

    const t = 1_714_550_000_000;
    await b.lastReports.record([
      { systemUser: 'acme', dominio: 'AA111', at: { epochMs: t, subMsTicks: 5 } },
      { systemUser: 'acme', dominio: 'AA111', at: { epochMs: t + 1000, subMsTicks: 0 } },
      { systemUser: 'acme', dominio: 'AA111', at: { epochMs: t - 1000, subMsTicks: 0 } },
      // Another provider's events for the same Dominio do not count.
      { systemUser: 'other', dominio: 'BB222', at: { epochMs: t, subMsTicks: 0 } },
    ]);
    expect(await last()).toEqual([{ epochMs: t + 1000, subMsTicks: 0 }, null]);

    // An older event arriving later does not move it back; sub-millisecond ticks count.
    await b.lastReports.record([{ systemUser: 'acme', dominio: 'AA111', at: { epochMs: t + 500, subMsTicks: 0 } }]);
    expect((await last())[0]).toEqual({ epochMs: t + 1000, subMsTicks: 0 });
    await b.lastReports.record([{ systemUser: 'acme', dominio: 'AA111', at: { epochMs: t + 1000, subMsTicks: 7 } }]);
    expect((await last())[0]).toEqual({ epochMs: t + 1000, subMsTicks: 7 });
    await b.lastReports.record([{ systemUser: 'acme', dominio: 'AA111', at: { epochMs: t + 1000, subMsTicks: 6 } }]);
    expect((await last())[0]).toEqual({ epochMs: t + 1000, subMsTicks: 7 });

    // Reported before being registered: still the latest event from that provider for that Dominio.
    await b.lastReports.record([{ systemUser: 'acme', dominio: 'CC333', at: { epochMs: t, subMsTicks: 1 } }]);
    await b.trips.addVehicle('acme', 'CC333', 'S3', T0 + 5);
    expect((await last())[2]).toEqual({ epochMs: t, subMsTicks: 1 });

    await b.lastReports.record([]);
    await expect(
      b.lastReports.record([{ systemUser: 'acme', dominio: 'AA111', at: { epochMs: t, subMsTicks: 10_000 } }]),
    ).rejects.toBeInstanceOf(RangeError);
  });

  it('moves last reports forward only, under concurrent writers and large batches', async () => {
    const prefix = freshPrefix();
    const [a, b] = await Promise.all([open(prefix), open(prefix)]);
    const t = 1_714_550_000_000;
    const dominios = Array.from({ length: 1200 }, (_, i) => `D${String(i).padStart(4, '0')}`);
    for (const d of dominios.slice(0, 3)) await a.trips.addVehicle('acme', d, 'S', T0);
    const batches = Array.from({ length: 20 }, (_, k) =>
      dominios.map((dominio) => ({ systemUser: 'acme', dominio, at: { epochMs: t + ((k * 7919) % 20) * 1000, subMsTicks: k } })),
    );
    await Promise.all(batches.map((batch, k) => (k % 2 ? a : b).lastReports.record(batch)));
    // The maximum of all batches: epochMs offset 19 s, from k with (k * 7919) % 20 === 19.
    const winner = batches.findIndex((_, k) => (k * 7919) % 20 === 19);
    const expected = { epochMs: t + 19_000, subMsTicks: winner };
    expect((await b.trips.listVehicles('acme')).map((v) => v.lastReport)).toEqual([expected, expected, expected]);
    expect(await admin.hlen(new RedisKeys(prefix).lastReports('acme'))).toBe(1200);
    expect(await admin.hget(new RedisKeys(prefix).lastReports('acme'), 'D1199')).toBe(`${t + 19_000}:${winner}`);
  });
});

describe('trip pages (Redis)', () => {
  it('a trip written before the Dominio index existed is indexed on its first page, once', async () => {
    const prefix = freshPrefix();
    const a = await open(prefix);
    // As an older gateway wrote it: the hash alone.
    const k = new RedisKeys(prefix);
    for (const d of ['C3', 'A1', 'B2']) await admin.hset(k.trip('acme'), d, JSON.stringify({ nroSerie: 'S', registeredAt: T0 }));
    expect((await a.trips.pageVehicles('acme', { limit: 2 })).map((v) => v.dominio)).toEqual(['A1', 'B2']);
    expect(await admin.zcard(k.tripIndex('acme'))).toBe(3);
    await a.trips.addVehicle('acme', 'D4', 'S', T0);
    expect((await a.trips.pageVehicles('acme', { limit: 10, afterDominio: 'B2' })).map((v) => v.dominio)).toEqual(['C3', 'D4']);
    // A vehicle written by an older gateway meanwhile (index and hash differ in size) is picked up too.
    await admin.hset(k.trip('acme'), 'A0', JSON.stringify({ nroSerie: 'S', registeredAt: T0 }));
    expect((await a.trips.pageVehicles('acme', { limit: 1 })).map((v) => v.dominio)).toEqual(['A0']);
  });
});

describe('store contract (Redis)', () => {
  storeContract({ place: freshPrefix, open: (prefix) => open(prefix) });
});

describe('DedupeIndex', () => {
  it('claims, returns the first id for a resend, releases, and is shared by gateways', async () => {
    const prefix = freshPrefix();
    const [a, b] = await Promise.all([open(prefix), open(prefix)]);
    const W = 10 * MINUTE;
    expect(await a.dedupe.claim([], W)).toEqual([]);
    const u = 'acme';
    expect(await a.dedupe.claim([{ systemUser: u, key: 'k1', id: 1n }, { systemUser: u, key: 'k2', id: 2n }], W)).toEqual([null, null]);
    // A resend on another gateway, and a duplicate inside one call.
    expect(await b.dedupe.claim([{ systemUser: u, key: 'k1', id: 10n }, { systemUser: u, key: 'k3', id: 11n }, { systemUser: u, key: 'k3', id: 12n }], W)).toEqual([1n, null, 11n]);
    const k = new RedisKeys(prefix);
    const ttl = await admin.pttl(k.dedupe(u, 'k1'));
    expect(ttl).toBeGreaterThan(W - 5000);
    expect(ttl).toBeLessThanOrEqual(W);
    expect(await admin.get(k.dedupe(u, 'k1'))).toBe('1');
    // One provider's claims are its own: the same key of another provider is another claim.
    expect(await b.dedupe.claim([{ systemUser: 'other', key: 'k1', id: 40n }, { systemUser: u, key: 'k1', id: 41n }], W)).toEqual([null, 1n]);

    // Events that could not be stored: forget their claims so a retry is stored.
    await a.dedupe.release(['k1', 'k3', 'never-claimed'].map((key) => ({ systemUser: u, key })));
    await a.dedupe.release([]);
    expect(await b.dedupe.claim([{ systemUser: u, key: 'k1', id: 20n }, { systemUser: u, key: 'k2', id: 21n }, { systemUser: u, key: 'k3', id: 22n }], W)).toEqual([null, 2n, null]);

    // Compare-and-delete: only claims still holding our id go.
    await a.dedupe.releaseClaims([{ systemUser: u, key: 'k1', id: 999n }, { systemUser: u, key: 'k2', id: 2n }]);
    expect(await a.dedupe.claim([{ systemUser: u, key: 'k1', id: 30n }, { systemUser: u, key: 'k2', id: 31n }], W)).toEqual([20n, null]);

    // Claiming again with the id a key already holds is our own claim, not a resend.
    expect(await a.dedupe.claim([{ systemUser: u, key: 'k1', id: 20n }], W)).toEqual([null]);

    // Ids beyond 2^53 come back exact.
    const big = 2n ** 62n + 7n;
    expect(await a.dedupe.claim([{ systemUser: u, key: 'big', id: big }], W)).toEqual([null]);
    expect(await b.dedupe.claim([{ systemUser: u, key: 'big', id: 1n }], W)).toEqual([big]);
  });

  it('forgets a claim after the window', async () => {
    const b = await open(freshPrefix());
    expect(await b.dedupe.claim([{ systemUser: 'acme', key: 'w', id: 5n }], 300)).toEqual([null]);
    expect(await b.dedupe.claim([{ systemUser: 'acme', key: 'w', id: 6n }], 300)).toEqual([5n]);
    await sleep(400);
    expect(await b.dedupe.claim([{ systemUser: 'acme', key: 'w', id: 7n }], 300)).toEqual([null]);
  });

  it('claims thousands of keys in one call', async () => {
    const b = await open(freshPrefix());
    // Three providers interleaved: each one's claims go to its slot, answers in the order asked.
    const entries = Array.from({ length: 5000 }, (_, i) => ({ systemUser: `p${i % 3}`, key: `bulk-${i}`, id: BigInt(i + 1) }));
    expect((await b.dedupe.claim(entries, MINUTE)).every((r) => r === null)).toBe(true);
    const again = await b.dedupe.claim(entries.map((e) => ({ ...e, id: e.id + 10_000n })), MINUTE);
    expect(again).toEqual(entries.map((e) => e.id));
    await b.dedupe.release(entries);
    expect(await b.dedupe.claim(entries.slice(0, 3), MINUTE)).toEqual([null, null, null]);
  });
});

// ---------------------------------------------------------------------------------------------
// Fault injection, last in the file. It runs against a private Redis started with the same
// scripts (own SERVICES_DIR, env file and port), so stopping it cannot break other test files that
// use the shared Redis while this one runs.

const execFileAsync = promisify(execFile);

async function servicesScript(script: 'up.sh' | 'down.sh', env: Record<string, string>): Promise<void> {
  await execFileAsync('bash', [path.join(REPO, 'scripts', 'services', script), 'redis'], {
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
}

async function rejection(promise: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  try {
    await promise;
  } catch (error) {
    return { error, ms: Date.now() - started };
  }
  throw new Error('expected the call to reject');
}

describe('Redis down', () => {
  it('rejects calls within seconds with a clear error, keeps the process up, and recovers', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'redis-fault-'));
    const port = await freePort();
    const env = {
      SERVICES_DIR: path.join(dir, 'services'),
      SERVICES_ENV_FILE: path.join(dir, 'services.env'),
      SERVICES_REDIS_PORT: String(port),
    };
    try {
      await servicesScript('up.sh', env);
      const warnings: string[] = [];
      const s = await openRedisStores({
        url: `redis://127.0.0.1:${port}`,
        keyPrefix: `${FILE_PREFIX}:fault:`,
        logger: { warn: (_obj, msg) => warnings.push(msg) },
      });
      try {
        const { id: s1 } = await s.sessions.create(newSessionId(), 'acme', T0, MINUTE);
        const queued = await s.commands.enqueue({ systemUser: 'acme', cmd: 'CC', unidad: 'U', equipo: 'E', now: T0, expiresAt: T0 + DAY });
        expect(await s.healthy()).toBe(true);

        await servicesScript('down.sh', env);

        const touch = await rejection(s.sessions.touch(s1, T0 + 1, MINUTE));
        expect(touch.error).toBeInstanceOf(RedisUnavailableError);
        expect((touch.error as Error).message).toMatch(new RegExp(`^Redis at redis://127\\.0\\.0\\.1:${port} is unavailable \\(sessions\\.touch\\)`));
        expect(touch.ms).toBeLessThan(3000);
        // Every kind of call fails the same way, concurrently, without hanging.
        const all = await Promise.all([
          rejection(s.commands.finish('acme', queued.numero, true, T0 + 2)),
          rejection(s.providers.get('acme')),
          rejection(s.dedupe.claim([{ systemUser: 'acme', key: 'k', id: 1n }], MINUTE)),
          rejection(s.lastReports.record([{ systemUser: 'acme', dominio: 'D', at: { epochMs: T0, subMsTicks: 0 } }])),
        ]);
        for (const r of all) {
          expect(r.error).toBeInstanceOf(RedisUnavailableError);
          expect(r.ms).toBeLessThan(3000);
        }
        expect(await s.healthy()).toBe(false);
        expect(warnings).toContain('Redis connection lost; calls fail until it is back');

        await servicesScript('up.sh', env);
        const deadline = Date.now() + 15_000;
        while (!(await s.healthy())) {
          if (Date.now() > deadline) throw new Error('the client did not reconnect within 15 s');
          await sleep(100);
        }
        expect(warnings).toContain('Redis connection restored');
        // A new, empty Redis (the test one keeps nothing): its script cache is empty too, so this
        // also exercises the EVALSHA → EVAL fallback.
        const c = await s.commands.enqueue({ systemUser: 'acme', cmd: 'CC', unidad: 'U', equipo: 'E', now: T0, expiresAt: T0 + DAY });
        expect(c.numero).toBe(1);
        expect((await s.commands.deliverNext('acme', T0 + 1))?.numero).toBe(1);
        expect(await s.dedupe.claim([{ systemUser: 'acme', key: 'k', id: 1n }], MINUTE)).toEqual([null]);
      } finally {
        await s.close();
      }
    } finally {
      await servicesScript('down.sh', env).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
