/**
 * Upgrading a deployment whose Redis holds key layout 1 (every release before Redis Cluster
 * support): test/fixtures/redis/layout-1.json is what the last such release's stores wrote. The
 * first process of this release to open Redis moves it to layout 2 (shared/backends/redis/layout.ts),
 * and everything reads back through today's stores: nothing is orphaned.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_LAYOUT, openRedisStores, RedisKeys, type RedisStores } from '../../shared/backends/redis/index.js';
import { REPO } from '../helpers/paths.js';
import { services, uniqueName } from '../helpers/services.js';

interface FixtureKey {
  key: string;
  type: 'string' | 'hash' | 'set' | 'zset' | 'list';
  expires: boolean;
  value: unknown;
}

const FIXTURE = JSON.parse(readFileSync(path.join(REPO, 'test/fixtures/redis/layout-1.json'), 'utf8')) as { keys: FixtureKey[] };
const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);
const YEAR = 365 * 86_400_000;

let admin: Redis;
const prefixes: string[] = [];
beforeAll(() => {
  admin = new Redis(services().redisUrl);
});
afterAll(async () => {
  for (const p of prefixes) {
    const found = await admin.keys(`${p}*`);
    for (let i = 0; i < found.length; i += 500) await admin.del(...found.slice(i, i + 500));
  }
  admin.disconnect();
});

/** The fixture's keys under a fresh prefix, as the earlier release left them. */
async function loadLayout1(): Promise<string> {
  const prefix = `${uniqueName('layout1')}:`;
  prefixes.push(prefix);
  for (const k of FIXTURE.keys) {
    const key = `${prefix}${k.key}`;
    if (k.type === 'string') await admin.set(key, k.value as string);
    else if (k.type === 'hash') await admin.hset(key, k.value as Record<string, string>);
    else if (k.type === 'set') await admin.sadd(key, ...(k.value as string[]));
    else if (k.type === 'list') await admin.rpush(key, ...(k.value as string[]));
    else for (const [member, score] of k.value as [string, string][]) await admin.zadd(key, score, member);
    if (k.expires) await admin.pexpire(key, YEAR);
  }
  return prefix;
}

async function open(prefix: string, warnings: string[] = []): Promise<RedisStores> {
  return openRedisStores({ url: services().redisUrl, keyPrefix: prefix, logger: { warn: (_o, msg) => warnings.push(msg) } });
}

