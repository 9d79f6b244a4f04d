/**
 * Identities, roles and the audit trail on the real admin server (embedded mode), driven from the
 * route table derived from the routes' declarations (gateway/admin/roles.ts): every route called as every role, every mutating route
 * checked for its audit entry, tokens issued, used, expired and revoked, token guesses locked out.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../shared/backends/operators.js';
import { openEmbeddedBackends, type EmbeddedBackends } from '../../shared/backends/embedded/index.js';
import { loadConfig } from '../../shared/config/index.js';
import { hashPassword } from '../../shared/domain/passwords.js';
import { startAdminServer, type AdminServer } from '../../gateway/admin/server.js';
import { isMutating } from '../../gateway/admin/roles.js';
import { ROUTE_TABLE } from '../helpers/admin-routes.js';
import { eventRecords } from '../helpers/event-records.js';
import { openSse } from '../helpers/sse.js';

const T0 = Date.UTC(2026, 10, 27, 10, 0, 0);
const BOOTSTRAP = 'bootstrap-token-of-the-test';
const MINUTE = 60_000;
const ROLE_LIST: readonly Role[] = ['viewer', 'operator', 'admin'];
const RANK: Record<Role | 'public', number> = { public: 0, viewer: 1, operator: 2, admin: 3 };
const PASSWORDS = ['acme-secret-1', 'acme-secret-2', 'imported-pw-3'];

type Json = Record<string, unknown>;
interface Result {
  status: number;
  json: Json;
  text: string;
}

const cleanups: (() => Promise<void> | void)[] = [];
const logLines: string[] = [];
const answers: string[] = [];
let now = T0;

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'admin-roles-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function start(env: Record<string, string> = {}): Promise<{ server: AdminServer; backends: EmbeddedBackends }> {
  const dataDir = tempDir();
  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_PORT: '0', ...env });
  const backends = await openEmbeddedBackends({ dataDir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 600_000, now: () => now });
  const capture = new Writable({
    write(chunk: Buffer, _e, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = pino({ level: 'info' }, capture);
  const server = await startAdminServer({ config, backends, logger, token: BOOTSTRAP, clock: () => now, port: 0 });
  cleanups.push(() => backends.close(), () => server.close());
  return { server, backends };
}

let server: AdminServer;
let backends: EmbeddedBackends;
/** A named token per role, created through the API as the bootstrap administrator. */
const tokens = {} as Record<Role, string>;

async function call(method: string, urlPath: string, token: string | null, body?: unknown, base = server.url): Promise<Result> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const abort = new AbortController();
  const res = await fetch(`${base}${urlPath}`, { method, headers, signal: abort.signal, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  // The live stream would never end: its head is the answer.
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    abort.abort();
    return { status: res.status, json: {}, text: '' };
  }
  const text = await res.text();
  answers.push(text);
  const json = (res.headers.get('content-type') ?? '').includes('json') && text !== '' ? (JSON.parse(text) as Json) : {};
  return { status: res.status, json, text };
}

const latestAudit = async (): Promise<Json> => ((await call('GET', '/admin/audit?limit=1', BOOTSTRAP)).json.entries as Json[])[0] ?? {};

/** A path for a route key: parameters filled with values that exist or, for the destructive ones, that do not. */
function samplePath(key: string): string {
  const values: Record<string, string> = { systemUser: 'acme', numero: '999999', dominio: 'NOPE1', id: '0-1', name: 'nobody' };
  return key
    .split(' ')[1]!
    .split('/')
    .map((p) => (p.startsWith(':') ? values[p.slice(1)]! : p))
    .join('/');
}

beforeAll(async () => {
  ({ server, backends } = await start());
  await backends.providers.create({
    systemUser: 'acme',
    passwordHash: await hashPassword(PASSWORDS[0]!),
    enabled: true,
    timeZone: null,
    requireRegisteredVehicles: false,
    createdAt: T0,
    updatedAt: T0,
  });
  await backends.eventLog.append([eventRecords({ eventTimeBase: T0, stepMs: 1000, receivedAt: T0, dedupePrefix: 'roles-' })({ systemUser: 'acme' })]);
  for (const role of ROLE_LIST) {
    const created = await call('POST', '/admin/tokens', BOOTSTRAP, { name: `${role}-ana`, role });
    expect(created.status).toBe(201);
    tokens[role] = created.json.token as string;
  }
});

