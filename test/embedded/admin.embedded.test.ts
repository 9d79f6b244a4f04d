import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbeddedBackends, type EmbeddedBackends } from '../../shared/backends/embedded/index.js';
import { loadConfig, type Config } from '../../shared/config/index.js';
import { verifyPassword } from '../../shared/domain/passwords.js';
import { resolveAdminToken, startAdminServer, type AdminServer } from '../../gateway/admin/server.js';
import { eventRecords } from '../helpers/event-records.js';
import { REPO } from '../helpers/paths.js';

const ROOT = REPO;
const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);
const TOKEN = 'test-admin-token-0123456789';

/** Every password this file sends; none may ever come back in a response or a log line. */
const PASSWORDS = ['secret-acme-1', 'rotated-acme-2', 'pw-for-spaces', 'cli-secret-9', 'stdin-secret-7', 'sh0rt'];

const cleanups: (() => Promise<void> | void)[] = [];
const responses: string[] = [];
const logLines: string[] = [];

function tempDir(prefix = 'admin-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const captureLogs = new Writable({
  write(chunk: Buffer, _enc, done) {
    logLines.push(chunk.toString('utf8'));
    done();
  },
});
const logger = pino({ level: 'debug' }, captureLogs);

let dataDir: string;
let config: Config;
let backends: EmbeddedBackends;
let server: AdminServer;
let now = T0;

beforeAll(async () => {
  dataDir = tempDir();
  config = loadConfig({ DATA_DIR: dataDir, ADMIN_PORT: '0' });
  backends = await openEmbeddedBackends({ dataDir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 600_000 });
  server = await startAdminServer({ config, backends, logger, token: TOKEN, clock: () => now, port: 0 });
});

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await server?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await backends?.close();
  while (cleanups.length > 0) await cleanups.pop()?.();
});

interface ApiResult {
  status: number;
  headers: Headers;
  text: string;
  // Parsed JSON; tests inspect it field by field.
  json: Record<string, unknown> & { [key: string]: unknown };
}

async function api(
  method: string,
  urlPath: string,
  options: { body?: unknown; raw?: string | Buffer; token?: string | null; headers?: Record<string, string>; base?: string } = {},
): Promise<ApiResult> {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? TOKEN : options.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  let body: string | Buffer | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['Content-Type'] = 'application/json';
  }
  const res = await fetch(`${options.base ?? server.url}${urlPath}`, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  responses.push(text);
  let json: ApiResult['json'] = {};
  if (text !== '' && (res.headers.get('content-type') ?? '').startsWith('application/json')) {
    json = JSON.parse(text) as ApiResult['json'];
  }
  return { status: res.status, headers: res.headers, text, json };
}

const iso = (ms: number): string => new Date(ms).toISOString();

const event = eventRecords({ eventTimeBase: T0, stepMs: 1000, receivedAt: T0, dedupePrefix: 'admin-test-' });

