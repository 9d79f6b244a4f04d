/**
 * The Redis stores on Redis Cluster (the cluster profile): the store contract every implementation
 * is held to, then what only a cluster can get wrong: a key whose slot the servers compute
 * differently from ours, a script or transaction whose keys are on two shards (CROSSSLOT), a list or
 * a batch that must gather what several shards hold.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KEY_LAYOUT, openRedisStores, RedisKeys, type RedisStores } from '../../shared/backends/redis/index.js';
import { OperatorKeys } from '../../shared/backends/redis/keys.js';
import { hashSlot } from '../../shared/backends/redis/slots.js';
import { newSessionId } from '../../shared/domain/session-ids.js';
import { REPO } from '../helpers/paths.js';
import { provider, storeContract } from '../helpers/store-contract.js';
import { uniqueName } from '../helpers/services.js';
import { adminClient, cluster, clusterNodes, clusterSettled, clusterStores, deleteByPrefix, migrateSlot, nodeClient, primaryOf } from './cluster-services.js';

const MINUTE = 60_000;
const DAY = 24 * 3_600_000;
const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);
const FILE_PREFIX = uniqueName('cluster-stores');
let serial = 0;
const admin = adminClient();

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});
beforeAll(() => clusterSettled(), 180_000);
afterAll(async () => {
  await deleteByPrefix(`${FILE_PREFIX}:`);
  admin.disconnect();
});

function freshPrefix(): string {
  return `${FILE_PREFIX}:${++serial}:`;
}

async function open(prefix: string): Promise<RedisStores> {
  const stores = await clusterStores(prefix);
  cleanups.push(() => stores.close());
  return stores;
}

/** SystemUsers whose slots are served by every primary: `perShard` on each. */
async function providersOnEveryShard(keys: RedisKeys, perShard: number): Promise<string[]> {
  const primaries = (await clusterNodes()).filter((n) => n.primary && !n.failing);
  const shardOf = (slot: number): number => primaries.findIndex((p) => p.slots.some(([a, b]) => slot >= a && slot <= b));
  const count = new Map<number, number>();
  const out: string[] = [];
  for (let i = 0; out.length < perShard * primaries.length; i++) {
    const u = `prov-${i}`;
    const shard = shardOf(keys.providerSlot(u));
    if ((count.get(shard) ?? 0) >= perShard) continue;
    count.set(shard, (count.get(shard) ?? 0) + 1);
    out.push(u);
  }
  expect(count.size).toBe(3);
  return out;
}

describe('store contract (Redis Cluster)', () => {
  storeContract({ place: freshPrefix, open: (prefix) => open(prefix) });
});

describe('the key layout on the servers', () => {
  it("the servers' CLUSTER KEYSLOT is ours for every family, and one provider's keys share one slot", async () => {
    const k = new RedisKeys('gw:');
    const ops = new OperatorKeys('gw:');
    for (const u of ['acme', 'x}y', 'ñandú', '{t}', 'prov-17']) {
      const keys = [k.provider(u), k.lockout(u), k.sessionIndex(u), k.commandsOpen(u), k.command(u, 9), k.commandHistory(u, 9), k.trip(u), k.lastReports(u), k.dedupe(u, 'Zm9v')];
      const slots = await Promise.all(keys.map((key) => admin.call('CLUSTER', 'KEYSLOT', key) as Promise<number>));
      expect(new Set(slots).size, u).toBe(1);
      expect(slots[0]).toBe(hashSlot(k.provider(u)));
    }
    for (const key of [k.providers(), k.lockoutIndex(), k.commandSeq(), k.commandOwners(), k.poison(), k.idBlocksChecked(), ops.tokens(), ops.audit('seq'), ops.guess('10.0.0.1')]) {
      expect(await admin.call('CLUSTER', 'KEYSLOT', key), key).toBe(hashSlot(key));
    }
  });

  it('a session handed out lives in its provider\'s slot, as the servers see it', async () => {
    const prefix = freshPrefix();
    const s = await open(prefix);
    const k = new RedisKeys(prefix);
    for (const u of await providersOnEveryShard(k, 2)) {
      const { id } = await s.sessions.create(newSessionId(), u, T0, 20 * MINUTE);
      expect(await admin.call('CLUSTER', 'KEYSLOT', k.session(id))).toBe(await admin.call('CLUSTER', 'KEYSLOT', k.provider(u)));
      expect(await s.sessions.touch(id, T0 + MINUTE, 20 * MINUTE)).toMatchObject({ id, systemUser: u });
    }
  });

  it('a new deployment on a cluster starts at the current key layout', async () => {
    const prefix = freshPrefix();
    await open(prefix);
    expect(await admin.get(new RedisKeys(prefix).layout())).toBe(String(KEY_LAYOUT));
  });
});