afterAll(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

describe('the route table', () => {
  it.each(ROLE_LIST)('a %s may call exactly the routes its role allows; every other one is 403 naming the role needed, and audited', async (role) => {
    const refusedBefore = (await call('GET', `/admin/audit?identity=${role}-ana&limit=1000`, BOOTSTRAP)).json.entries as Json[];
    let refusals = 0;
    for (const [key, need] of ROUTE_TABLE) {
      const [method] = key.split(' ');
      const body = method === 'GET' || method === 'DELETE' ? undefined : {};
      const res = await call(method!, samplePath(key), tokens[role], body);
      if (RANK[role] >= RANK[need]) {
        // Let in: the handler answered (its own 200, 204, 400 or 404), never the role check.
        expect([401, 403, 405, 429], `${role} ${key}: ${res.text}`).not.toContain(res.status);
      } else {
        refusals++;
        expect(res.status, `${role} ${key}`).toBe(403);
        expect(res.json.requiredRole, key).toBe(need);
        expect(res.json.error, key).toContain(`needs the ${need} role`);
        const entry = await latestAudit();
        expect(entry).toMatchObject({ route: key, identity: `${role}-ana`, role, outcome: 'refused', status: 403 });
      }
    }
    expect(refusals).toBe([...ROUTE_TABLE.values()].filter((need) => RANK[need] > RANK[role]).length);
    const refusedAfter = (await call('GET', `/admin/audit?identity=${role}-ana&limit=1000`, BOOTSTRAP)).json.entries as Json[];
    expect(refusedAfter.filter((e) => e.outcome === 'refused').length - refusedBefore.filter((e) => e.outcome === 'refused').length).toBe(refusals);
  });

  it('answers every route but the probes 401 without a token, and records nothing for it', async () => {
    const before = await latestAudit();
    for (const [key, need] of ROUTE_TABLE) {
      const res = await call(key.split(' ')[0]!, samplePath(key), null);
      expect(res.status, key).toBe(need === 'public' ? 200 : 401);
    }
    expect((await latestAudit()).id).toBe(before.id);
  });

  it('whoami names the identity, its role and the routes it may call', async () => {
    const me = await call('GET', '/admin/whoami', tokens.operator);
    expect(me.json).toMatchObject({ identity: 'operator-ana', role: 'operator', kind: 'token', expiresAt: null });
    const routes = me.json.routes as string[];
    expect(routes).toContain('POST /admin/providers/:systemUser/commands');
    expect(routes).not.toContain('PATCH /admin/providers/:systemUser');
    expect((await call('GET', '/admin/whoami', BOOTSTRAP)).json).toMatchObject({ identity: 'bootstrap', role: 'admin', kind: 'bootstrap' });
  });
});

/**
 * One call per mutating route that succeeds (or, where this mode has nothing to act on, fails as
 * it must), in an order that leaves each the state it needs. A mutating route added to the table
 * without an entry here fails the first test below.
 */
const MUTATIONS: { key: string; path: string; body?: unknown; status: number; target: string | null; changes?: string[] }[] = [
  { key: 'POST /admin/providers', path: '/admin/providers', body: { systemUser: 'bravo', password: PASSWORDS[1] }, status: 201, target: 'provider/bravo', changes: ['systemUser', 'password'] },
  { key: 'PATCH /admin/providers/:systemUser', path: '/admin/providers/bravo', body: { password: PASSWORDS[2], enabled: false }, status: 200, target: 'provider/bravo', changes: ['password', 'enabled'] },
  { key: 'POST /admin/providers/:systemUser/commands', path: '/admin/providers/bravo/commands', body: { cmd: 'CC', unidad: 'AB1', equipo: 'E1' }, status: 201, target: 'provider/bravo/command/1', changes: ['cmd', 'unidad', 'equipo'] },
  { key: 'POST /admin/providers/:systemUser/commands/:numero/cancel', path: '/admin/providers/bravo/commands/1/cancel', status: 200, target: 'provider/bravo/command/1' },
  { key: 'PUT /admin/providers/:systemUser/trip/vehicles/:dominio', path: '/admin/providers/bravo/trip/vehicles/AB%2F1', body: { nroSerie: 'S1' }, status: 201, target: 'provider/bravo/vehicle/AB%2F1', changes: ['nroSerie'] },
  { key: 'DELETE /admin/providers/:systemUser/trip/vehicles/:dominio', path: '/admin/providers/bravo/trip/vehicles/AB%2F1', status: 204, target: 'provider/bravo/vehicle/AB%2F1' },
  { key: 'DELETE /admin/providers/:systemUser/lockouts', path: '/admin/providers/bravo/lockouts', status: 204, target: 'provider/bravo' },
  { key: 'POST /admin/import/providers', path: '/admin/import/providers', body: { providers: [{ line: 2, systemUser: 'carla', password: PASSWORDS[2] }] }, status: 200, target: 'import/providers', changes: ['systemUser', 'password'] },
  { key: 'POST /admin/import/trips', path: '/admin/import/trips', body: { trips: [{ line: 2, systemUser: 'carla', dominio: 'CC1', nroSerie: 'S' }] }, status: 200, target: 'import/trips', changes: ['systemUser', 'dominio', 'nroSerie'] },
  { key: 'POST /admin/tokens', path: '/admin/tokens', body: { name: 'temp', role: 'viewer' }, status: 201, target: 'token/temp', changes: ['name', 'role'] },
  { key: 'DELETE /admin/tokens/:name', path: '/admin/tokens/temp', status: 204, target: 'token/temp' },
  // The embedded mode sets no message aside: both answer 404, and are recorded all the same.
  { key: 'POST /admin/poison/:id/redrive', path: '/admin/poison/0-1/redrive', status: 404, target: 'poison/0-1' },
  { key: 'DELETE /admin/poison/:id', path: '/admin/poison/0-1', status: 404, target: 'poison/0-1' },
  { key: 'DELETE /admin/providers/:systemUser', path: '/admin/providers/bravo?confirm=bravo', status: 200, target: 'provider/bravo' },
];

describe('the audit trail', () => {
  it('has a call for every mutating route of the table', () => {
    const mutating = [...ROUTE_TABLE.keys()].filter((k) => isMutating(k.split(' ')[0]!));
    expect(MUTATIONS.map((m) => m.key).sort()).toEqual([...mutating].sort());
  });

  it('records every mutating call: who, role, address, route, target, outcome and the field names sent, before answering', async () => {
    for (const m of MUTATIONS) {
      now += 1000;
      const res = await call(m.key.split(' ')[0]!, m.path, tokens.admin, m.body);
      expect(res.status, `${m.key}: ${res.text}`).toBe(m.status);
      const entry = await latestAudit();
      expect(entry, m.key).toMatchObject({
        at: new Date(now).toISOString(),
        identity: 'admin-ana',
        role: 'admin',
        address: expect.stringMatching(/127\.0\.0\.1/) as unknown,
        method: m.key.split(' ')[0],
        route: m.key,
        target: m.target,
        status: m.status,
        outcome: m.status < 400 ? 'ok' : 'failed',
        changes: m.changes ?? [],
      });
      expect(typeof entry.requestId).toBe('string');
    }
  });

  it('says what came of it where the route does (a deleted provider, an import)', async () => {
    const deleted = ((await call('GET', '/admin/audit?target=provider/bravo&limit=1', BOOTSTRAP)).json.entries as Json[])[0];
    expect(deleted).toMatchObject({ route: 'DELETE /admin/providers/:systemUser', detail: { sessionsEnded: 0, commandsCancelled: 0, tripVehiclesRemoved: 0 } });
    const imported = ((await call('GET', '/admin/audit?target=import/providers&limit=1', BOOTSTRAP)).json.entries as Json[])[0];
    expect(imported).toMatchObject({ detail: { lines: 1, created: 1, updated: 0, unchanged: 0, failed: 0 } });
  });

  it("gives a provider's history, its commands and vehicles included, to an operator; filters by identity and time; pages", async () => {
    const history = await call('GET', '/admin/providers/bravo/audit', tokens.operator);
    expect(history.status).toBe(200);
    const routes = (history.json.entries as Json[]).map((e) => e.route);
    expect(routes).toEqual(MUTATIONS.filter((m) => m.target?.startsWith('provider/bravo') === true).map((m) => m.key).reverse());
    const byIdentity = (await call('GET', '/admin/audit?identity=admin-ana&limit=1000', BOOTSTRAP)).json.entries as Json[];
    // Newest first: these calls, then the route-table walk's.
    expect(byIdentity.slice(0, MUTATIONS.length).map((e) => e.route)).toEqual(MUTATIONS.map((m) => m.key).reverse());
    expect(byIdentity.every((e) => e.identity === 'admin-ana')).toBe(true);
    const since = new Date(now - 1000).toISOString();
    expect(((await call('GET', `/admin/audit?since=${since}&identity=admin-ana`, BOOTSTRAP)).json.entries as Json[]).map((e) => e.route)).toEqual([
      MUTATIONS.at(-1)!.key,
      MUTATIONS.at(-2)!.key,
    ]);
    const pages: unknown[] = [];
    let before: number | null = null;
    do {
      const page = await call('GET', `/admin/audit?identity=admin-ana&limit=4${before === null ? '' : `&before=${before}`}`, BOOTSTRAP);
      pages.push(...(page.json.entries as Json[]).map((e) => e.id));
      before = page.json.nextBefore as number | null;
    } while (before !== null);
    expect(pages).toEqual(byIdentity.map((e) => e.id));
    for (const bad of ['limit=0', 'before=x', 'since=yesterday', 'unknown=1']) expect((await call('GET', `/admin/audit?${bad}`, BOOTSTRAP)).status, bad).toBe(400);
  });

  it('reads are not recorded', async () => {
    const before = await latestAudit();
    for (const p of ['/admin/providers', '/admin/overview', '/admin/tokens', '/admin/events']) expect((await call('GET', p, tokens.admin)).status).toBe(200);
    expect((await latestAudit()).id).toBe(before.id);
  });

  it('is written to the log as structured lines, and no answer or line ever holds a password, a token or a hash', async () => {
    const lines = logLines.filter((l) => l.includes('"msg":"admin audit"')).map((l) => JSON.parse(l) as { audit: Json; stored: boolean });
    expect(lines.length).toBeGreaterThan(MUTATIONS.length);
    expect(lines.find((l) => l.audit.route === 'PATCH /admin/providers/:systemUser' && l.audit.status === 200)).toMatchObject({ stored: true, audit: { identity: 'admin-ana', changes: ['password', 'enabled'] } });
    const secrets = [...PASSWORDS, ...Object.values(tokens), BOOTSTRAP, ...(await backends.operators.tokens.list()).map((t) => t.tokenHash)];
    for (const p of await backends.providers.list()) secrets.push(p.passwordHash);
    const everything = [...logLines, ...answers.slice(ROLE_LIST.length)].join('\n');
    for (const secret of secrets) expect(everything.includes(secret), 'a secret leaked').toBe(false);
  });
});

describe('operator tokens', () => {
  it('lists name, role, creator, last use and expiry, never the token or its hash', async () => {
    const list = await call('GET', '/admin/tokens', BOOTSTRAP);
    const viewer = (list.json.tokens as Json[]).find((t) => t.name === 'viewer-ana');
    expect(viewer).toEqual({ name: 'viewer-ana', role: 'viewer', createdAt: new Date(T0).toISOString(), createdBy: 'bootstrap', expiresAt: null, expired: false, lastUsedAt: expect.any(String) as unknown });
  });

  it('refuses a bad name, a taken one, the bootstrap name, an unknown role and a past expiry', async () => {
    const bad: [unknown, string][] = [
      [{ name: 'a b', role: 'viewer' }, 'name'],
      [{ name: 'viewer-ana', role: 'viewer' }, 'name'],
      [{ name: 'Bootstrap', role: 'admin' }, 'name'],
      [{ name: 'x', role: 'root' }, 'role'],
      [{ name: 'x', role: 'viewer', expiresAt: new Date(now - 1).toISOString() }, 'expiresAt'],
      [{ name: 'x', role: 'viewer', token: 'chosen' }, 'token'],
    ];
    for (const [body, field] of bad) {
      const res = await call('POST', '/admin/tokens', BOOTSTRAP, body);
      expect([400, 409], JSON.stringify(body)).toContain(res.status);
      expect(res.json.field, JSON.stringify(body)).toBe(field);
    }
    expect((await call('DELETE', '/admin/tokens/bootstrap', BOOTSTRAP)).status).toBe(404);
  });

  it('stops working at its expiry, and a revoked one at once; both refusals are audited', async () => {
    const created = await call('POST', '/admin/tokens', tokens.admin, { name: 'short', role: 'operator', expiresAt: new Date(now + 10 * MINUTE).toISOString() });
    expect(created.json).toMatchObject({ name: 'short', createdBy: 'admin-ana', expired: false });
    const token = created.json.token as string;
    expect(token).toMatch(/^gwo_[A-Za-z0-9_-]{43}$/);
    expect((await call('GET', '/admin/whoami', token)).json).toMatchObject({ identity: 'short', expiresAt: new Date(now + 10 * MINUTE).toISOString() });
    now += 10 * MINUTE;
    expect((await call('GET', '/admin/overview', token)).status).toBe(401);
    expect(await latestAudit()).toMatchObject({ identity: null, outcome: 'refused', status: 401, route: 'GET /admin/overview', detail: { reason: 'expired', token: 'short' } });
    expect(((await call('GET', '/admin/tokens', BOOTSTRAP)).json.tokens as Json[]).find((t) => t.name === 'short')).toMatchObject({ expired: true });

    const other = (await call('POST', '/admin/tokens', BOOTSTRAP, { name: 'leaver', role: 'viewer' })).json.token as string;
    expect((await call('GET', '/admin/overview', other)).status).toBe(200);
    expect((await call('DELETE', '/admin/tokens/leaver', tokens.admin)).status).toBe(204);
    expect((await call('GET', '/admin/overview', other)).status).toBe(401);
    expect(await latestAudit()).toMatchObject({ identity: null, outcome: 'refused', detail: { reason: 'unknown' } });
  });
});

describe('live streams', () => {
  it("end when their token expires, while the bootstrap administrator's stream goes on", async () => {
    const token = (await call('POST', '/admin/tokens', BOOTSTRAP, { name: 'watcher', role: 'viewer', expiresAt: new Date(now + MINUTE).toISOString() })).json.token as string;
    const kept = await openSse(`${server.url}/admin/events/stream`, BOOTSTRAP);
    const stream = await openSse(`${server.url}/admin/events/stream`, token);
    expect(server.liveStreams).toBe(2);
    now += 2 * MINUTE;
    const ended = await Promise.race([stream.ended.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 3000))]);
    expect(ended).toBe(true);
    expect(server.liveStreams).toBe(1);
    kept.close();
  });
});

