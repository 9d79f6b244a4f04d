/**
 * TLS on our own listeners (TLS_CERT_FILE / TLS_KEY_FILE): the public port, the admin API and the
 * worker's probes serve HTTPS only, TLS 1.2+; HTTP_PORT is an explicit plain listener beside it;
 * the WSDL writes https:// addresses; a reload serves a new certificate to new connections without
 * dropping open ones; the certificate's expiry is a metric; the CLI works with --ca; the nginx
 * edge's TLS block (deploy/nginx/tls.conf) serves the gateway over HTTPS.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApplication, type Application } from '../../gateway/app.js';
import { ConfigurationMissing, loadConfig } from '../../shared/config/index.js';
import { startProbeServer } from '../../shared/runtime/probes.js';
import { serverTlsFromConfig } from '../../shared/runtime/tls.js';
import { NginxEdge } from '../helpers/nginx-edge.js';
import { secure } from '../helpers/secure.js';
import { ROOT, TSX } from '../helpers/admin-cli.js';

const s = secure();
const run = promisify(execFile);
const ca = readFileSync(s.certs.ca, 'utf8');
const agent = new Agent({ connect: { ca } });
const logger = pino({ level: 'silent' });

let dir: string;
let app: Application;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'gw-tls-'));
  // The certificate files are copies, so the reload test can replace them.
  copyFileSync(s.certs.server, path.join(dir, 'cert.pem'));
  copyFileSync(s.certs.serverKey, path.join(dir, 'key.pem'));
  const config = loadConfig({
    DATA_DIR: dir,
    ADMIN_TOKEN: 'tls-token',
    HOST: '127.0.0.1',
    GATEWAY_THREADS: '2',
    TLS_CERT_FILE: path.join(dir, 'cert.pem'),
    TLS_KEY_FILE: path.join(dir, 'key.pem'),
    HTTP_PORT: '1',
  });
  app = await startApplication({ config, logger, port: 0, adminPort: 0, httpPort: 0 });
});
afterAll(async () => {
  await app.close();
  await agent.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The certificate a new TLS connection to `port` is served, and the connection (left open). */