describe("the gateway user's ACL rule on a cluster (docs/security.md)", () => {
  /** The rule as docs/security.md gives it, for this prefix; `clusterCommands`: with the two commands a cluster adds. */
  function rule(prefix: string, clusterCommands: boolean): string[] {
    const doc = readFileSync(path.join(REPO, 'docs/security.md'), 'utf8');
    const line = /^user gateway on >PASSWORD (.+)$/m.exec(doc)?.[1];
    if (line === undefined) throw new Error('no gateway rule in docs/security.md');
    const added = /^user gateway on >PASSWORD \.\.\.the rule above\.\.\. (.+)$/m.exec(doc)?.[1];
    if (added === undefined) throw new Error("no cluster addition to the gateway rule in docs/security.md");
    return [...line.replace('~gw:*', `~${prefix}*`).split(' '), ...(clusterCommands ? added.split(' ') : [])];
  }

  async function asUser(prefix: string, clusterCommands: boolean, run: (s: RedisStores) => Promise<void>): Promise<void> {
    const user = uniqueName('acl');
    const nodes = (await clusterNodes()).filter((n) => !n.failing);
    for (const n of nodes) {
      const c = nodeClient(n.port);
      try {
        await c.call('ACL', 'SETUSER', user, 'reset', 'on', '>pw-1', ...rule(prefix, clusterCommands));
      } finally {
        c.disconnect();
      }
    }
    try {
      const s = await openRedisStores({ clusterNodes: cluster.nodes, username: user, password: 'pw-1', keyPrefix: prefix, logger: { warn: () => undefined }, connectTimeoutMs: 500 });
      try {
        await run(s);
      } finally {
        await s.close();
      }
    } finally {
      for (const n of nodes) {
        const c = nodeClient(n.port);
        await c.call('ACL', 'DELUSER', user).finally(() => c.disconnect());
      }
    }
  }

  it('with +cluster|slots +cluster|info the stores work as that user; without, the client cannot learn the layout', async () => {
    const prefix = freshPrefix();
    await asUser(prefix, true, async (s) => {
      expect(await s.providers.create(provider('acme'))).not.toBeNull();
      expect((await s.providers.list()).map((p) => p.systemUser)).toEqual(['acme']);
      expect(await s.dedupe.claim([{ systemUser: 'acme', key: 'k', id: 1n }], MINUTE)).toEqual([null]);
      await s.lastReports.record([{ systemUser: 'acme', dominio: 'D', at: { epochMs: T0, subMsTicks: 0 } }]);
      expect((await s.commands.enqueue({ systemUser: 'acme', cmd: 'C', unidad: 'U', equipo: 'E', now: T0, expiresAt: T0 + DAY })).numero).toBe(1);
    });
    await expect(asUser(freshPrefix(), false, () => Promise.resolve())).rejects.toThrow(/unavailable \(open\)/);
  });
});

