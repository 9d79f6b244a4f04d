/**
 * Identities and the audit trail in the scale-out mode: gateways on the real Redis and Kafka share
 * every token, every audit entry and every token-guess count. A revocation on one gateway is in
 * force on the other within a second; a gateway killed (SIGKILL) in the middle of a burst of admin
 * calls loses none of the entries of the calls it answered.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/paths.js';
import { makeGuard } from '../../shared/backends/redis/connection.js';
import { RedisAuditStore } from '../../shared/backends/redis/audit.js';
import { OperatorKeys } from '../../shared/backends/redis/keys.js';
import { TestApp } from '../helpers/harness.js';
import { services, uniqueName } from '../helpers/services.js';
import { openSse } from '../helpers/sse.js';
import { auditRecord } from '../helpers/store-contract-access.js';

const ROOT = REPO;
const REVOKED_WITHIN_MS = 1000;
type Json = Record<string, unknown>;

const s = services();
const env: Record<string, string> = {
  REDIS_URL: s.redisUrl,
  REDIS_KEY_PREFIX: `${uniqueName('access')}:`,
  KAFKA_BROKERS: s.kafkaBrokers.join(','),
  KAFKA_TOPIC: uniqueName('access-events'),
  KAFKA_GROUP_ID: uniqueName('access-worker'),
  APPEND_TIMEOUT_MS: '3000',
  LOCKOUT_MAX_FAILURES: '3',
};

let gw1: TestApp;
let gw2: TestApp;
let redis: Redis;
const children: ChildProcess[] = [];

async function call(gw: TestApp | string, method: string, urlPath: string, token: string | null, body?: unknown): Promise<{ status: number; json: Json; requestId: string | null }> {
  const base = typeof gw === 'string' ? gw : gw.app.admin.url;
  const res = await fetch(`${base}${urlPath}`, {
    method,
    headers: { ...(token === null ? {} : { Authorization: `Bearer ${token}` }), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Json), requestId: res.headers.get('x-request-id') };
}

async function newToken(gw: TestApp, name: string, role: string): Promise<string> {
  const created = await call(gw, 'POST', '/admin/tokens', gw.app.adminToken, { name, role });
  expect(created.status).toBe(201);
  return created.json.token as string;
}

/** `main.ts` as `npm start` runs it, on the same Redis and Kafka: its admin URL once it is listening. */
function startGatewayProcess(): Promise<{ child: ChildProcess; adminUrl: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', ADMIN_TOKEN: 'killed-gateway', GATEWAY_THREADS: '1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no start line within 60 s:\n${out}`)), 60_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.includes('"admin"') && l.includes('"service"'));
      if (line === undefined) return;
      clearTimeout(timer);
      resolve({ child, adminUrl: (JSON.parse(line) as { admin: string }).admin });
    });
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => reject(new Error(`exited with ${code}:\n${out}`)));
  });
}

beforeAll(async () => {
  gw1 = await TestApp.start(env);
  gw2 = await TestApp.start(env);
  redis = new Redis(s.redisUrl, { lazyConnect: true });
  await redis.connect();
}, 120_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await gw1?.stop();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- as above
  await gw2?.stop();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- as above
  redis?.disconnect();
});

describe('operator tokens across gateways', () => {
  it('a token issued on one gateway works on the other at once, and its last use is seen by both', async () => {
    const token = await newToken(gw2, 'ana', 'operator');
    expect((await call(gw1, 'GET', '/admin/whoami', token)).json).toMatchObject({ identity: 'ana', role: 'operator' });
    const listed = ((await call(gw2, 'GET', '/admin/tokens', gw2.app.adminToken)).json.tokens as Json[]).find((t) => t.name === 'ana');
    expect(listed).toMatchObject({ role: 'operator', createdBy: 'bootstrap', lastUsedAt: new Date(gw1.now).toISOString() });
    // Only its hash is in Redis.
    const keys = await redis.keys(`${env.REDIS_KEY_PREFIX}*`);
    for (const key of keys) {
      const type = await redis.type(key);
      const dump = type === 'hash' ? JSON.stringify(await redis.hgetall(key)) : type === 'string' ? ((await redis.get(key)) ?? '') : '';
      expect(dump.includes(token), key).toBe(false);
    }
  });

  it(`a token revoked on one gateway is refused by the other within ${REVOKED_WITHIN_MS} ms`, async () => {
    const token = await newToken(gw1, 'leaver', 'viewer');
    expect((await call(gw2, 'GET', '/admin/overview', token)).status).toBe(200);
    expect((await call(gw1, 'DELETE', '/admin/tokens/leaver', gw1.app.adminToken)).status).toBe(204);
    const revokedAt = performance.now();
    let status = 200;
    let elapsed = 0;
    while (status === 200 && elapsed < 5 * REVOKED_WITHIN_MS) {
      status = (await call(gw2, 'GET', '/admin/overview', token)).status;
      elapsed = performance.now() - revokedAt;
    }
    console.log(`revocation in force on the second gateway ${elapsed.toFixed(1)} ms after the first answered`);
    expect(status).toBe(401);
    expect(elapsed).toBeLessThan(REVOKED_WITHIN_MS);
  });

  it(`a live event stream opened with a token on one gateway ends within ${REVOKED_WITHIN_MS} ms of its revocation on the other`, async () => {
    const token = await newToken(gw1, 'watcher', 'viewer');
    const bootstrapStream = await openSse(`${gw2.app.admin.url}/admin/events/stream`, gw2.app.adminToken);
    const stream = await openSse(`${gw2.app.admin.url}/admin/events/stream`, token);
    expect(stream.status).toBe(200);
    expect((await call(gw1, 'DELETE', '/admin/tokens/watcher', gw1.app.adminToken)).status).toBe(204);
    const revokedAt = performance.now();
    const ended = await Promise.race([stream.ended.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 3 * REVOKED_WITHIN_MS))]);
    const elapsed = performance.now() - revokedAt;
    console.log(`live stream of the revoked token ended ${elapsed.toFixed(0)} ms after the revocation`);
    expect(ended).toBe(true);
    expect(elapsed).toBeLessThan(REVOKED_WITHIN_MS);
    // Another identity's stream goes on.
    expect(gw2.app.admin.liveStreams).toBe(1);
    bootstrapStream.close();
  });
});

describe('the audit trail across gateways', () => {
  it('is one trail: entries written by either gateway, in one sequence, read on both', async () => {
    const operator = await newToken(gw1, 'ops', 'operator');
    await gw1.provider('acme', 'secret-1');
    const numeros: number[] = [];
    for (const gw of [gw1, gw2, gw1, gw2]) {
      const queued = await call(gw, 'POST', '/admin/providers/acme/commands', operator, { cmd: 'CC', unidad: 'AB1', equipo: 'E1' });
      expect(queued.status).toBe(201);
      numeros.push(queued.json.numero as number);
    }
    for (const gw of [gw1, gw2]) {
      const entries = (await call(gw, 'GET', '/admin/providers/acme/audit?identity=ops', operator)).json.entries as Json[];
      expect(entries.map((e) => e.target)).toEqual(numeros.map((n) => `provider/acme/command/${n}`).reverse());
      const ids = entries.map((e) => e.id as number);
      expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    }
  });

  it('warns at start when Redis runs without AOF (the test Redis does), since a Redis restart would lose the trail', () => {
    expect(gw1.logs.join('')).toContain('Redis runs without AOF');
  });

  it('SIGKILL of a gateway during a burst of admin calls: every call it answered has its entry, read through another gateway', { timeout: 180_000 }, async () => {
    const token = await newToken(gw1, 'burst', 'operator');
    const { child, adminUrl } = await startGatewayProcess();
    const answered = new Map<string, number>();
    let killed = false;
    const client = async () => {
      while (!killed) {
        try {
          const res = await call(adminUrl, 'POST', '/admin/providers/acme/commands', token, { cmd: 'CB', unidad: 'AB2', equipo: 'E2' });
          if (res.status === 201 && res.requestId !== null) answered.set(res.requestId, res.json.numero as number);
        } catch {
          return; // the gateway is gone
        }
      }
    };
    const clients = Array.from({ length: 8 }, client);
    while (answered.size < 150) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGKILL');
    killed = true;
    await Promise.all(clients);
    const kept = new Map<string, Json>();
    let before: number | null = null;
    do {
      const page = await call(gw2, 'GET', `/admin/audit?identity=burst&limit=1000${before === null ? '' : `&before=${before}`}`, gw2.app.adminToken);
      for (const e of page.json.entries as Json[]) kept.set(e.requestId as string, e);
      before = page.json.nextBefore as number | null;
    } while (before !== null);
    console.log(`${answered.size} calls answered before the kill, ${kept.size} entries stored`);
    for (const [requestId, numero] of answered) {
      expect(kept.get(requestId), requestId).toMatchObject({ outcome: 'ok', status: 201, target: `provider/acme/command/${numero}`, route: 'POST /admin/providers/:systemUser/commands' });
    }
  });
});

describe('the Redis audit store', () => {
  it('keeps at most its cap, and an entry dropped leaves no index behind', async () => {
    const prefix = `${uniqueName('audit-cap')}:`;
    const store = new RedisAuditStore(redis, new OperatorKeys(prefix), makeGuard('test'), 5);
    const T0 = Date.UTC(2024, 0, 1);
    for (let i = 0; i < 8; i++) await store.append(auditRecord(T0 + i, { identity: `who-${i}`, target: `provider/p${i}` }));
    const k = new OperatorKeys(prefix);
    expect(await redis.zcard(k.audit('all'))).toBe(5);
    expect((await store.page({ limit: 10 })).entries.map((e) => e.identity)).toEqual(['who-7', 'who-6', 'who-5', 'who-4', 'who-3']);
    expect(await redis.exists(k.audit('identity:who-0'), k.audit('scope:provider/p0'))).toBe(0);
    expect(await store.expire(T0 + 100, 100)).toBe(5);
    expect((await redis.keys(`${prefix}*`)).sort()).toEqual([k.audit('seq')]);
  });
});

describe('token guesses across gateways', () => {
  it('are counted together: three wrong tokens spread over both lock the address out of both', async () => {
    // A window of its own: the revoked token's refusal above counted too.
    gw1.advance(16 * 60_000);
    gw2.advance(16 * 60_000);
    expect((await call(gw1, 'GET', '/admin/overview', 'wrong-1')).status).toBe(401);
    expect((await call(gw2, 'GET', '/admin/overview', 'wrong-2')).status).toBe(401);
    expect((await call(gw1, 'GET', '/admin/overview', 'wrong-3')).status).toBe(429);
    expect((await call(gw2, 'GET', '/admin/overview', gw2.app.adminToken)).status).toBe(429);
    // The lock ends with LOCKOUT_MINUTES on either gateway's clock.
    gw2.advance(15 * 60_000 + 1);
    expect((await call(gw2, 'GET', '/admin/overview', gw2.app.adminToken)).status).toBe(200);
  });
});