describe('probes', () => {
  it('answers /healthz and /readyz without a token', async () => {
    const live = await api('GET', '/healthz', { token: null });
    expect(live.status).toBe(200);
    expect(live.json).toEqual({ status: 'ok' });
    expect(live.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const ready = await api('GET', '/readyz', { token: null });
    expect(ready.status).toBe(200);
    expect(ready.json).toEqual({ status: 'ok' });
  });

  it('answers HEAD like GET, without a body', async () => {
    const res = await api('HEAD', '/healthz', { token: null });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
  });

  it('reports 503 on /readyz once the backends are down', async () => {
    const dir = tempDir();
    const cfg = loadConfig({ DATA_DIR: dir, ADMIN_PORT: '0' });
    const b = await openEmbeddedBackends({ dataDir: dir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 1000 });
    const s = await startAdminServer({ config: cfg, backends: b, logger, token: TOKEN, port: 0 });
    try {
      expect((await api('GET', '/readyz', { token: null, base: s.url })).status).toBe(200);
      await b.close();
      const res = await api('GET', '/readyz', { token: null, base: s.url });
      expect(res.status).toBe(503);
      expect(res.json.status).toBe('unavailable');
      expect((await api('GET', '/healthz', { token: null, base: s.url })).status).toBe(200);
    } finally {
      await s.close();
      await b.close();
    }
  });

  it('binds to the configured host and reports its URL', () => {
    expect(config.admin.host).toBe('127.0.0.1');
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
  });

  it('serves /metrics only when given, and only with the token', async () => {
    expect((await api('GET', '/metrics')).status).toBe(404);
    const s = await startAdminServer({
      config,
      backends,
      logger,
      token: TOKEN,
      port: 0,
      metrics: async () => 'gateway_up 1\n',
    });
    try {
      const res = await api('GET', '/metrics', { base: s.url });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(res.text).toBe('gateway_up 1\n');
      expect((await api('GET', '/metrics', { base: s.url, token: null })).status).toBe(401);
    } finally {
      await s.close();
    }
  });

  it('refuses an empty token', async () => {
    await expect(startAdminServer({ config, backends, logger, token: '', port: 0 })).rejects.toThrow(/empty/);
  });
});

describe('authentication and routing', () => {
  it('answers 401 without a token, with a wrong token or another scheme', async () => {
    const variants: Record<string, string>[] = [{}, { Authorization: `Bearer ${TOKEN}x` }, { Authorization: `Basic ${TOKEN}` }, { Authorization: 'Bearer' }];
    for (const headers of variants) {
      const res = await api('GET', '/admin/providers', { token: null, headers });
      expect(res.status).toBe(401);
      expect(typeof res.json.error).toBe('string');
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    }
    expect((await api('GET', '/admin/providers', { token: 'nope' })).status).toBe(401);
  });

  it('accepts the scheme in any case', async () => {
    const res = await api('GET', '/admin/providers', { token: null, headers: { Authorization: `bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
  });

  it('hides unknown routes behind the token, then answers 404', async () => {
    expect((await api('GET', '/admin/nothing', { token: null })).status).toBe(401);
    const res = await api('GET', '/admin/nothing');
    expect(res.status).toBe(404);
    expect(res.json.error).toMatch(/No such route/);
    expect((await api('GET', '/nothing')).status).toBe(404);
  });

  it('answers 405 with Allow for a wrong method', async () => {
    const res = await api('DELETE', '/admin/providers');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, POST, HEAD');
    expect(res.json.error).toMatch(/not allowed/);
    const probe = await api('POST', '/healthz', { token: null });
    expect(probe.status).toBe(405);
    expect((await api('POST', '/admin/events')).status).toBe(405);
  });

  it('answers 400 for malformed percent-encoding', async () => {
    const res = await api('GET', '/admin/providers/%E0%A4%A');
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/percent-encoding/);
  });
});

describe('providers', () => {
  it('creates a provider, storing only a scrypt hash', async () => {
    const res = await api('POST', '/admin/providers', {
      body: { systemUser: 'acme', password: 'secret-acme-1', timeZone: 'America/Argentina/Buenos_Aires' },
    });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      systemUser: 'acme',
      enabled: true,
      timeZone: 'America/Argentina/Buenos_Aires',
      requireRegisteredVehicles: false,
      createdAt: iso(T0),
      updatedAt: iso(T0),
    });
    const stored = await backends.providers.get('acme');
    expect(stored?.passwordHash.startsWith('scrypt$')).toBe(true);
    expect(stored?.passwordHash).not.toBe('secret-acme-1');
    expect(await verifyPassword('secret-acme-1', stored?.passwordHash ?? '')).toBe(true);
  });

  it('creates with defaults, keeping the zone as spelt', async () => {
    const res = await api('POST', '/admin/providers', {
      body: { systemUser: 'beta', password: 'secret-acme-1', timeZone: 'Europe/Madrid', requireRegisteredVehicles: true },
    });
    expect(res.status).toBe(201);
    expect(res.json.timeZone).toBe('Europe/Madrid');
    const cased = await api('PATCH', '/admin/providers/beta', { body: { timeZone: 'america/argentina/salta' } });
    expect(cased.json.timeZone).toBe('America/Argentina/Salta');
    expect((await api('PATCH', '/admin/providers/beta', { body: { timeZone: 'europe/madrid' } })).json.timeZone).toBe('Europe/Madrid');
    expect(res.json.requireRegisteredVehicles).toBe(true);
    const plain = await api('POST', '/admin/providers', { body: { systemUser: 'gamma', password: 'secret-acme-1' } });
    expect(plain.status).toBe(201);
    expect(plain.json.timeZone).toBeNull();
  });

  it('answers 409 for an existing SystemUser', async () => {
    const res = await api('POST', '/admin/providers', { body: { systemUser: 'acme', password: 'secret-acme-1' } });
    expect(res.status).toBe(409);
    expect(res.json.error).toMatch(/already exists/);
  });

  it.each([
    [{ password: 'secret-acme-1' }, 'systemUser', /systemUser is required/],
    [{ systemUser: '', password: 'secret-acme-1' }, 'systemUser', /systemUser must not be empty/],
    [{ systemUser: '   ', password: 'secret-acme-1' }, 'systemUser', /systemUser must not be empty/],
    [{ systemUser: 'x'.repeat(65), password: 'secret-acme-1' }, 'systemUser', /at most 64/],
    [{ systemUser: 42, password: 'secret-acme-1' }, 'systemUser', /must be a string/],
    [{ systemUser: ' padded', password: 'secret-acme-1' }, 'systemUser', /whitespace/],
    [{ systemUser: 'tab\there', password: 'secret-acme-1' }, 'systemUser', /control characters/],
    [{ systemUser: 'new1' }, 'password', /password is required/],
    [{ systemUser: 'new1', password: 'sh0rt' }, 'password', /at least 6 characters/],
    [{ systemUser: 'new1', password: 123456 }, 'password', /must be a string/],
    [{ systemUser: 'new1', password: 'secret-acme-1', timeZone: 'Mars/Olympus' }, 'timeZone', /not a valid IANA/],
    [{ systemUser: 'new1', password: 'secret-acme-1', timeZone: 3 }, 'timeZone', /IANA time zone/],
    [{ systemUser: 'new1', password: 'secret-acme-1', requireRegisteredVehicles: 'yes' }, 'requireRegisteredVehicles', /true or false/],
    [{ systemUser: 'new1', password: 'secret-acme-1', timezone: 'UTC' }, 'timezone', /Unknown field "timezone"/],
  ])('answers 400 for an invalid create body %#', async (body, field, message) => {
    const res = await api('POST', '/admin/providers', { body });
    expect(res.status).toBe(400);
    expect(res.json.field).toBe(field);
    expect(res.json.error).toMatch(message);
    expect(await backends.providers.get('new1')).toBeNull();
  });

  it('allows 64 characters, counted as characters', async () => {
    const name = 'ñ'.repeat(63) + '🚚';
    const res = await api('POST', '/admin/providers', { body: { systemUser: name, password: 'secret-acme-1' } });
    expect(res.status).toBe(201);
  });

  it('answers 400 for malformed JSON, a non-object or an empty body', async () => {
    const bad = await api('POST', '/admin/providers', { raw: '{"systemUser": "x",', headers: { 'Content-Type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/not valid JSON/);
    const arr = await api('POST', '/admin/providers', { raw: '[1,2]' });
    expect(arr.status).toBe(400);
    expect(arr.json.error).toMatch(/must be a JSON object/);
    const empty = await api('POST', '/admin/providers', { raw: '' });
    expect(empty.status).toBe(400);
    expect(empty.json.error).toMatch(/empty/);
  });

  it('answers 413 for a body over 64 KiB', async () => {
    const big = JSON.stringify({ systemUser: 'big', password: 'x'.repeat(70 * 1024) });
    const res = await api('POST', '/admin/providers', { raw: big });
    expect(res.status).toBe(413);
    expect(res.json.error).toMatch(/exceeds/);
    expect(await backends.providers.get('big')).toBeNull();
    // The server is still fine afterwards.
    expect((await api('GET', '/admin/providers')).status).toBe(200);
  });

  it('answers 413 for a chunked body over 64 KiB', async () => {
    const chunk = new TextEncoder().encode(' '.repeat(16 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 6) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await fetch(`${server.url}/admin/providers`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}` },
      body: stream,
      duplex: 'half',
    });
    expect(res.status).toBe(413);
    await res.text();
  });

  it('lists providers and shows one; 404 for an unknown one', async () => {
    const list = await api('GET', '/admin/providers');
    expect(list.status).toBe(200);
    const names = (list.json.providers as { systemUser: string }[]).map((p) => p.systemUser);
    expect(names).toEqual(expect.arrayContaining(['acme', 'beta', 'gamma']));
    const one = await api('GET', '/admin/providers/acme');
    expect(one.status).toBe(200);
    expect(one.json.systemUser).toBe('acme');
    expect(one.json).not.toHaveProperty('passwordHash');
    const trailing = await api('GET', '/admin/providers/acme/');
    expect(trailing.status).toBe(200);
    const missing = await api('GET', '/admin/providers/nobody');
    expect(missing.status).toBe(404);
    expect(missing.json.error).toMatch(/not found/);
  });

  it('URL-decodes path segments, slashes included', async () => {
    const name = 'Acme S.A./Sucursal 1';
    expect((await api('POST', '/admin/providers', { body: { systemUser: name, password: 'pw-for-spaces' } })).status).toBe(201);
    const res = await api('GET', `/admin/providers/${encodeURIComponent(name)}`);
    expect(res.status).toBe(200);
    expect(res.json.systemUser).toBe(name);
  });

  it('updates password, flags and time zone', async () => {
    now = T0 + 60_000;
    const before = await backends.providers.get('acme');
    for (let i = 0; i < 10; i++) {
      await backends.lockouts.recordFailure('acme', '203.0.113.9', now, { maxFailures: 10, userMaxFailures: 1000, windowMs: 600_000, lockMs: 600_000 });
    }
    expect(await backends.lockouts.lockedUntil('acme', () => '203.0.113.9', now)).toBe(now + 600_000);
    const res = await api('PATCH', '/admin/providers/acme', {
      body: { password: 'rotated-acme-2', enabled: false, timeZone: null, requireRegisteredVehicles: true },
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      systemUser: 'acme',
      enabled: false,
      timeZone: null,
      requireRegisteredVehicles: true,
      createdAt: iso(T0),
      updatedAt: iso(T0 + 60_000),
    });
    const after = await backends.providers.get('acme');
    expect(after?.passwordHash).not.toBe(before?.passwordHash);
    expect(after?.passwordHash.startsWith('scrypt$')).toBe(true);
    expect(await verifyPassword('rotated-acme-2', after?.passwordHash ?? '')).toBe(true);
    // A password reset lifts a lockout.
    expect(await backends.lockouts.lockedUntil('acme', () => '203.0.113.9', now)).toBeNull();

    const partial = await api('PATCH', '/admin/providers/acme', { body: { enabled: true, timeZone: 'utc' } });
    expect(partial.status).toBe(200);
    expect(partial.json.enabled).toBe(true);
    expect(partial.json.timeZone).toBe('UTC');
    expect(partial.json.requireRegisteredVehicles).toBe(true);
    expect((await backends.providers.get('acme'))?.passwordHash).toBe(after?.passwordHash);
  });

  it('answers 404/400 for bad updates', async () => {
    expect((await api('PATCH', '/admin/providers/nobody', { body: { enabled: true } })).status).toBe(404);
    const empty = await api('PATCH', '/admin/providers/acme', { body: {} });
    expect(empty.status).toBe(400);
    expect(empty.json.error).toMatch(/Nothing to update/);
    const short = await api('PATCH', '/admin/providers/acme', { body: { password: 'sh0rt' } });
    expect(short.status).toBe(400);
    expect(short.json.field).toBe('password');
    const flag = await api('PATCH', '/admin/providers/acme', { body: { enabled: 'no' } });
    expect(flag.status).toBe(400);
    expect(flag.json.field).toBe('enabled');
    const zone = await api('PATCH', '/admin/providers/acme', { body: { timeZone: 'Nowhere/Town' } });
    expect(zone.status).toBe(400);
    expect(zone.json.field).toBe('timeZone');
    const unknown = await api('PATCH', '/admin/providers/acme', { body: { systemUser: 'renamed' } });
    expect(unknown.status).toBe(400);
    expect(unknown.json.field).toBe('systemUser');
    expect((await api('PUT', '/admin/providers/acme', { body: { enabled: true } })).status).toBe(405);
  });
});

describe('commands', () => {
  it('queues a command that expires after COMMAND_TTL', async () => {
    now = T0 + 120_000;
    const res = await api('POST', '/admin/providers/acme/commands', { body: { cmd: 'CC', unidad: 'AB123CD', equipo: '42' } });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      numero: expect.any(Number) as number,
      cmd: 'CC',
      unidad: 'AB123CD',
      equipo: '42',
      state: 'pending',
      createdAt: iso(now),
      expiresAt: iso(now + config.commands.ttlMs),
      deliveries: 0,
      lastDeliveredAt: null,
      finishedAt: null,
      history: [{ at: iso(now), kind: 'queued', message: '' }],
    });
    expect(res.json.numero).toBeGreaterThan(0);
  });

  it('lists commands with deliveries and history', async () => {
    const delivered = await backends.commands.deliverNext('acme', T0 + 130_000);
    expect(delivered).not.toBeNull();
    await backends.commands.appendStatus('acme', delivered?.numero ?? 0, 'enviado al equipo', T0 + 140_000);
    const res = await api('GET', '/admin/providers/acme/commands');
    expect(res.status).toBe(200);
    const commands = res.json.commands as Record<string, unknown>[];
    expect(commands).toHaveLength(1);
    expect(commands[0]).toMatchObject({
      numero: delivered?.numero,
      state: 'in_process',
      deliveries: 1,
      lastDeliveredAt: iso(T0 + 130_000),
      finishedAt: null,
      history: [
        { at: iso(T0 + 120_000), kind: 'queued', message: '' },
        { at: iso(T0 + 130_000), kind: 'delivered', message: '' },
        { at: iso(T0 + 140_000), kind: 'status', message: 'enviado al equipo' },
      ],
    });
    expect((await api('GET', '/admin/providers/gamma/commands')).json).toEqual({ commands: [], nextBeforeNumero: null });
  });

  it('reports expiry with the server clock', async () => {
    now = T0 + 120_000 + config.commands.ttlMs;
    const res = await api('GET', '/admin/providers/acme/commands');
    expect((res.json.commands as { state: string }[])[0]?.state).toBe('expired');
    now = T0 + 150_000;
  });

  it('answers 404 for an unknown provider and 400 for bad fields', async () => {
    const missing = await api('POST', '/admin/providers/nobody/commands', { body: { cmd: 'CC', unidad: 'A', equipo: '1' } });
    expect(missing.status).toBe(404);
    expect((await api('GET', '/admin/providers/nobody/commands')).status).toBe(404);
    for (const [body, field] of [
      [{ unidad: 'A', equipo: '1' }, 'cmd'],
      [{ cmd: 'CC', unidad: '', equipo: '1' }, 'unidad'],
      [{ cmd: 'CC', unidad: 'A', equipo: 42 }, 'equipo'],
      [{ cmd: 'CC', unidad: 'A', equipo: '1', numero: 5 }, 'numero'],
    ] as const) {
      const res = await api('POST', '/admin/providers/acme/commands', { body });
      expect(res.status).toBe(400);
      expect(res.json.field).toBe(field);
    }
    expect((await api('DELETE', '/admin/providers/acme/commands')).status).toBe(405);
  });
});