describe('token guesses', () => {
  it('locks an address out after LOCKOUT_MAX_FAILURES wrong tokens: even the right token is refused until the lock ends', async () => {
    const own = await start({ LOCKOUT_MAX_FAILURES: '3', LOCKOUT_MINUTES: '5' });
    const at = (p: string, token: string | null) => call('GET', p, token, undefined, own.server.url);
    expect((await at('/admin/overview', 'wrong-1')).status).toBe(401);
    expect((await at('/admin/overview', 'gwo_wrong-2')).status).toBe(401);
    // A request without a token is no guess.
    expect((await at('/admin/overview', null)).status).toBe(401);
    const third = await at('/admin/overview', 'wrong-3');
    expect(third.status).toBe(429);
    expect((await at('/admin/overview', BOOTSTRAP)).status).toBe(429);
    const trail = (await own.backends.operators.audit.page({ limit: 10 })).entries;
    // Three guesses recorded, the last with the lock; the refusals while locked are not (they cannot flood the trail).
    expect(trail.map((e) => [e.outcome, e.status])).toEqual([
      ['refused', 429],
      ['refused', 401],
      ['refused', 401],
    ]);
    expect(trail[0]?.detail).toMatchObject({ reason: 'unknown', lockedUntil: new Date(now + 5 * MINUTE).toISOString() });
    now += 5 * MINUTE;
    expect((await at('/admin/overview', BOOTSTRAP)).status).toBe(200);
  });
});
