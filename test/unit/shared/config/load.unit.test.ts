import { describe, expect, it } from 'vitest';
import { ConfigError, deploymentMode, describeConfig, loadConfig } from '../../../../shared/config/index.js';

const files = (map: Record<string, string>) => (file: string): string => {
  const content = map[file];
  if (content === undefined) throw Object.assign(new Error(`ENOENT: ${file}`), { code: 'ENOENT' });
  return content;
};

describe('loadConfig', () => {
  it('gives every default by section', () => {
    const c = loadConfig({});
    expect(c.service.port).toBe(8080);
    expect(c.sessions.timeoutMs).toBe(20 * 60_000);
    expect(c.kafka.brokers).toBeNull();
    expect(c.ids.topic).toBe('gateway.events.id-blocks');
    expect(c.redis.commandReplicas).toBe(0);
    expect(c.admin.token).toBeNull();
    expect(c.embedded.sqliteSynchronous).toBe('FULL');
  });

  it('derives a default from another variable', () => {
    expect(loadConfig({ KAFKA_TOPIC: 'fleet' }).ids.topic).toBe('fleet.id-blocks');
    expect(loadConfig({ REDIS_SENTINELS: 's:26379' }).redis.commandReplicas).toBe(1);
    expect(loadConfig({ REDIS_SENTINELS: 's:26379', REDIS_COMMAND_REPLICAS: '0' }).redis.commandReplicas).toBe(0);
  });

  it('Redis Cluster: its nodes, a replica to wait for by default, a prefix that cannot become a hash tag, and not with Sentinels too', () => {
    const c = loadConfig({ REDIS_CLUSTER_NODES: 'n1:7000, [::1]:7001', KAFKA_BROKERS: 'k:9092' });
    expect(c.redis.clusterNodes).toEqual([
      { host: 'n1', port: 7000 },
      { host: '::1', port: 7001 },
    ]);
    expect(c.redis.commandReplicas).toBe(1);
    expect(deploymentMode(c)).toBe('scale-out');
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: 'n1' })).toThrow(/REDIS_CLUSTER_NODES must be host:port/);
    expect(() => loadConfig({ REDIS_KEY_PREFIX: 'gw{1}:' })).toThrow(/REDIS_KEY_PREFIX must not contain \{ or \}/);
    expect(() => deploymentMode(loadConfig({ REDIS_CLUSTER_NODES: 'n1:7000', REDIS_SENTINELS: 's:26379', KAFKA_BROKERS: 'k:9092' }))).toThrow(/two forms of Redis/);
    expect(() => deploymentMode(loadConfig({ REDIS_CLUSTER_NODES: 'n1:7000' }))).toThrow(/REDIS_CLUSTER_NODES\) and KAFKA_BROKERS go together/);
  });

  it('converts units and normalises words', () => {
    const c = loadConfig({ LOCKOUT_MINUTES: '2', CREDENTIAL_CACHE_SECONDS: '0', SQLITE_SYNCHRONOUS: 'normal', SERVICE_PATH: 'a/b/', SERVICE_NAMESPACE: 'urn:x' });
    expect(c.logins.lockoutDurationMs).toBe(120_000);
    expect(c.logins.credentialCacheMs).toBe(0);
    expect(c.embedded.sqliteSynchronous).toBe('NORMAL');
    expect(c.service.path).toBe('/a/b');
    expect(c.service.namespace).toBe('urn:x/');
  });

  it('reports every invalid variable at once, one line each', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', SQLITE_SYNCHRONOUS: 'OFF', ID_BLOCK_SIZE: '0', TIME_ZONE: 'Mars/Olympus' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message.split('\n')).toEqual([
      'PORT must be a whole number, got "eighty".',
      'TIME_ZONE "Mars/Olympus" is not an IANA time zone.',
      'ID_BLOCK_SIZE must be at least 1, got 0.',
      'SQLITE_SYNCHRONOUS must be FULL or NORMAL, got "OFF".',
    ]);
  });

  it('reads a secret from its _FILE, dropping one trailing newline', () => {
    const read = files({ '/s/token': 's3cret\n', '/s/crlf': 'pw\r\n', '/s/two': 'pw\n\n' });
    expect(loadConfig({ ADMIN_TOKEN_FILE: '/s/token' }, read).admin.token).toBe('s3cret');
    expect(loadConfig({ CLICKHOUSE_PASSWORD_FILE: '/s/crlf' }, read).clickhouse.password).toBe('pw');
    expect(loadConfig({ CLICKHOUSE_PASSWORD_FILE: '/s/two' }, read).clickhouse.password).toBe('pw\n');
  });

  it('refuses a secret set twice, a missing file and an empty one, without showing any content', () => {
    const read = files({ '/s/token': 'abc\n', '/s/empty': '\n' });
    expect(() => loadConfig({ ADMIN_TOKEN: 'abc', ADMIN_TOKEN_FILE: '/s/token' }, read)).toThrow('Set ADMIN_TOKEN or ADMIN_TOKEN_FILE, not both.');
    expect(() => loadConfig({ ADMIN_TOKEN_FILE: '/s/none' }, read)).toThrow('ADMIN_TOKEN_FILE: cannot read /s/none (ENOENT).');
    expect(() => loadConfig({ ADMIN_TOKEN_FILE: '/s/empty' }, read)).toThrow('ADMIN_TOKEN_FILE: /s/empty is empty.');
  });

  it('ignores _FILE for settings that are not secrets', () => {
    expect(loadConfig({ PORT_FILE: '/nowhere' }).service.port).toBe(8080);
  });
});

describe('describeConfig (--config)', () => {
  it('prints every setting by section, secrets only as set, URL passwords masked', () => {
    const env = { ADMIN_TOKEN: 'tok-very-secret', REDIS_URL: 'redis://gw:hunter2@redis:6379/0', KAFKA_BROKERS: 'k1:9092,k2:9092', PORT: '9000' };
    const text = describeConfig(loadConfig(env), env);
    expect(text).not.toContain('tok-very-secret');
    expect(text).not.toContain('hunter2');
    expect(text).toMatch(/^ADMIN_TOKEN=\(set\) {2}# .*secret; or ADMIN_TOKEN_FILE/m);
    expect(text).toMatch(/^REDIS_URL=redis:\/\/gw:\*\*\*\*@redis:6379\/0 /m);
    expect(text).toMatch(/^PORT=9000 {2}# public port/m);
    expect(text).toMatch(/^SESSION_TIMEOUT_MINUTES=20 .*\[default: 20\]$/m);
    expect(text).toMatch(/^CLICKHOUSE_PASSWORD=\(unset\)/m);
    expect(text).toContain('# kafka (config.kafka)');
    expect(text).toMatch(/^SQLITE_COMMIT=thread .*\(tuning\)/m);
  });
});