describe('trip vehicles', () => {
  it('registers (201), re-registers (200), lists and removes (204) vehicles', async () => {
    now = T0 + 200_000;
    const created = await api('PUT', '/admin/providers/acme/trip/vehicles/AB123CD', { body: { nroSerie: 'SN-1' } });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({ dominio: 'AB123CD', nroSerie: 'SN-1', registeredAt: iso(now), lastReport: null });

    const spaced = await api('PUT', `/admin/providers/acme/trip/vehicles/${encodeURIComponent('AA 001 ZZ')}`, {
      body: { nroSerie: 'SN-2' },
    });
    expect(spaced.status).toBe(201);
    expect(spaced.json.dominio).toBe('AA 001 ZZ');

    now = T0 + 210_000;
    const again = await api('PUT', '/admin/providers/acme/trip/vehicles/AB123CD', { body: { nroSerie: 'SN-9' } });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ nroSerie: 'SN-9', registeredAt: iso(now) });

    await backends.eventLog.append([event({ dominio: 'AB123CD', eventTime: { epochMs: T0 + 5_000, subMsTicks: 1234 } })]);
    const list = await api('GET', '/admin/providers/acme/trip/vehicles');
    expect(list.status).toBe(200);
    expect(list.json).toEqual({
      vehicles: [
        { dominio: 'AA 001 ZZ', nroSerie: 'SN-2', registeredAt: iso(T0 + 200_000), lastReport: null },
        { dominio: 'AB123CD', nroSerie: 'SN-9', registeredAt: iso(T0 + 210_000), lastReport: '2024-05-01T12:00:05.0001234Z' },
      ],
      nextAfter: null,
    });

    const removed = await api('DELETE', `/admin/providers/acme/trip/vehicles/${encodeURIComponent('AA 001 ZZ')}`);
    expect(removed.status).toBe(204);
    expect(removed.text).toBe('');
    const gone = await api('DELETE', `/admin/providers/acme/trip/vehicles/${encodeURIComponent('AA 001 ZZ')}`);
    expect(gone.status).toBe(404);
    expect(gone.json.error).toMatch(/not on a trip/);
    expect(((await api('GET', '/admin/providers/acme/trip/vehicles')).json.vehicles as unknown[]).length).toBe(1);
  });

  it('answers 404 for an unknown provider, 400 for bad fields, 405 for wrong methods', async () => {
    expect((await api('PUT', '/admin/providers/nobody/trip/vehicles/X1', { body: { nroSerie: 'S' } })).status).toBe(404);
    expect((await api('DELETE', '/admin/providers/nobody/trip/vehicles/X1')).status).toBe(404);
    expect((await api('GET', '/admin/providers/nobody/trip/vehicles')).status).toBe(404);
    const missing = await api('PUT', '/admin/providers/acme/trip/vehicles/X1', { body: {} });
    expect(missing.status).toBe(400);
    expect(missing.json.field).toBe('nroSerie');
    const blank = await api('PUT', '/admin/providers/acme/trip/vehicles/%20', { body: { nroSerie: 'S' } });
    expect(blank.status).toBe(400);
    expect(blank.json.field).toBe('dominio');
    expect((await api('GET', '/admin/providers/acme/trip/vehicles/AB123CD')).status).toBe(405);
    expect((await api('POST', '/admin/providers/acme/trip/vehicles')).status).toBe(405);
  });
});

