/**
 * Clear failure (docs/security.md §When a connection is refused): a wrong password, an unknown user,
 * a certificate the process does not trust or that expired, a plaintext client on a TLS port: the
 * gateway or worker exits non-zero within 60 s with one error line naming the engine and the cause,
 * never a stack-trace loop or a silent hang. And every engine refuses TLS below 1.2.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secure } from '../helpers/secure.js';
import { freePort, Spawned } from '../helpers/spawned.js';

const s = secure();
const run = promisify(execFile);
const portOf = (url: string): string => /:(\d+)/.exec(url.replace(/^[a-z]+:\/\//, ''))?.[1] ?? '';
const redisPort = portOf(s.env.REDIS_URL!);
const kafkaPort = portOf(s.env.KAFKA_BROKERS!);
const clickhousePort = portOf(s.env.CLICKHOUSE_URL!);
const sentinelPort = portOf(s.env.SECURE_REDIS_SENTINELS!);

/** A TLS server presenting the expired certificate (signed by the trusted CA): what an engine whose certificate lapsed looks like. */
let expired: tls.Server;
let expiredHttps: https.Server;
beforeAll(async () => {
  const creds = { cert: readFileSync(s.certs.expired), key: readFileSync(s.certs.expiredKey) };
  expired = tls.createServer(creds, (socket) => socket.end());
  expiredHttps = https.createServer(creds, (_req, res) => res.end('Ok.'));
  await Promise.all([new Promise<void>((r) => expired.listen(0, '127.0.0.1', r)), new Promise<void>((r) => expiredHttps.listen(0, '127.0.0.1', r))]);
});
afterAll(() => {
  expired.close();
  expiredHttps.close();
});

interface Case {
  name: string;
  process: 'gateway' | 'worker';
  env: () => Record<string, string>;
  engine: RegExp;
  cause: RegExp;
}

