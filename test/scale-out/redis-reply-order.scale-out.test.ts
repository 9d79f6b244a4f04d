/**
 * The Redis reply desync (docs/operations.md §Stalls, issue 37): under the stall tests' slow link
 * (every chunk held 1 s), a gateway once got another call's reply (an HMGET answered with an
 * HGETALL's fields). This runs that case over many cycles of slowing and healing, with the
 * gateway's own Redis client (openRedisStores) behind the fault proxy and calls whose every answer
 * names what was asked: each provider's record names its SystemUser, each lockout hash holds a
 * lock end of its own. A reply given to the wrong call, or of a shape the call did not ask for,
 * fails the test. REPLY_ORDER_CYCLES sets the number of cycles (default 6). A scale-out test, not
 * a faults one: its proxy and keys are its own, the shared Redis is never stopped, and what it
 * checks is which reply each call gets, not how soon, so it runs beside other files.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRedisStores, RedisDataError, RedisKeys, RedisUnavailableError, type RedisStores } from '../../shared/backends/redis/index.js';
import { FaultProxy } from '../helpers/fault-proxy.js';
import { services, uniqueName } from '../helpers/services.js';
import { sleep } from '../helpers/wait.js';

const CYCLES = Number(process.env.REPLY_ORDER_CYCLES ?? 6);
const USERS = 40;
const CALLERS = 24;
const T0 = Date.UTC(2026, 0, 1);
/** Each user's lock end: distinct, so a lockout answer of another user is seen. */
const lockEnd = (i: number): number => T0 + 3_600_000 + i;

describe('Redis replies under a slow link, slowed and healed over and over', () => {
  const prefix = `${uniqueName('reply-order')}:`;
  const keys = new RedisKeys(prefix);
  let admin: Redis;
  let proxy: FaultProxy;
  let stores: RedisStores;

  beforeAll(async () => {
    const url = new URL(services().redisUrl);
    admin = new Redis(services().redisUrl);
    for (let i = 0; i < USERS; i++) {
      await admin.hset(keys.provider(`u${i}`), { systemUser: `u${i}`, passwordHash: 'scrypt$16384$8$1$c2FsdA==$aGFzaA==', enabled: '1', requireRegisteredVehicles: '0', createdAt: '1', updatedAt: '1' });
      await admin.hset(keys.lockout(`u${i}`), 'L', String(lockEnd(i)));
    }
    proxy = await FaultProxy.start({ host: url.hostname, port: Number(url.port) });
    // The gateway's client, as the stall tests run it (a command deadline shorter than a slowed round trip).
    stores = await openRedisStores({ url: `redis://127.0.0.1:${proxy.port}`, keyPrefix: prefix, commandTimeoutMs: 1500, logger: { warn: () => undefined } });
  });
  afterAll(async () => {
    await stores.close();
    await proxy.close();
    const found = await admin.keys(`${prefix}*`);
    for (let i = 0; i < found.length; i += 500) await admin.del(...found.slice(i, i + 500));
    admin.disconnect();
  });

  it(`answers every call with its own reply or "unavailable", never another's, over ${CYCLES} cycles`, { timeout: 60_000 + CYCLES * 10_000 }, async () => {
    const tally = { own: 0, unavailable: 0, anothers: [] as string[], wrongShape: 0 };
    let running = true;
    const caller = async (c: number): Promise<void> => {
      for (let n = 0; running; n++) {
        const i = (c * 7 + n) % USERS;
        const u = `u${i}`;
        // Issued together, as a gateway's concurrent requests are: HGETALL, HMGET and a claim.
        const outcomes = await Promise.allSettled([
          stores.providers.get(u),
          stores.lockouts.lockedUntil(u, () => '10.0.0.1', T0),
          stores.dedupe.claim([{ systemUser: u, key: `k${c}-${n}`, id: BigInt(c * 1_000_000 + n + 1) }], 60_000),
        ]);
        const [provider, lock, claim] = outcomes;
        for (const o of outcomes) {
          if (o.status === 'fulfilled') continue;
          if (!(o.reason instanceof RedisUnavailableError)) throw o.reason;
          tally.unavailable++;
          if (o.reason.cause instanceof RedisDataError) tally.wrongShape++;
        }
        if (provider.status === 'fulfilled') {
          if (provider.value?.systemUser === u) tally.own++;
          else tally.anothers.push(`providers.get(${u}) → ${provider.value?.systemUser}`);
        }
        if (lock.status === 'fulfilled') {
          if (lock.value === lockEnd(i)) tally.own++;
          else tally.anothers.push(`lockedUntil(${u}) → ${lock.value}`);
        }
        if (claim.status === 'fulfilled') {
          if (claim.value[0] === null) tally.own++;
          else tally.anothers.push(`claim(${u}) → ${claim.value[0]}`);
        }
        if (outcomes.some((o) => o.status === 'rejected')) await sleep(50);
      }
    };
    const callers = Promise.all(Array.from({ length: CALLERS }, (_, c) => caller(c)));
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      await sleep(1500);
      proxy.slow(1000);
      await sleep(3000);
      // Healed while slowed chunks are still on their way, both ways.
      proxy.heal();
    }
    await sleep(3000);
    running = false;
    await callers;
    console.log(`[stall] redis reply order: ${JSON.stringify({ cycles: CYCLES, own: tally.own, unavailable: tally.unavailable, wrongShape: tally.wrongShape, anothers: tally.anothers.length })}`);
    expect(tally.anothers).toEqual([]);
    expect(tally.wrongShape).toBe(0);
    // The slow phases were felt (calls answered unavailable), and the client served between them.
    expect(tally.unavailable).toBeGreaterThan(0);
    expect(tally.own).toBeGreaterThan(CYCLES * 100);
  });
});