function connect(port: number): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('the public port and the admin API over HTTPS', () => {
  it('serve HTTPS, and the WSDL and disco write https:// addresses; HTTP_PORT serves plain HTTP with http:// ones', async () => {
    const wsdl = await (await fetch(`https://localhost:${app.gateway.port}/service.asmx?wsdl`, { dispatcher: agent })).text();
    expect(wsdl).toContain(`location="https://localhost:${app.gateway.port}/service.asmx"`);
    const disco = await (await fetch(`https://localhost:${app.gateway.port}/service.asmx?disco`, { dispatcher: agent })).text();
    expect(disco).toContain(`https://localhost:${app.gateway.port}/service.asmx`);
    expect(app.gateway.httpPort).not.toBeNull();
    const plain = await (await fetch(`http://localhost:${app.gateway.httpPort}/service.asmx?wsdl`)).text();
    expect(plain).toContain(`location="http://localhost:${app.gateway.httpPort}/service.asmx"`);
    expect(app.admin.url).toMatch(/^https:\/\//);
    const ready = await fetch(`${app.admin.url}/readyz`, { dispatcher: agent });
    expect(ready.status).toBe(200);
  });

  it("the session cookie a Login sets is Secure over HTTPS, and ASP.NET's own bytes on HTTP_PORT", async () => {
    const created = await fetch(`${app.admin.url}/admin/providers`, {
      dispatcher: agent,
      method: 'POST',
      headers: { Authorization: 'Bearer tls-token', 'Content-Type': 'application/json' },
      body: JSON.stringify({ systemUser: 'cookie-acme', password: 'cookie-secret' }),
    });
    expect(created.status).toBe(201);
    const login = '/service.asmx/Login?SystemUser=cookie-acme&Password=cookie-secret';
    const overTls = await fetch(`https://localhost:${app.gateway.port}${login}`, { dispatcher: agent });
    expect(overTls.status).toBe(200);
    expect(overTls.headers.get('set-cookie')).toMatch(/^ASP\.NET_SessionId=[a-z0-9]+; path=\/; HttpOnly; Secure$/);
    const plain = await fetch(`http://localhost:${app.gateway.httpPort}${login}`);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('set-cookie')).toMatch(/^ASP\.NET_SessionId=[a-z0-9]+; path=\/; HttpOnly$/);
  });

  it('a plaintext HTTP client on the TLS ports gets no HTTP answer', async () => {
    for (const port of [app.gateway.port, app.admin.port]) {
      await expect(fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(10_000) })).rejects.toThrow();
    }
  });

  it('TLS 1.0 and 1.1 are refused, 1.2 and 1.3 served, on both ports', async () => {
    for (const port of [app.gateway.port, app.admin.port]) {
      for (const version of ['-tls1', '-tls1_1']) {
        const { stdout } = await run('bash', ['-c', `echo | openssl s_client -connect 127.0.0.1:${port} ${version} -cipher 'DEFAULT@SECLEVEL=0' 2>&1 || true`]);
        expect(stdout).toMatch(/alert protocol version|no protocols available|unsupported protocol/i);
      }
      for (const version of ['-tls1_2', '-tls1_3']) {
        const { stdout } = await run('bash', ['-c', `echo | openssl s_client -connect 127.0.0.1:${port} ${version} -CAfile ${s.certs.ca} 2>&1 || true`]);
        expect(stdout).toMatch(/Verify return code: 0 \(ok\)/);
      }
    }
  });

  it('half a TLS configuration, or HTTP_PORT without TLS, stops the start naming the variables', () => {
    expect(() => serverTlsFromConfig(loadConfig({ TLS_CERT_FILE: s.certs.server }))).toThrow(ConfigurationMissing);
    expect(() => serverTlsFromConfig(loadConfig({ TLS_CERT_FILE: s.certs.server }))).toThrow(/TLS_KEY_FILE/);
    expect(() => serverTlsFromConfig(loadConfig({ HTTP_PORT: '8090' }))).toThrow(/HTTP_PORT/);
    expect(() => loadConfig({ TLS_CERT_FILE: '/no/such/cert.pem', TLS_KEY_FILE: s.certs.serverKey })).toThrow(/TLS_CERT_FILE: cannot read \/no\/such\/cert\.pem/);
  });

  it('the certificate expiry is a metric; a reload serves the new certificate to new connections and keeps open ones', async () => {
    const metric = (text: string): number => Number(/^gateway_tls_certificate_expiry_timestamp_seconds\{certificate="public"\} (\S+)$/m.exec(text)?.[1]);
    const before = metric(await app.metricsText());
    expect(before).toBe(Math.floor(new Date(new X509Certificate(readFileSync(s.certs.server)).validTo).getTime() / 1000));

    const open = await connect(app.gateway.port);
    const oldSerial = open.getPeerX509Certificate()?.serialNumber;
    // The renewed files: the expired certificate stands in for "another one" (it is easy to tell apart).
    copyFileSync(s.certs.expired, path.join(dir, 'cert.pem'));
    copyFileSync(s.certs.expiredKey, path.join(dir, 'key.pem'));
    await app.reloadTls();

    const fresh = await new Promise<tls.TLSSocket>((resolve) => {
      const socket = tls.connect({ host: '127.0.0.1', port: app.gateway.port, ca, rejectUnauthorized: false }, () => resolve(socket));
    });
    expect(fresh.getPeerX509Certificate()?.validTo).toMatch(/2020/);
    fresh.destroy();
    const admin = await new Promise<tls.TLSSocket>((resolve) => {
      const socket = tls.connect({ host: '127.0.0.1', port: app.admin.port, ca, rejectUnauthorized: false }, () => resolve(socket));
    });
    expect(admin.getPeerX509Certificate()?.validTo).toMatch(/2020/);
    admin.destroy();
    expect(metric(await app.metricsText())).toBe(Math.floor(Date.UTC(2020, 11, 31) / 1000));

    // The connection opened before the reload still serves requests, with its old certificate.
    open.write('GET /service.asmx?disco HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const answer = await new Promise<string>((resolve) => open.once('data', (d: Buffer) => resolve(d.toString())));
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(oldSerial).toBeDefined();
    open.destroy();

    // Back to the good certificate; bad files are refused and the current one stays served.
    copyFileSync(s.certs.server, path.join(dir, 'cert.pem'));
    copyFileSync(s.certs.serverKey, path.join(dir, 'key.pem'));
    await app.reloadTls();
    copyFileSync(s.certs.expiredKey, path.join(dir, 'key.pem'));
    await expect(app.reloadTls()).rejects.toThrow(/does not match/);
    copyFileSync(s.certs.serverKey, path.join(dir, 'key.pem'));
    const again = await connect(app.gateway.port);
    expect(again.authorized).toBe(true);
    again.destroy();
  });

  it('the CLI works over HTTPS with --ca, and says what to do without it', async () => {
    const cli = (args: string[]) =>
      run(TSX, ['cli/admin.ts', '--json', '--url', app.admin.url.replace('127.0.0.1', 'localhost'), '--token', 'tls-token', ...args], { cwd: ROOT }).then(
        (r) => ({ code: 0, out: r.stdout, err: r.stderr }),
        (err: unknown) => {
          const e = err as { code?: number; stdout?: string; stderr?: string };
          return { code: e.code ?? -1, out: e.stdout ?? '', err: e.stderr ?? '' };
        },
      );
    const ok = await cli(['--ca', s.certs.ca, 'providers', 'list']);
    expect(ok.code, ok.err).toBe(0);
    expect(JSON.parse(ok.out)).toEqual(expect.anything());
    const refused = await cli(['providers', 'list']);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/certificate is not trusted.*--ca or ADMIN_CA_FILE/);
  });
});

