import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRoutes } from '../../gateway/admin/routes.js';
import { startAdminServer, type AdminServer } from '../../gateway/admin/server.js';
import { StreamHub } from '../../gateway/admin/stream-hub.js';
import { openEmbeddedBackends, type EmbeddedBackends } from '../../shared/backends/embedded/index.js';
import { loadConfig, type Config } from '../../shared/config/index.js';
import { eventRecords } from '../helpers/event-records.js';

/**
 * The smaller edges of the admin API found when it was attacked, each pinned: beforeId across the unsigned
 * 64-bit range, HEAD on every route, names no URL can carry, the standard security headers, private
 * files in DATA_DIR, invalid UTF-8 bodies, and every listing route honouring its limit.
 */
const TOKEN = 'edges-test-token';
const T0 = Date.UTC(2026, 0, 1);
const logger = pino({ level: 'silent' });
const cleanups: (() => Promise<void> | void)[] = [];

let dataDir: string;
let config: Config;
let backends: EmbeddedBackends;
let server: AdminServer;

beforeAll(async () => {
  const previous = process.umask(0o022);
  cleanups.push(() => void process.umask(previous));
  dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'admin-edges-')), 'data');
  cleanups.push(() => fs.rmSync(path.dirname(dataDir), { recursive: true, force: true }));
  config = loadConfig({ DATA_DIR: dataDir, ADMIN_PORT: '0' });
  backends = await openEmbeddedBackends({ dataDir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 600_000 });
  server = await startAdminServer({ config, backends, logger, token: TOKEN, clock: () => T0, port: 0 });
  const created = await api('POST', '/admin/providers', { systemUser: 'acme', password: 'secret-acme-1' });
  expect(created.status).toBe(201);
});

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await server?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await backends?.close();
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function api(method: string, urlPath: string, body?: unknown, raw?: Buffer): Promise<{ status: number; headers: Headers; json: Record<string, unknown>; text: string }> {
  const headers: Record<string, string> = { Authorization: `Bearer ${TOKEN}` };
  if (body !== undefined || raw !== undefined) headers['Content-Type'] = 'application/json';
  const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body));
  const res = await fetch(`${server.url}${urlPath}`, { method, headers, ...(payload === undefined ? {} : { body: payload }), signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  const json = text !== '' && (res.headers.get('content-type') ?? '').startsWith('application/json') ? (JSON.parse(text) as Record<string, unknown>) : {};
  return { status: res.status, headers: res.headers, json, text };
}

describe('beforeId', () => {
  it('answers 200 for any id up to 2^64-1 (SQLite stores signed 64-bit integers)', async () => {
    const next = eventRecords({ eventTimeBase: T0, stepMs: 1000, receivedAt: T0, dedupePrefix: 'edges-' });
    await backends.eventLog.append([next({ systemUser: 'acme' }), next({ systemUser: 'acme' })]);
    for (const before of ['9223372036854775807', '9223372036854775808', '18446744073709551615']) {
      const res = await api('GET', `/admin/events?beforeId=${before}`);
      expect(res.status, before).toBe(200);
      expect((res.json.events as unknown[]).length).toBe(2);
    }
    expect((await api('GET', '/admin/events?beforeId=18446744073709551616')).status).toBe(400);
  });
});

describe('HEAD', () => {
  it('answers every route with its head at once, never a body, never a hang', async () => {
    const hub = new StreamHub({ feed: backends.feed, logger, maxStreams: 1, eventsPerSecond: 1, keepAliveMs: 1000, backlogBytes: 1024 });
    const routes = adminRoutes({ config, backends, logger, clock: () => T0, streams: hub, mode: 'embedded', allowedFor: () => [] });
    const values: Record<string, string> = { systemUser: 'acme', dominio: 'AA1', numero: '1', id: '0-1' };
    for (const route of routes) {
      const urlPath = `/${route.pattern.map((p) => (p.startsWith(':') ? (values[p.slice(1)] ?? 'x') : p)).join('/')}`;
      const res = await api('HEAD', urlPath);
      expect(res.text, urlPath).toBe('');
      if (route.handlers.GET === undefined) {
        expect(res.status, urlPath).toBe(405);
      } else {
        expect([200, 404], urlPath).toContain(res.status);
      }
      expect(res.headers.get('x-content-type-options'), urlPath).toBe('nosniff');
    }
    expect(server.liveStreams).toBe(0);
  });
});

describe('names no URL can carry', () => {
  it('refuses SystemUsers and Dominios "." and ".." at creation and in imports', async () => {
    for (const systemUser of ['.', '..']) {
      const res = await api('POST', '/admin/providers', { systemUser, password: 'secret-123' });
      expect(res.status).toBe(400);
      expect(res.json.field).toBe('systemUser');
    }
    const imported = await api('POST', '/admin/import/providers', { providers: [{ line: 1, systemUser: '..', password: 'x' }] });
    expect(imported.json.results).toEqual([{ line: 1, outcome: 'failed', reason: expect.stringMatching(/cannot be "\." or "\.\."/) as unknown }]);
    const vehicle = await api('POST', '/admin/import/trips', { trips: [{ line: 1, systemUser: 'acme', dominio: '..', nroSerie: 'S' }] });
    expect(vehicle.json.results).toEqual([{ line: 1, outcome: 'failed', reason: expect.stringMatching(/dominio cannot be/) as unknown }]);
    // A name that merely contains dots is fine.
    expect((await api('POST', '/admin/providers', { systemUser: '.acme.', password: 'secret-123' })).status).toBe(201);
    expect((await api('GET', '/admin/providers/.acme.')).status).toBe(200);
  });
});

describe('security headers', () => {
  it('are on every kind of admin answer', async () => {
    const answers = [
      await api('GET', '/admin/providers'),
      await api('GET', '/admin/no-such-route/<script>'),
      await api('DELETE', '/admin/overview'),
      await fetch(`${server.url}/admin/providers`),
      await fetch(`${server.url}/healthz`),
    ];
    for (const res of answers) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('cross-origin-resource-policy')).toBe('same-origin');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    }
  });
});

