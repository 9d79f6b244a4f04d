/**
 * GATEWAY_THREADS (gateway/threads/): front ends on several threads sharing the port, the shared
 * state on the main thread. Every call here goes over a connection of its own, so the kernel
 * spreads them over the threads; each test also checks that both threads answered some of them.
 */
import os from 'node:os';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_FILE } from '../../shared/backends/embedded/index.js';
import type { EmbeddedBackends } from '../../shared/backends/embedded/index.js';
import { ConfigError, defaultGatewayThreads, loadConfig } from '../../shared/config/index.js';
import { credentials, event, sessionCookie, TestApp, xmlParams } from '../helpers/harness.js';
import { counterSum, freshSoap11, insertsAcrossClose, resultOf, servedBy } from '../helpers/threads.js';

/** Calls enough that every thread answers some (each lands on one of 2 threads at random). */
const SPREAD = 24;

const both = async (t: TestApp, operation: string): Promise<void> => {
  const { main, all } = await servedBy(t, operation);
  expect(main, `${operation} answered on the main thread`).toBeGreaterThan(0);
  expect(all - main, `${operation} answered on the other thread`).toBeGreaterThan(0);
};

const insert = (t: TestApp, overrides: Record<string, string>) =>
  freshSoap11(t, 'LoginYInsertarEvento', xmlParams({ ...credentials(), ...event(overrides) }));

describe('GATEWAY_THREADS configuration', () => {
  it('defaults to a thread per core but one, at least one; anything but 1..64 is refused by name', () => {
    expect(loadConfig({}).service.threads).toBe(Math.max(1, os.availableParallelism() - 1));
    expect([1, 2, 4, 16].map((cores) => defaultGatewayThreads(cores))).toEqual([1, 1, 3, 15]);
    expect(loadConfig({ GATEWAY_THREADS: '3' }).service.threads).toBe(3);
    for (const bad of ['0', 'two', '65', '-1']) {
      expect(() => loadConfig({ GATEWAY_THREADS: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ GATEWAY_THREADS: bad })).toThrow(/GATEWAY_THREADS/);
    }
    expect(() => loadConfig({ GATEWAY_THREAD_CLIENTS: 'many' })).toThrow(/GATEWAY_THREAD_CLIENTS must be own or shared, got "many"/);
  });
});

describe('GATEWAY_THREADS=1', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start({ GATEWAY_THREADS: '1' });
    await t.provider('acme', 'secret-1');
  });
  afterAll(() => t.stop());

  it('serves everything on the main thread, as before threads existed', async () => {
    expect(t.app.gateway.threads).toBe(1);
    expect(t.app.gateway.nativeBinaries).toHaveLength(1);
    for (let i = 0; i < 6; i++) expect(resultOf(await insert(t, { Codigo: `one-${i}` }))).toBeGreaterThan(0);
    const { main, all } = await servedBy(t, 'LoginYInsertarEvento');
    expect(main).toBe(6);
    expect(all).toBe(6);
  });
});

