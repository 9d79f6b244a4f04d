/**
 * REDIS_SENTINELS and the durability of queued commands: the configuration (bad input refused),
 * the client options it gives, and WAIT against the real single Redis, which has no replica, so a
 * command that must reach one is refused (and cancelled) instead of answered "queued". The failover
 * itself is tested on the real Sentinels in test/ha/.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { deploymentMode } from '../../shared/config/index.js';
import { openRedisStores, redisSentinelOptions, RedisUnavailableError, type RedisStores } from '../../shared/backends/redis/index.js';
import { ConfigError, loadConfig, redisConfigured } from '../../shared/config/index.js';
import { services, uniqueName } from '../helpers/services.js';

describe('REDIS_SENTINELS configuration', () => {
  it('parses host:port lists, IPv6 in brackets, and sets the command replicas default to 1', () => {
    const c = loadConfig({ REDIS_SENTINELS: ' s1:26379, 10.0.0.2:26380 ,[::1]:26381', REDIS_SENTINEL_NAME: 'gw', KAFKA_BROKERS: 'k:9092' });
    expect(c.redis.sentinels).toEqual([
      { host: 's1', port: 26379 },
      { host: '10.0.0.2', port: 26380 },
      { host: '::1', port: 26381 },
    ]);
    expect(c.redis.sentinelName).toBe('gw');
    expect(c.redis.commandReplicas).toBe(1);
    expect(c.redis.commandWaitMs).toBe(1000);
    expect(redisConfigured(c.redis)).toBe(true);
    expect(deploymentMode(c)).toBe('scale-out');
  });

  it('without Sentinels: no WAIT by default, the name defaults to mymaster', () => {
    const c = loadConfig({ REDIS_URL: 'redis://r:6379', KAFKA_BROKERS: 'k:9092' });
    expect(c.redis.sentinels).toBeNull();
    expect(c.redis.sentinelName).toBe('mymaster');
    expect(c.redis.commandReplicas).toBe(0);
    expect(loadConfig({ REDIS_URL: 'redis://r:6379', REDIS_COMMAND_REPLICAS: '2' }).redis.commandReplicas).toBe(2);
  });

  it.each(['s1', 's1:', ':26379', 's1:0', 's1:65536', 's1:abc', 's1:26379 s2:26379', 'a:b:c'])('refuses REDIS_SENTINELS=%j', (bad) => {
    expect(() => loadConfig({ REDIS_SENTINELS: bad })).toThrow(ConfigError);
    expect(() => loadConfig({ REDIS_SENTINELS: bad })).toThrow(/REDIS_SENTINELS must be host:port/);
  });

  it('refuses a wait below 10 ms and a negative replica count', () => {
    expect(() => loadConfig({ REDIS_COMMAND_WAIT_MS: '5' })).toThrow(/REDIS_COMMAND_WAIT_MS must be at least 10/);
    expect(() => loadConfig({ REDIS_COMMAND_REPLICAS: '-1' })).toThrow(/REDIS_COMMAND_REPLICAS must be a whole number/);
  });

  it('Sentinels without KAFKA_BROKERS is half a scale-out configuration', () => {
    expect(() => deploymentMode(loadConfig({ REDIS_SENTINELS: 's1:26379' }))).toThrow(/only Redis is set/);
  });

  it('client options: Sentinels, the name, failover detection, and only the credentials of REDIS_URL', () => {
    const o = redisSentinelOptions({ sentinels: [{ host: 's1', port: 26379 }], sentinelName: 'gw', url: 'redis://user:p%40ss@ignored:1/3', sentinelPassword: 'sp' });
    expect(o).toMatchObject({ sentinels: [{ host: 's1', port: 26379 }], name: 'gw', role: 'master', failoverDetector: true, username: 'user', password: 'p@ss', db: 3, sentinelPassword: 'sp' });
    expect(o.host).toBeUndefined();
    expect(o.maxRetriesPerRequest).toBe(1);
    expect(typeof o.reconnectOnError === 'function' && o.reconnectOnError(new Error('READONLY You can not write against a read only replica.'))).toBe(true);
    expect(typeof o.reconnectOnError === 'function' && o.reconnectOnError(new Error('WRONGTYPE'))).toBe(false);
  });
});

describe('queued commands wait for a replica (WAIT)', () => {
  const opened: RedisStores[] = [];
  afterAll(async () => {
    for (const s of opened) await s.close();
  });
  const open = async (commandReplicas: number) => {
    const s = await openRedisStores({ url: services().redisUrl, keyPrefix: `${uniqueName('wait')}:`, logger: { warn: () => undefined }, commandReplicas, commandWaitMs: 200 });
    opened.push(s);
    return s;
  };
  const command = { systemUser: 'acme', cmd: 'RESET', unidad: 'AB123CD', equipo: 'SN-1', now: 1_000, expiresAt: 1_000 + 3_600_000 };

  it('no replica confirms within the wait: the operator gets "unavailable", and nothing is left queued', async () => {
    const s = await open(1);
    const started = Date.now();
    const err = await s.commands.enqueue(command).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedisUnavailableError);
    // Its NUMERO (written, then waited for, before the command) reached no replica: nothing was
    // written under it. (A NUMERO that did, and a command that did not, would be cancelled.)
    expect(String((err as Error).cause)).toMatch(/Command 1 reached 0 of 1 Redis replicas within 200 ms; nothing was queued/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(await s.commands.list('acme', 2_000)).toEqual([]);
    expect(await s.commands.deliverNext('acme', 2_000)).toBeNull();
  });

  it('REDIS_COMMAND_REPLICAS=0 (one Redis, no replica): queued at once', async () => {
    const s = await open(0);
    const c = await s.commands.enqueue(command);
    expect(c.state).toBe('pending');
    expect((await s.commands.list('acme', 2_000)).map((x) => x.numero)).toEqual([c.numero]);
  });
});