describe('DATA_DIR', () => {
  it('is created 0700 and the SQLite files 0600, whatever the umask', () => {
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    const files = fs.readdirSync(dataDir).filter((f) => f.includes('sqlite'));
    expect(files.length).toBeGreaterThanOrEqual(1);
    for (const f of files) expect(fs.statSync(path.join(dataDir, f)).mode & 0o777, f).toBe(0o600);
  });

  it('an existing world-readable one is tightened when opened', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'admin-edges-open-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.chmodSync(dir, 0o755);
    const b = await openEmbeddedBackends({ dataDir: dir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 1000 });
    await b.close();
    fs.chmodSync(path.join(dir, 'gateway.sqlite'), 0o644);
    const again = await openEmbeddedBackends({ dataDir: dir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 1000 });
    await again.close();
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(dir, 'gateway.sqlite')).mode & 0o777).toBe(0o600);
  });
});

describe('JSON bodies', () => {
  it('invalid UTF-8 is refused with its line and column, never stored as U+FFFD', async () => {
    const raw = Buffer.concat([Buffer.from('{"systemUser": "latin1",\n "password": "contrase'), Buffer.from([0xf1]), Buffer.from('a1"}')]);
    const res = await api('POST', '/admin/providers', undefined, raw);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/not valid UTF-8: byte 0xf1 at line 2, column 23/);
    expect((await api('GET', '/admin/providers/latin1')).status).toBe(404);
    // A BOM is allowed and dropped.
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"systemUser":"bom","password":"contraseña1"}')]);
    expect((await api('POST', '/admin/providers', undefined, bom)).status).toBe(201);
  });
});