const CASES: Case[] = [
  { name: 'Redis: wrong password', process: 'gateway', env: () => ({ REDIS_PASSWORD_FILE: s.secretFile('kafka-worker') }), engine: /Redis/, cause: /WRONGPASS|invalid username-password/ },
  { name: 'Redis: unknown user', process: 'gateway', env: () => ({ REDIS_USERNAME: 'nobody' }), engine: /Redis/, cause: /WRONGPASS|invalid username-password/ },
  { name: 'Redis: untrusted certificate', process: 'gateway', env: () => ({ REDIS_TLS_CA_FILE: s.certs.otherCa }), engine: /Redis/, cause: /certificate|SELF_SIGNED|unable to verify/i },
  { name: 'Redis: expired certificate', process: 'gateway', env: () => ({ REDIS_URL: `rediss://127.0.0.1:${(expired.address() as AddressInfo).port}` }), engine: /Redis/, cause: /certificate has expired|CERT_HAS_EXPIRED/i },
  { name: 'Redis: plaintext client on its TLS port', process: 'gateway', env: () => ({ REDIS_URL: `redis://127.0.0.1:${redisPort}` }), engine: /Redis/, cause: /timed out|closed|ECONNRESET|Connection/i },
  { name: 'Kafka: wrong password', process: 'gateway', env: () => ({ KAFKA_SASL_PASSWORD_FILE: s.secretFile('kafka-worker') }), engine: /Kafka/, cause: /SASL|[Aa]uthentication/ },
  { name: 'Kafka: unknown user', process: 'gateway', env: () => ({ KAFKA_SASL_USERNAME: 'nobody' }), engine: /Kafka/, cause: /SASL|[Aa]uthentication/ },
  { name: 'Kafka: untrusted certificate', process: 'gateway', env: () => ({ KAFKA_TLS_CA_FILE: s.certs.otherCa }), engine: /Kafka/, cause: /certificate|SELF_SIGNED|unable to verify/i },
  { name: 'Kafka: expired certificate', process: 'gateway', env: () => ({ KAFKA_BROKERS: `127.0.0.1:${(expired.address() as AddressInfo).port}` }), engine: /Kafka/, cause: /certificate has expired|CERT_HAS_EXPIRED/i },
  { name: 'Kafka: plaintext client on its TLS port', process: 'gateway', env: () => ({ KAFKA_SECURITY_PROTOCOL: 'SASL_PLAINTEXT', KAFKA_TLS_CA_FILE: '' }), engine: /Kafka/, cause: /Connection|closed|ECONNRESET|timeout|timed out/i },
  { name: 'ClickHouse: wrong password', process: 'worker', env: () => ({ CLICKHOUSE_PASSWORD_FILE: s.secretFile('clickhouse-analyst') }), engine: /ClickHouse/, cause: /password|Authentication/i },
  { name: 'ClickHouse: unknown user', process: 'worker', env: () => ({ CLICKHOUSE_USER: 'nobody' }), engine: /ClickHouse/, cause: /Unknown user|Authentication|password/i },
  { name: 'ClickHouse: untrusted certificate', process: 'worker', env: () => ({ CLICKHOUSE_TLS_CA_FILE: s.certs.otherCa }), engine: /ClickHouse/, cause: /certificate|SELF_SIGNED|unable to verify/i },
  { name: 'ClickHouse: expired certificate', process: 'worker', env: () => ({ CLICKHOUSE_URL: `https://127.0.0.1:${(expiredHttps.address() as AddressInfo).port}` }), engine: /ClickHouse/, cause: /certificate has expired|CERT_HAS_EXPIRED/i },
  { name: 'ClickHouse: plaintext client on its TLS port', process: 'worker', env: () => ({ CLICKHOUSE_URL: `http://127.0.0.1:${clickhousePort}` }), engine: /ClickHouse/, cause: /speaks TLS.*use https:\/\//i },
];

describe.concurrent('a refused connection stops the process at once, with one line naming the engine and the cause', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const base = c.process === 'gateway' ? s.gatewayEnv() : s.workerEnv();
    const ports = { HOST: '127.0.0.1', PORT: String(await freePort()), ADMIN_HOST: '127.0.0.1', ADMIN_PORT: String(await freePort()), GATEWAY_THREADS: '1' };
    // Several processes start TLS at once on a busy 2-core box: a case about another engine must not
    // fail on Redis's 2 s command deadline first (each case sets its own engine's wrong setting).
    const patient = { REDIS_COMMAND_TIMEOUT_MS: '10000', REDIS_CONNECT_TIMEOUT_MS: '5000' };
    // An empty value removes the variable (a plaintext client has no CA file).
    const env = Object.fromEntries(Object.entries({ ...base, ...ports, ...patient, ...c.env() }).filter(([, v]) => v !== ''));
    const started = Date.now();
    const proc = Spawned.start(c.process === 'gateway' ? 'gateway/main.ts' : 'worker/main.ts', env);
    const limitMs = 60_000;
    const code = await proc.exitWithin(limitMs);
    const output = proc.output.join('\n');
    expect(code, `still running after ${limitMs} ms:\n${output}`).not.toBe('running');
    expect(code, output).not.toBe(0);
    expect(Date.now() - started).toBeLessThan(limitMs);
    const errors = proc.output.filter((l) => /"level":(50|60)/.test(l));
    expect(errors, output).toHaveLength(1);
    const line = JSON.parse(errors[0]!) as { err?: { message?: string }; msg?: string };
    const message = `${line.msg ?? ''}: ${line.err?.message ?? ''}`;
    expect(message, errors[0]).toMatch(c.engine);
    expect(message, errors[0]).toMatch(c.cause);
    // No loop of warnings or stack traces before it stopped.
    expect(proc.output.length, output).toBeLessThan(12);
  });
});

describe('every engine refuses TLS below 1.2', () => {
  const ports: [string, string][] = [
    ['Redis', redisPort],
    ['Sentinel', sentinelPort],
    ['ClickHouse', clickhousePort],
    ['Kafka', kafkaPort],
  ];
  it.each(ports)('%s', async (_engine, port) => {
    for (const version of ['-tls1', '-tls1_1']) {
      const { stdout, stderr } = await run('bash', ['-c', `echo | openssl s_client -connect 127.0.0.1:${port} ${version} -cipher 'DEFAULT@SECLEVEL=0' 2>&1 || true`]);
      expect(stdout + stderr).toMatch(/alert protocol version|no protocols available|wrong version number|unsupported protocol/i);
      expect(stdout).not.toMatch(/Cipher is (?!\(NONE\))/);
    }
    const { stdout } = await run('bash', ['-c', `echo | openssl s_client -connect 127.0.0.1:${port} -tls1_2 -CAfile ${s.certs.ca} 2>&1 || true`]);
    expect(stdout).toMatch(/Verify return code: 0 \(ok\)/);
  });
});