describe('two front-end threads, embedded store', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start({ GATEWAY_THREADS: '2', LOCKOUT_MAX_FAILURES: '3', PROVIDER_CACHE_MS: '600000' });
    await t.provider('acme', 'secret-1');
    await t.provider('locky', 'secret-1');
    await t.provider('changer', 'secret-1');
  });
  afterAll(() => t.stop());

  it('both threads load the native uWebSockets.js binary', () => {
    expect(t.app.gateway.threads).toBe(2);
    expect(t.app.gateway.nativeBinaries).toHaveLength(2);
    for (const binary of t.app.gateway.nativeBinaries) expect(binary).toMatch(/uws_linux_x64_\d+\.node$/);
  });

  it('a session opened on one thread is live on every thread', async () => {
    const cookies = await Promise.all(Array.from({ length: SPREAD }, () => freshSoap11(t, 'Login', xmlParams(credentials())).then(sessionCookie)));
    const replies = await Promise.all(
      cookies.flatMap((cookie, i) => [0, 1].map((k) => freshSoap11(t, 'InsertarEvento', xmlParams(event({ Codigo: `s-${i}-${k}` })), cookie))),
    );
    for (const reply of replies) expect(resultOf(reply)).toBeGreaterThan(0);
    await both(t, 'Login');
    await both(t, 'InsertarEvento');
    // And a Logout on any thread ends it for all.
    await freshSoap11(t, 'Logout', '', cookies[0]);
    const after = await Promise.all(Array.from({ length: 8 }, () => freshSoap11(t, 'InSession', '', cookies[0])));
    for (const reply of after) expect(reply.text).toContain('<InSessionResult>false</InSessionResult>');
  });

  it('failed logins on any thread count towards one lockout, which every thread enforces', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await freshSoap11(t, 'Login', xmlParams(credentials('locky', 'wrong')))).text).toContain('<LoginResult>false</LoginResult>');
    }
    const right = await Promise.all(Array.from({ length: SPREAD }, () => freshSoap11(t, 'Login', xmlParams(credentials('locky', 'secret-1')))));
    for (const reply of right) expect(reply.text).toContain('<LoginResult>false</LoginResult>');
    await both(t, 'Login');
    const lockouts = (await t.admin('GET', '/admin/lockouts')).json as { lockouts: { systemUser: string }[] };
    expect(lockouts.lockouts.map((l) => l.systemUser)).toContain('locky');
  });

  it('ids are unique across threads and increase call after call', async () => {
    const concurrent = await Promise.all(Array.from({ length: 60 }, (_, i) => insert(t, { Codigo: `u-${i}` })));
    const ids = concurrent.map(resultOf);
    for (const id of ids) expect(id).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(ids.length);
    let previous = Math.max(...ids);
    for (let i = 0; i < 12; i++) {
      const id = resultOf(await insert(t, { Codigo: `seq-${i}` }));
      expect(id).toBeGreaterThan(previous);
      previous = id;
    }
    await both(t, 'LoginYInsertarEvento');
  });

  it('a resend lands on any thread and gets the first id; the event is stored once', async () => {
    const copies = await Promise.all(Array.from({ length: SPREAD }, () => insert(t, { Codigo: 'resent' })));
    const ids = new Set(copies.map(resultOf));
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    expect(id).toBeGreaterThan(0);
    expect(resultOf(await insert(t, { Codigo: 'resent' }))).toBe(id);
    const stored = await t.app.backends.events.recent({ provider: 'acme', limit: 1000 });
    expect(stored.filter((e) => e.codigo === 'resent')).toHaveLength(1);
  });

  it('one committer: commits in id order, no failed commit, while every thread writes events and state', async () => {
    await t.admin('POST', '/admin/providers/acme/commands', { cmd: 'CC', unidad: 'AB123CD', equipo: '1' });
    const work = Array.from({ length: 80 }, (_, i) =>
      i % 4 === 3 ? freshSoap11(t, 'LoginYObtenerComando', xmlParams(credentials())) : insert(t, { Codigo: `c-${i}` }),
    );
    const replies = await Promise.all(work);
    for (const reply of replies) {
      expect(reply.status).toBe(200);
      if (reply.text.includes('InsertarEventoResult')) expect(resultOf(reply)).toBeGreaterThan(0);
    }
    const backends = t.app.backends as EmbeddedBackends;
    expect(backends.eventLogStats().failedCommits).toBe(0);
    const db = new Database(`${t.dataDir}/${DATABASE_FILE}`, { readonly: true });
    try {
      const rows = db.prepare<[], { id: number; stored_at: number }>('SELECT id, stored_at FROM events ORDER BY id').all();
      for (let i = 1; i < rows.length; i++) expect(rows[i]!.stored_at).toBeGreaterThanOrEqual(rows[i - 1]!.stored_at);
    } finally {
      db.close();
    }
  });

  it('the admin API sees what every thread did; /metrics adds up every thread', async () => {
    const ids = (await Promise.all(Array.from({ length: SPREAD }, (_, i) => insert(t, { Codigo: `adm-${i}` })))).map(resultOf);
    const listed = (await t.admin('GET', '/admin/events?provider=acme&limit=500')).json as { events: { id: string | number; codigo: string }[] };
    const seen = new Set(listed.events.filter((e) => e.codigo.startsWith('adm-')).map((e) => Number(e.id)));
    for (const id of ids) expect(seen.has(id)).toBe(true);
    const metrics = await t.metrics();
    const { all } = await servedBy(t, 'LoginYInsertarEvento');
    expect(counterSum(metrics, 'gateway_requests_total', 'operation="LoginYInsertarEvento"')).toBe(all);
    expect(counterSum(metrics, 'gateway_event_results_total', 'operation="LoginYInsertarEvento",result="id"')).toBe(all);
    // Process metrics once, not once per thread.
    expect(metrics.match(/^process_cpu_user_seconds_total /gm)).toHaveLength(1);
  });

  it("a provider change through the admin API reaches every thread's cache at once", async () => {
    const logins = () => Promise.all(Array.from({ length: SPREAD }, () => freshSoap11(t, 'Login', xmlParams(credentials('changer', 'secret-1')))));
    for (const reply of await logins()) expect(reply.text).toContain('<LoginResult>true</LoginResult>');
    // PROVIDER_CACHE_MS is 10 minutes: only the invalidation can make the threads see the change.
    expect((await t.admin('PATCH', '/admin/providers/changer', { enabled: false })).status).toBe(200);
    // The announcement is a message to each thread: give a loaded machine a moment (not 10 minutes).
    const deadline = Date.now() + 5_000;
    let replies = await logins();
    while (replies.some((r) => !r.text.includes('<LoginResult>false</LoginResult>')) && Date.now() < deadline) replies = await logins();
    for (const reply of replies) expect(reply.text).toContain('<LoginResult>false</LoginResult>');
  });
});

describe('two front-end threads share one rate limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start({ GATEWAY_THREADS: '2', RATE_LIMIT_EVENTS_PER_SECOND: '5' });
    await t.provider('acme', 'secret-1');
  });
  afterAll(() => t.stop());

  it('a provider gets RATE_LIMIT_EVENTS_PER_SECOND over all threads, not per thread', async () => {
    // The clock stands still: the bucket does not refill during the test.
    const codes = (await Promise.all(Array.from({ length: 20 }, (_, i) => insert(t, { Codigo: `r-${i}` })))).map(resultOf);
    expect(codes.filter((c) => c > 0)).toHaveLength(5);
    expect(codes.filter((c) => c === -6)).toHaveLength(15);
    await both(t, 'LoginYInsertarEvento');
  });
});

describe('graceful shutdown with two threads', () => {
  it('every event acknowledged before or during the stop is stored', async () => {
    const t = await TestApp.start({ GATEWAY_THREADS: '2', SQLITE_SYNCHRONOUS: 'FULL' });
    await t.provider('acme', 'secret-1');
    // Stop once the first answers are back, with the rest still on their way (whatever the machine's load).
    const ids = await insertsAcrossClose(t, 150, (i) => insert(t, { Codigo: `g-${i}` }));
    expect(ids.length).toBeGreaterThanOrEqual(10);
    const db = new Database(`${t.dataDir}/${DATABASE_FILE}`, { readonly: true });
    try {
      const stored = new Set(db.prepare<[], number>('SELECT id FROM events').pluck().all());
      for (const id of ids) expect(stored.has(id)).toBe(true);
    } finally {
      db.close();
      await t.stop();
    }
  });
});