describe('listing routes honour their limits', () => {
  it('trip vehicles: ?limit= and ?after= page through a trip', async () => {
    for (let i = 0; i < 250; i++) await backends.trips.addVehicle('acme', `V${String(i).padStart(4, '0')}`, 'S', T0);
    const first = await api('GET', '/admin/providers/acme/trip/vehicles?limit=10');
    expect(first.status).toBe(200);
    expect((first.json.vehicles as unknown[]).length).toBe(10);
    expect(first.json.nextAfter).toBe('V0009');
    const defaults = await api('GET', '/admin/providers/acme/trip/vehicles');
    expect((defaults.json.vehicles as unknown[]).length).toBe(100);
    const seen: string[] = [];
    let after: unknown = null;
    do {
      const page = await api('GET', `/admin/providers/acme/trip/vehicles?limit=100${typeof after === 'string' ? `&after=${after}` : ''}`);
      seen.push(...(page.json.vehicles as { dominio: string }[]).map((v) => v.dominio));
      after = page.json.nextAfter;
    } while (after !== null);
    expect(seen.length).toBe(250);
    expect(new Set(seen).size).toBe(250);
    expect((await api('GET', '/admin/providers/acme/trip/vehicles?limit=1001')).status).toBe(400);
    expect((await api('GET', '/admin/providers/acme/trip/vehicles?limit=0')).status).toBe(400);
    expect((await api('GET', '/admin/providers/acme/trip/vehicles?size=1')).status).toBe(400);
  });

  it("a provider's commands: ?limit= and ?beforeNumero=", async () => {
    for (let i = 0; i < 5; i++) await api('POST', '/admin/providers/acme/commands', { cmd: `C${i}`, unidad: 'U', equipo: 'E' });
    const page = await api('GET', '/admin/providers/acme/commands?limit=2');
    const numeros = (page.json.commands as { numero: number }[]).map((c) => c.numero);
    expect(numeros).toHaveLength(2);
    expect(page.json.nextBeforeNumero).toBe(numeros[1]);
    const rest = await api('GET', `/admin/providers/acme/commands?limit=10&beforeNumero=${String(numeros[1])}`);
    expect((rest.json.commands as unknown[]).length).toBe(3);
    expect((await api('GET', '/admin/providers/acme/commands?limit=5000')).status).toBe(400);
  });

  it('events, the command queues and poison honour ?limit=', async () => {
    expect((await api('GET', '/admin/events?limit=1')).json.events).toHaveLength(1);
    expect((await api('GET', '/admin/commands?limit=3')).json.commands).toHaveLength(3);
    expect((await api('GET', '/admin/poison?limit=1')).status).toBe(200);
    for (const route of ['/admin/events', '/admin/commands', '/admin/poison']) expect((await api('GET', `${route}?limit=100000`)).status, route).toBe(400);
  });

  it('a trip import reads only its own lines, never the whole trip', async () => {
    let wholeTripReads = 0;
    const original = backends.trips.listVehicles.bind(backends.trips);
    backends.trips.listVehicles = (systemUser) => {
      wholeTripReads++;
      return original(systemUser);
    };
    try {
      const trips = Array.from({ length: 20 }, (_, i) => ({ line: i + 1, systemUser: 'acme', dominio: `V${String(i).padStart(4, '0')}`, nroSerie: i < 10 ? 'S' : 'S2' }));
      trips.push({ line: 21, systemUser: 'acme', dominio: 'NEW1', nroSerie: 'N' }, { line: 22, systemUser: 'acme', dominio: 'NEW1', nroSerie: 'N' });
      const res = await api('POST', '/admin/import/trips', { trips });
      const outcomes = (res.json.results as { outcome: string }[]).map((r) => r.outcome);
      expect(outcomes.slice(0, 10)).toEqual(Array<string>(10).fill('unchanged'));
      expect(outcomes.slice(10, 20)).toEqual(Array<string>(10).fill('updated'));
      expect(outcomes.slice(20)).toEqual(['created', 'unchanged']);
      expect(wholeTripReads).toBe(0);
    } finally {
      backends.trips.listVehicles = original;
    }
  });
});