describe('events', () => {
  it('lists stored events latest first, ids as strings, instants as ISO', async () => {
    await backends.eventLog.append([
      event({ systemUser: 'beta', dominio: 'BB111BB', codigo: '7' }),
      event({
        systemUser: 'beta',
        dominio: 'CC222CC',
        eventTimeText: '2024-05-01T09:00:00.5-03:00',
        eventTime: { epochMs: Date.UTC(2024, 4, 1, 12, 0, 0, 500), subMsTicks: 0 },
        receptionTimeText: '2024-05-01T09:00:01',
        receptionTime: { epochMs: Date.UTC(2024, 4, 1, 12, 0, 1), subMsTicks: 5 },
        sensors: [{ clave: 'temp', valor: '21.5' }],
        crudo: 'RAW',
        valido: true,
        operation: 'LoginYInsertarEvento2',
      }),
    ]);
    const res = await api('GET', '/admin/events');
    expect(res.status).toBe(200);
    const events = res.json.events as Record<string, unknown>[];
    expect(events.length).toBe(3);
    const ids = events.map((e) => e.id);
    for (const id of ids) expect(typeof id).toBe('string');
    expect(ids.map((id) => BigInt(id as string))).toEqual([...ids.map((id) => BigInt(id as string))].sort((a, b) => (a > b ? -1 : 1)));
    expect(events[0]).toMatchObject({
      systemUser: 'beta',
      dominio: 'CC222CC',
      eventTime: '2024-05-01T12:00:00.5Z',
      eventTimeText: '2024-05-01T09:00:00.5-03:00',
      receptionTime: '2024-05-01T12:00:01.0000005Z',
      receptionTimeText: '2024-05-01T09:00:01',
      receivedAt: iso(T0),
      sensors: [{ clave: 'temp', valor: '21.5' }],
      crudo: 'RAW',
      valido: true,
      operation: 'LoginYInsertarEvento2',
    });
    expect(typeof events[0]?.storedAt).toBe('string');
    expect(events[1]).toMatchObject({ dominio: 'BB111BB', codigo: '7', receptionTime: null, valido: null });
  });

  it('filters by provider, dominio and limit', async () => {
    const byProvider = await api('GET', '/admin/events?provider=beta');
    expect((byProvider.json.events as { systemUser: string }[]).every((e) => e.systemUser === 'beta')).toBe(true);
    expect((byProvider.json.events as unknown[]).length).toBe(2);
    const both = await api('GET', '/admin/events?provider=beta&dominio=BB111BB');
    expect((both.json.events as { dominio: string }[]).map((e) => e.dominio)).toEqual(['BB111BB']);
    const byDominio = await api('GET', '/admin/events?dominio=AB123CD');
    expect((byDominio.json.events as unknown[]).length).toBe(1);
    const limited = await api('GET', '/admin/events?limit=1');
    expect((limited.json.events as { dominio: string }[]).map((e) => e.dominio)).toEqual(['CC222CC']);
    const none = await api('GET', '/admin/events?provider=nobody');
    expect(none.json).toEqual({ events: [], nextBeforeId: null });
    const max = await api('GET', '/admin/events?limit=1000');
    expect(max.status).toBe(200);
  });

  it('answers 400 for a bad limit or an unknown parameter', async () => {
    for (const q of ['limit=0', 'limit=1001', 'limit=abc', 'limit=-1', 'limit=1.5']) {
      const res = await api('GET', `/admin/events?${q}`);
      expect(res.status).toBe(400);
      expect(res.json.field).toBe('limit');
    }
    const unknown = await api('GET', '/admin/events?user=beta');
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toMatch(/Unknown query parameter "user"/);
    expect((await api('GET', '/admin/events', { token: null })).status).toBe(401);
  });
});