describe('what spans the shards', () => {
  it('providers, lockouts, commands and last reports of providers on every shard: listed, paged and written in one call each', async () => {
    const prefix = freshPrefix();
    const s = await open(prefix);
    const k = new RedisKeys(prefix);
    const users = await providersOnEveryShard(k, 4);
    for (const u of users) expect(await s.providers.create(provider(u))).not.toBeNull();
    expect((await s.providers.list()).map((p) => p.systemUser)).toEqual([...users].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));

    // One lock a shard, listed together.
    const policy = { maxFailures: 2, userMaxFailures: 100, windowMs: 10 * MINUTE, lockMs: 10 * MINUTE };
    const locked = [users[0]!, users[4]!, users[8]!];
    for (const u of locked) {
      await s.lockouts.recordFailure(u, '10.0.0.1', T0, policy);
      expect(await s.lockouts.recordFailure(u, '10.0.0.1', T0 + 1, policy)).toMatchObject({ systemUser: u, address: '10.0.0.1' });
    }
    expect((await s.lockouts.list(T0 + 2)).map((l) => l.systemUser).sort()).toEqual([...locked].sort());
    await s.lockouts.clear(users[0]!);
    expect((await s.lockouts.list(T0 + 2)).map((l) => l.systemUser).sort()).toEqual([users[4]!, users[8]!].sort());

    // Commands of every shard: one NUMERO sequence, paged newest first across them.
    const queued = [];
    for (const u of users) queued.push(await s.commands.enqueue({ systemUser: u, cmd: `C-${u}`, unidad: 'U', equipo: 'E', now: T0, expiresAt: T0 + DAY }));
    expect(new Set(queued.map((c) => c.numero)).size).toBe(users.length);
    const page = await s.commands.page({ limit: users.length }, T0 + 1);
    expect(page.commands.map((c) => [c.numero, c.systemUser])).toEqual(queued.map((c) => [c.numero, c.systemUser]).reverse());
    // A provider never sees another's command, whatever NUMERO it names.
    expect(await s.commands.get(users[1]!, queued[0]!.numero, T0 + 1)).toBeNull();
    expect(await s.commands.finish(users[1]!, queued[0]!.numero, true, T0 + 1)).toBe('rejected');
    expect(await s.commands.deliverNext(users[0]!, T0 + 1)).toMatchObject({ numero: queued[0]!.numero, cmd: `C-${users[0]!}` });

    // One worker batch over every provider: each provider's last report, in one call.
    const at = { epochMs: T0 + 5000, subMsTicks: 3 };
    for (const u of users) await s.trips.addVehicle(u, 'AB123CD', 'S', T0);
    await s.lastReports.record(users.map((u) => ({ systemUser: u, dominio: 'AB123CD', at })));
    for (const u of users) expect((await s.trips.getVehicle(u, 'AB123CD'))?.lastReport).toEqual(at);
  });

  it("a worker batch right after a provider's slot moved: its node's call fails, and is done again slot by slot", async () => {
    const prefix = freshPrefix();
    const s = await open(prefix);
    const k = new RedisKeys(prefix);
    const users = await providersOnEveryShard(k, 2);
    const at = { epochMs: T0 + 1000, subMsTicks: 0 };
    await s.lastReports.record(users.map((u) => ({ systemUser: u, dominio: 'D1', at })));
    // The first provider's slot moves to another primary; the client has not heard of it yet.
    const slot = k.providerSlot(users[0]!);
    const from = await primaryOf(slot);
    const to = (await clusterNodes()).find((n) => n.primary && !n.failing && n.port !== from.port)!;
    await migrateSlot(slot, { port: to.port, id: to.id });
    try {
      const later = { epochMs: T0 + 2000, subMsTicks: 1 };
      await s.lastReports.record(users.map((u) => ({ systemUser: u, dominio: 'D1', at: later })));
      for (const u of users) expect(await admin.hget(k.lastReports(u), 'D1'), u).toBe(`${later.epochMs}:${later.subMsTicks}`);
    } finally {
      await migrateSlot(slot, { port: from.port, id: from.id });
    }
  });

  it('dedupe claims of many providers in one call: each in its provider\'s slot, answers in the order asked', async () => {
    const prefix = freshPrefix();
    const s = await open(prefix);
    const k = new RedisKeys(prefix);
    const users = await providersOnEveryShard(k, 5);
    const entries = users.flatMap((u, i) => [1, 2, 3].map((n) => ({ systemUser: u, key: `k${n}`, id: BigInt(i * 10 + n) })));
    expect((await s.dedupe.claim(entries, MINUTE)).every((r) => r === null)).toBe(true);
    const resend = await s.dedupe.claim(entries.map((e) => ({ ...e, id: e.id + 1000n })), MINUTE);
    expect(resend).toEqual(entries.map((e) => e.id));
    expect(await admin.get(k.dedupe(users[7]!, 'k2'))).toBe(String(7 * 10 + 2));
  });

  it('healthy() asks every primary; the audit trail and tokens work from their own slots', async () => {
    const s = await open(freshPrefix());
    expect(await s.healthy()).toBe(true);
    expect(await s.operators.tokens.create({ name: 'ops', role: 'admin', tokenHash: 'h1', createdAt: T0, createdBy: 'test', expiresAt: null, lastUsedAt: null })).toBe('created');
    expect((await s.operators.tokens.use('h1', T0 + 1))?.name).toBe('ops');
    const entry = await s.operators.audit.append({ at: T0, identity: 'ops', role: 'admin', address: '10.0.0.1', method: 'POST', route: '/admin/providers', target: 'provider/acme', status: 201, outcome: 'ok', changes: [], detail: null, requestId: 'r1' });
    expect((await s.operators.audit.page({ limit: 5, identity: 'ops' })).entries.map((e) => e.id)).toEqual([entry.id]);
  });
});
