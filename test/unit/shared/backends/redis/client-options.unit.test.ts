import { describe, expect, it } from 'vitest';
import { redisClientOptions, redisClusterOptions, redisSentinelOptions } from '../../../../../shared/backends/redis/client-options.js';

describe('Redis client options', () => {
  it('redis:// is plaintext; rediss:// is TLS 1.2+ with the CA given', () => {
    expect(redisClientOptions({ url: 'redis://h:6379' }).tls).toBeUndefined();
    expect(redisClientOptions({ url: 'rediss://h:6379', tlsCa: 'PEM' }).tls).toEqual({ minVersion: 'TLSv1.2', ca: 'PEM' });
  });

  it('REDIS_USERNAME / REDIS_PASSWORD are used; a password in the URL as well is refused', () => {
    expect(redisClientOptions({ url: 'rediss://h:6379', username: 'gateway', password: 'pw' })).toMatchObject({ username: 'gateway', password: 'pw' });
    expect(() => redisClientOptions({ url: 'redis://:inurl@h:6379', password: 'pw' })).toThrow(/a password in REDIS_URL and REDIS_PASSWORD too/);
  });

  it('with Sentinels: the nodes over TLS as the URL says, the Sentinels over TLS with their own user when asked', () => {
    const options = redisSentinelOptions({
      url: 'rediss://ignored:6379',
      username: 'gateway',
      password: 'pw',
      tlsCa: 'PEM',
      sentinels: [{ host: 's1', port: 26379 }],
      sentinelUsername: 'watcher',
      sentinelPassword: 'spw',
      sentinelTls: true,
    });
    expect(options).toMatchObject({
      username: 'gateway',
      password: 'pw',
      tls: { minVersion: 'TLSv1.2', ca: 'PEM' },
      enableTLSForSentinelMode: true,
      sentinelUsername: 'watcher',
      sentinelPassword: 'spw',
      sentinelTLS: { minVersion: 'TLSv1.2', ca: 'PEM' },
    });
    const plain = redisSentinelOptions({ sentinels: [{ host: 's1', port: 26379 }] });
    expect(plain.enableTLSForSentinelMode).toBeUndefined();
    expect(plain.sentinelTLS).toBeUndefined();
  });
});

describe('Redis Cluster client options', () => {
  it("each node as the one-node form's (deadlines, TLS, ACL user), a command never resent after its connection closed, nothing queued while the cluster is unreachable", () => {
    const options = redisClusterOptions({
      url: 'rediss://ignored:6379/3',
      username: 'gateway',
      password: 'pw',
      tlsCa: 'PEM',
      clusterNodes: [{ host: 'n1', port: 7000 }],
      commandTimeoutMs: 1500,
      connectTimeoutMs: 800,
    });
    expect(options.redisOptions).toMatchObject({
      username: 'gateway',
      password: 'pw',
      tls: { minVersion: 'TLSv1.2', ca: 'PEM' },
      commandTimeout: 1500,
      socketTimeout: 1500,
      connectTimeout: 800,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 1,
    });
    // A cluster has database 0 only; the node-level retry and queue options belong to the cluster client.
    expect(options.redisOptions).not.toHaveProperty('db');
    expect(options.redisOptions).not.toHaveProperty('retryStrategy');
    expect(options.redisOptions).not.toHaveProperty('enableOfflineQueue');
    expect(options).toMatchObject({ retryDelayOnFailover: 0, enableOfflineQueue: false, enableAutoPipelining: true, scaleReads: 'master', slotsRefreshTimeout: 800 });
    expect(options.clusterRetryStrategy?.(50)).toBe(500);
    // User and password from the URL when not given apart; plaintext with redis://.
    const fromUrl = redisClusterOptions({ url: 'redis://u:p%40ss@ignored:6379', clusterNodes: [{ host: 'n1', port: 7000 }] });
    expect(fromUrl.redisOptions).toMatchObject({ username: 'u', password: 'p@ss' });
    expect(fromUrl.redisOptions?.tls).toBeUndefined();
  });
});