describe('resolveAdminToken', () => {
  it('prefers ADMIN_TOKEN', async () => {
    const dir = tempDir();
    const cfg = loadConfig({ DATA_DIR: dir, ADMIN_TOKEN: 'from-env' });
    expect(await resolveAdminToken(cfg)).toEqual({ token: 'from-env', generated: false, path: null });
    expect(fs.existsSync(path.join(dir, 'admin-token'))).toBe(false);
  });

  it('generates a token once, mode 0600, and reuses it', async () => {
    const dir = path.join(tempDir(), 'nested', 'data');
    const cfg = loadConfig({ DATA_DIR: dir });
    const first = await resolveAdminToken(cfg);
    expect(first.generated).toBe(true);
    expect(first.path).toBe(path.join(dir, 'admin-token'));
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(first.token, 'base64url').length).toBe(32);
    const stat = fs.statSync(path.join(dir, 'admin-token'));
    expect(stat.mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(path.join(dir, 'admin-token'), 'utf8').trim()).toBe(first.token);
    expect(fs.readdirSync(dir)).toEqual(['admin-token']);

    const second = await resolveAdminToken(cfg);
    expect(second).toEqual({ token: first.token, generated: false, path: first.path });
  });

  it('reads an operator-written file and agrees under concurrent first starts', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'admin-token'), '  hand-made-token\n', { mode: 0o600 });
    expect(await resolveAdminToken(loadConfig({ DATA_DIR: dir }))).toMatchObject({ token: 'hand-made-token', generated: false });

    const fresh = tempDir();
    const results = await Promise.all(Array.from({ length: 8 }, () => resolveAdminToken(loadConfig({ DATA_DIR: fresh }))));
    expect(new Set(results.map((r) => r.token)).size).toBe(1);
    expect(results.filter((r) => r.generated).length).toBe(1);
  });

  it('refuses an empty token file', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'admin-token'), '\n');
    await expect(resolveAdminToken(loadConfig({ DATA_DIR: dir }))).rejects.toThrow(/empty/);
  });
});

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], options: { input?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  // The caller's admin settings left out: the CLI sees only what the test passes.
  const { ADMIN_URL, ADMIN_TOKEN, ADMIN_HOST, ADMIN_PORT, DATA_DIR, ...env } = process.env;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/admin.ts', '--json', ...args], {
      cwd: ROOT,
      env: { ...env, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      responses.push(stdout, stderr);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

describe('CLI', { timeout: 60_000 }, () => {
  const conn = (): string[] => ['--url', server.url, '--token', TOKEN];

  it('creates a provider, queues a command and lists it', async () => {
    const created = await cli([...conn(), 'providers', 'create', 'cli-user', '--password', 'cli-secret-9', '--time-zone', 'UTC']);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ systemUser: 'cli-user', enabled: true, timeZone: 'UTC' });
    expect(created.stdout).toContain('\n  "systemUser"'); // pretty

    const queued = await cli([...conn(), 'commands', 'queue', 'cli-user', '--cmd', 'CC', '--unidad', 'AB123CD', '--equipo', '42']);
    expect(queued.code).toBe(0);
    const command = JSON.parse(queued.stdout) as { numero: number; state: string; equipo: string };
    expect(command.state).toBe('pending');
    expect(command.equipo).toBe('42');

    const listed = await cli(['commands', 'list', 'cli-user', ...conn()]);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { commands: { numero: number }[] }).commands.map((c) => c.numero)).toEqual([command.numero]);
  });

  it('exits 1 with the API error on stderr', async () => {
    const dup = await cli([...conn(), 'providers', 'create', 'cli-user', '--password', 'cli-secret-9']);
    expect(dup.code).toBe(1);
    expect(dup.stdout).toBe('');
    expect(dup.stderr).toContain('Provider "cli-user" already exists.');
    expect(dup.stderr).toContain('409');

    const wrongToken = await cli(['--url', server.url, '--token', 'wrong', 'providers', 'list']);
    expect(wrongToken.code).toBe(1);
    expect(wrongToken.stderr).toMatch(/401.*bearer token/);
  });

  it('says so when the server is unreachable', async () => {
    const down = await cli(['--url', 'http://127.0.0.1:9', '--token', TOKEN, 'providers', 'list']);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/Cannot reach the admin API at http:\/\/127\.0\.0\.1:9/);
  });

  it('reads the password from stdin, the URL and token from the environment, and manages trips', async () => {
    const tokenDir = tempDir();
    fs.writeFileSync(path.join(tokenDir, 'admin-token'), `${TOKEN}\n`);
    const env = { ADMIN_URL: server.url, DATA_DIR: tokenDir };
    const updated = await cli(['providers', 'update', 'cli-user', '--password', '-', '--disable', '--no-time-zone', '--require-registered'], {
      input: 'stdin-secret-7\n',
      env,
    });
    expect(updated.stderr).toBe('');
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ enabled: false, timeZone: null, requireRegisteredVehicles: true });
    expect(await verifyPassword('stdin-secret-7', (await backends.providers.get('cli-user'))?.passwordHash ?? '')).toBe(true);

    const added = await cli(['trip', 'add', 'cli-user', 'AA 123 BB', '--nro-serie', 'SN-77'], { env });
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ dominio: 'AA 123 BB', nroSerie: 'SN-77' });
    const removed = await cli(['trip', 'remove', 'cli-user', 'AA 123 BB'], { env });
    expect(removed.code).toBe(0);
    const removedAgain = await cli(['trip', 'remove', 'cli-user', 'AA 123 BB'], { env });
    expect(removedAgain.code).toBe(1);
    expect(removedAgain.stderr).toMatch(/404.*not on a trip/);

    const health = await cli(['health'], { env: { ADMIN_URL: server.url } });
    expect(health.code).toBe(0);
    expect(JSON.parse(health.stdout)).toMatchObject({ alive: true, ready: true });

    const events = await cli(['events', '--provider', 'beta', '--limit', '1'], { env });
    expect(events.code).toBe(0);
    expect((JSON.parse(events.stdout) as { events: unknown[] }).events).toHaveLength(1);
  });
});

describe('secrets', () => {
  it('never returns or logs a password or a hash', () => {
    expect(responses.length).toBeGreaterThan(50);
    const all = responses.join('\n');
    const logs = logLines.join('');
    expect(logs.length).toBeGreaterThan(0);
    for (const password of PASSWORDS) {
      expect(all).not.toContain(password);
      expect(logs).not.toContain(password);
    }
    expect(all).not.toContain('scrypt$');
    expect(logs).not.toContain('scrypt$');
    expect(all).not.toContain('passwordHash');
  });
});