describe('key layout 1 → 2', () => {
  it('moves every entity of an earlier release, and reads each back through the stores', async () => {
    const prefix = await loadLayout1();
    const warnings: string[] = [];
    const s = await open(prefix, warnings);
    try {
      expect(warnings).toContain(`Redis: data moved to key layout ${KEY_LAYOUT}`);
      const k = new RedisKeys(prefix);
      expect(await admin.get(k.layout())).toBe(String(KEY_LAYOUT));

      // Providers, with every field as it was.
      expect((await s.providers.list()).map((p) => p.systemUser)).toEqual(['acme', 'beta', 'x:y}z']);
      expect(await s.providers.get('beta')).toEqual({
        systemUser: 'beta',
        passwordHash: 'scrypt$16384$8$1$c2FsdA==$aGFzaA==',
        enabled: false,
        timeZone: 'America/Argentina/Buenos_Aires',
        requireRegisteredVehicles: true,
        createdAt: T0 + 1,
        updatedAt: T0 + 2,
      });

      // Lockouts: the lock in force, and the operators' list of it.
      expect(await s.lockouts.lockedUntil('acme', () => '10.0.0.1', T0 + 2)).toBe(T0 + 1 + 10 * YEAR);
      expect(await s.lockouts.list(T0 + 2)).toEqual([{ systemUser: 'acme', address: '10.0.0.1', until: T0 + 1 + 10 * YEAR }]);

      // Sessions handed out by the earlier release are dropped (their ids carry no hash slot): those clients log in again.
      expect(await s.sessions.touch('aaaaaaaaaaaaaaaaaaaaaaaa', T0 + 1000, 20 * 60_000)).toBeNull();
      expect(await s.sessions.endAll('beta', T0 + 1000)).toBe(0);

      // Commands: their states and histories, the queue, paging across providers, and NUMERO going on.
      const acme = await s.commands.list('acme', T0 + 100);
      expect(acme.map((c) => [c.numero, c.cmd, c.state])).toEqual([
        [1, 'CORTE', 'succeeded'],
        [2, 'RESTAURA', 'cancelled'],
        [4, 'POSICION', 'pending'],
      ]);
      expect(acme[0]!.history.map((h) => h.kind)).toEqual(['queued', 'delivered', 'status', 'finished']);
      expect((await s.commands.page({ limit: 10 }, T0 + 100)).commands.map((c) => [c.numero, c.systemUser])).toEqual([
        [4, 'acme'],
        [3, 'beta'],
        [2, 'acme'],
        [1, 'acme'],
      ]);
      expect(await s.commands.deliverNext('acme', T0 + 100)).toMatchObject({ numero: 4, cmd: 'POSICION', deliveries: 1 });
      const next = await s.commands.enqueue({ systemUser: 'beta', cmd: 'NUEVO', unidad: 'U', equipo: 'E', now: T0 + 200, expiresAt: T0 + YEAR });
      expect(next.numero).toBe(5);

      // The trip and its last report.
      expect(await s.trips.listVehicles('acme')).toEqual([
        { dominio: 'AB123CD', nroSerie: 'SN-1', registeredAt: T0, lastReport: { epochMs: T0 + 5000, subMsTicks: 7 } },
        { dominio: 'CD456EF', nroSerie: 'SN-2', registeredAt: T0 + 1, lastReport: null },
      ]);

      // Operators' tokens, the audit trail with its filters, poison messages, the id-blocks marker.
      expect((await s.operators.tokens.use('h-ops', T0 + 10))?.name).toBe('ops');
      expect((await s.operators.tokens.list()).map((t) => t.name)).toEqual(['ops', 'viewer']);
      expect((await s.operators.audit.page({ limit: 10, identity: 'ops' })).entries.map((e) => e.id)).toEqual([2, 1]);
      expect((await s.operators.audit.page({ limit: 10, target: 'provider/acme' })).entries.map((e) => e.id)).toEqual([2, 1]);
      expect((await s.operators.audit.append({ at: T0 + 9, identity: 'ops', role: 'admin', address: 'x', method: 'GET', route: '/r', target: null, status: 200, outcome: 'ok', changes: [], detail: null, requestId: 'r4' })).id).toBe(4);
      expect((await s.poison.list(10)).map((m) => [m.id, m.value.toString()])).toEqual([['2-17', 'garbage']]);
      expect(await admin.get(k.idBlocksChecked())).toBe('topic-id-xyz');

      // What is left under the old names: resend claims and token guesses, which expire by themselves.
      const left = (await admin.keys(`${prefix}*`)).filter((key) => !key.startsWith(`${prefix}{`)).map((key) => key.slice(prefix.length));
      expect(left.sort()).toEqual(['admin-guess:1.2.3.4', 'dedupe:dedupe-key-1']);
    } finally {
      await s.close();
    }

    // A second start finds layout 2 and moves nothing.
    const again: string[] = [];
    const s2 = await open(prefix, again);
    await s2.close();
    expect(again.filter((w) => w.includes('layout'))).toEqual([]);
  });

  it('processes starting together: one moves the data, the others wait for it, and each reads it', async () => {
    const prefix = await loadLayout1();
    const warnings: string[] = [];
    const all = await Promise.all([open(prefix, warnings), open(prefix, warnings), open(prefix, warnings)]);
    try {
      expect(warnings.filter((w) => w.startsWith('Redis: moving the data'))).toHaveLength(1);
      for (const s of all) expect((await s.providers.list()).map((p) => p.systemUser)).toEqual(['acme', 'beta', 'x:y}z']);
    } finally {
      for (const s of all) await s.close();
    }
  });

  it('keys of the earlier layout written after the move (an old process still running) are moved at the next start', async () => {
    const prefix = await loadLayout1();
    await (await open(prefix)).close();
    // An old gateway creates a provider, and an old worker writes a last report of acme's.
    await admin.hset(`${prefix}provider:late`, { systemUser: 'late', passwordHash: 'h', enabled: '1', requireRegisteredVehicles: '0', createdAt: '1', updatedAt: '1' });
    await admin.sadd(`${prefix}providers`, 'late');
    await admin.hset(`${prefix}lastreport:acme`, 'CD456EF', `${T0 + 9000}:0`);
    const warnings: string[] = [];
    const s = await open(prefix, warnings);
    try {
      expect(warnings[0]).toMatch(/keys of the earlier layout appeared after the move/);
      expect((await s.providers.list()).map((p) => p.systemUser)).toEqual(['acme', 'beta', 'late', 'x:y}z']);
      // Merged with what the new layout already held: both Dominios' reports.
      expect((await s.trips.listVehicles('acme')).map((v) => v.lastReport?.epochMs ?? null)).toEqual([T0 + 5000, T0 + 9000]);
    } finally {
      await s.close();
    }
  });

  it('a newer layout than this release reads is refused, not misread', async () => {
    const prefix = `${uniqueName('layout-next')}:`;
    prefixes.push(prefix);
    await admin.set(new RedisKeys(prefix).layout(), String(KEY_LAYOUT + 1));
    await expect(open(prefix)).rejects.toThrow(`Redis holds data in key layout ${KEY_LAYOUT + 1}`);
  });
});