describe("the worker's probes and metrics over HTTPS", () => {
  it('serve HTTPS with the same certificate', async () => {
    const probes = await startProbeServer({
      host: '127.0.0.1',
      port: 0,
      logger,
      readiness: async () => ({ ready: true }),
      metrics: async () => 'm 1\n',
      tls: { certFile: s.certs.server, keyFile: s.certs.serverKey },
    });
    try {
      expect(probes.url).toMatch(/^https:\/\//);
      const res = await fetch(`${probes.url.replace('127.0.0.1', 'localhost')}/metrics`, { dispatcher: agent });
      expect(await res.text()).toBe('m 1\n');
      const port = Number(new URL(probes.url).port);
      await expect(fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(10_000) })).rejects.toThrow();
    } finally {
      await probes.close();
    }
  });
});

describe('the nginx edge with deploy/nginx/tls.conf', () => {
  it('serves the gateway over HTTPS (TLS 1.2+) beside plain HTTP', async () => {
    const edge = await NginxEdge.start([app.gateway.httpPort!], { certFile: s.certs.server, keyFile: s.certs.serverKey });
    try {
      expect(edge.tlsPort).not.toBeNull();
      const res = await fetch(`https://localhost:${edge.tlsPort}/service.asmx?wsdl`, { dispatcher: agent });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('wsdl:definitions');
      const plain = await fetch(`http://127.0.0.1:${edge.port}/service.asmx?disco`);
      expect(plain.status).toBe(200);
      const { stdout } = await run('bash', ['-c', `echo | openssl s_client -connect 127.0.0.1:${edge.tlsPort} -tls1_1 -cipher 'DEFAULT@SECLEVEL=0' 2>&1 || true`]);
      expect(stdout).toMatch(/alert protocol version|no protocols available|unsupported protocol/i);
    } finally {
      await edge.stop();
    }
  });
});

describe("Redis: the gateway user's ACL rule (docs/security.md)", () => {
  it('allows what the gateway does under its prefix and denies FLUSHALL, CONFIG, DEBUG, SHUTDOWN and other keys', async () => {
    const { Redis } = await import('ioredis');
    const redis = new Redis(s.env.REDIS_URL!, { username: 'gateway', password: s.secret('redis-gateway'), tls: { ca }, maxRetriesPerRequest: 1 });
    try {
      expect(await redis.set('gw:acl-test', '1')).toBe('OK');
      expect(await redis.get('gw:acl-test')).toBe('1');
      for (const command of [['flushall'], ['config', 'get', 'maxmemory'], ['debug', 'sleep', '0'], ['shutdown'], ['get', 'other:key'], ['keys', '*']]) {
        // DEBUG is also off in redis.conf by default (enable-debug-command): either refusal will do.
        await expect(redis.call(command[0]!, ...command.slice(1)), command.join(' ')).rejects.toThrow(command[0] === 'debug' ? /NOPERM|DEBUG command not allowed/ : /NOPERM/);
      }
    } finally {
      redis.disconnect();
    }
  });

  it('the Sentinels over TLS with their own credentials lead to the primary', async () => {
    const { openRedisStores } = await import('../../shared/backends/redis/index.js');
    const [host, port] = s.env.SECURE_REDIS_SENTINELS!.split(':');
    const stores = await openRedisStores({
      url: s.env.REDIS_URL!,
      username: 'gateway',
      password: s.secret('redis-gateway'),
      tlsCa: ca,
      sentinels: [{ host: host!, port: Number(port) }],
      sentinelName: s.env.SECURE_REDIS_SENTINEL_NAME!,
      sentinelUsername: 'gateway',
      sentinelPassword: s.secret('sentinel-gateway'),
      sentinelTls: true,
      logger,
    });
    try {
      expect(await stores.healthy()).toBe(true);
    } finally {
      await stores.close();
    }
    // Without TLS to the Sentinel nothing is answered.
    const plain = net.connect(Number(port), host);
    const reply = await new Promise<string>((resolve) => {
      plain.write('PING\r\n');
      plain.once('data', (d: Buffer) => resolve(d.toString()));
      plain.once('close', () => resolve('(closed)'));
      plain.once('error', () => resolve('(error)'));
    });
    expect(reply).not.toMatch(/PONG/);
    plain.destroy();
  });
});
