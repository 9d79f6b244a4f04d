/**
 * /healthz, /readyz and /metrics answer alike on the gateway's admin server and on the worker's
 * probe server (shared/runtime/probes.ts): the same statuses, JSON bodies, content types, HEAD and 405
 * handling, and a reason whenever /readyz says 503.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminServer, type AdminServer } from '../../gateway/admin/server.js';
import { openEmbeddedBackends, type EmbeddedBackends } from '../../shared/backends/embedded/index.js';
import { loadConfig } from '../../shared/config/index.js';
import { METRICS_TYPE, startProbeServer, type ProbeServer, type ReadinessState } from '../../shared/runtime/probes.js';

const TOKEN = 'probe-test-token-0123456789';
const METRICS_TEXT = '# HELP probe_test_up A metric of this test.\n# TYPE probe_test_up gauge\nprobe_test_up 1\n';
const logger = pino({ level: 'silent' });

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

async function request(base: string, method: string, route: string, token: string | null = null): Promise<Answer> {
  const res = await fetch(`${base}${route}`, { method, headers: token === null ? {} : { Authorization: `Bearer ${token}` } });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const json = (a: Answer): unknown => JSON.parse(a.text);

let dir: string;
let backends: EmbeddedBackends | undefined;
let admin: AdminServer;
let probes: ProbeServer;
/** What the probe server's readiness check answers next; a string is thrown. */
let workerState: ReadinessState | string = { ready: true };
let metricsFail = false;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probes-test-'));
  backends = await openEmbeddedBackends({ dataDir: dir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 1000 });
  admin = await startAdminServer({
    config: loadConfig({ DATA_DIR: dir, ADMIN_PORT: '0' }),
    backends,
    logger,
    token: TOKEN,
    port: 0,
    metrics: async () => METRICS_TEXT,
  });
  probes = await startProbeServer({
    tls: null,
    host: '127.0.0.1',
    port: 0,
    logger,
    readiness: async () => {
      if (typeof workerState === 'string') throw new Error(workerState);
      return workerState;
    },
    metrics: async () => {
      if (metricsFail) throw new Error('registry broke');
      return METRICS_TEXT;
    },
  });
});

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await probes?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await admin?.close();
  await backends?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe.each([
  { server: 'the admin server', base: () => admin.url, token: TOKEN },
  { server: 'the probe server', base: () => probes.url, token: null },
])('probes on $server', ({ base, token }) => {
  it('/healthz and /readyz: 200 {"status":"ok"} as JSON, never cached, without a token', async () => {
    for (const route of ['/healthz', '/readyz']) {
      const a = await request(base(), 'GET', route);
      expect(a.status).toBe(200);
      expect(a.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(a.headers.get('cache-control')).toBe('no-store');
      expect(a.text).toBe('{"status":"ok"}\n');
    }
  });

  it('HEAD gets the headers of the GET and no body', async () => {
    const a = await request(base(), 'HEAD', '/healthz');
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(a.headers.get('content-length')).toBe(String('{"status":"ok"}\n'.length));
    expect(a.text).toBe('');
  });

  it('another method: 405 naming GET and HEAD in Allow and in the JSON error', async () => {
    const a = await request(base(), 'POST', '/readyz');
    expect(a.status).toBe(405);
    expect(a.headers.get('allow')).toBe('GET, HEAD');
    expect(json(a)).toMatchObject({ error: 'Method POST not allowed here; use GET, HEAD.' });
  });

  it('/metrics: the Prometheus text with its content type', async () => {
    const a = await request(base(), 'GET', '/metrics', token);
    expect(a.status).toBe(200);
    expect(a.headers.get('content-type')).toBe(METRICS_TYPE);
    expect(a.text).toBe(METRICS_TEXT);
  });

  it('an unknown path: 404 with a JSON error naming it', async () => {
    const a = await request(base(), 'GET', '/nope', token);
    expect(a.status).toBe(404);
    expect(json(a)).toMatchObject({ error: 'No such route: /nope' });
  });
});

describe('/readyz when not ready', () => {
  it('the probe server: 503 with the reason the check gives', async () => {
    workerState = { ready: false, reason: 'waiting for Kafka topic t: broker down' };
    try {
      const a = await request(probes.url, 'GET', '/readyz');
      expect(a.status).toBe(503);
      expect(a.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(json(a)).toEqual({ status: 'unavailable', reason: 'waiting for Kafka topic t: broker down' });
      expect((await request(probes.url, 'GET', '/healthz')).status).toBe(200);
    } finally {
      workerState = { ready: true };
    }
  });

  it('a check that throws is not-ready with the error as the reason, and the server keeps serving', async () => {
    workerState = 'Redis exploded';
    try {
      const a = await request(probes.url, 'GET', '/readyz');
      expect(a.status).toBe(503);
      expect(json(a)).toEqual({ status: 'unavailable', reason: 'the readiness check failed: Redis exploded' });
    } finally {
      workerState = { ready: true };
    }
    expect((await request(probes.url, 'GET', '/readyz')).status).toBe(200);
  });

  it('metrics that cannot be collected: 500 with a JSON error, then served again', async () => {
    metricsFail = true;
    try {
      const a = await request(probes.url, 'GET', '/metrics');
      expect(a.status).toBe(500);
      expect(json(a)).toEqual({ error: 'Internal error; the log has the details.' });
    } finally {
      metricsFail = false;
    }
    expect((await request(probes.url, 'GET', '/metrics')).status).toBe(200);
  });

  it('the gateway: 503 naming the failing backend check (here, the closed store)', async () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'probes-closed-'));
    const b = await openEmbeddedBackends({ dataDir: d, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 1000 });
    const s = await startAdminServer({ config: loadConfig({ DATA_DIR: d, ADMIN_PORT: '0' }), backends: b, logger, token: TOKEN, port: 0 });
    try {
      await b.close();
      const a = await request(s.url, 'GET', '/readyz');
      expect(a.status).toBe(503);
      expect(json(a)).toEqual({ status: 'unavailable', reason: 'sqlite: the store is closed' });
    } finally {
      await s.close();
      fs.rmSync(d, { recursive: true, force: true });
    }
  });

  it('the gateway: a reason even when no check of the overview says which backend (falls back to a general one)', async () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'probes-general-'));
    const b = await openEmbeddedBackends({ dataDir: d, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 1000 });
    const notReady = { ...b, healthy: async () => false };
    const s = await startAdminServer({ config: loadConfig({ DATA_DIR: d, ADMIN_PORT: '0' }), backends: notReady, logger, token: TOKEN, port: 0 });
    try {
      const a = await request(s.url, 'GET', '/readyz');
      expect(a.status).toBe(503);
      expect(json(a)).toEqual({ status: 'unavailable', reason: 'the backends are not ready' });
    } finally {
      await s.close();
      await b.close();
      fs.rmSync(d, { recursive: true, force: true });
    }
  });
});
