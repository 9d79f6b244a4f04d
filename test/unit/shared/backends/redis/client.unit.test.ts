import { describe, expect, it } from 'vitest';
import { redisClientOptions, redisSentinelOptions } from '../../../../../shared/backends/redis/client.js';

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
