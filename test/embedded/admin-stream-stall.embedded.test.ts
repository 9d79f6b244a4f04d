import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { startAdminServer, type AdminServer } from '../../gateway/admin/server.js';
import { openEmbeddedBackends, type EmbeddedBackends } from '../../shared/backends/embedded/index.js';
import { LocalEventFeed } from '../../shared/backends/embedded/live-feed.js';
import { loadConfig } from '../../shared/config/index.js';
import { eventRecords } from '../helpers/event-records.js';
import { sleep } from '../helpers/wait.js';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A live-stream reader that stops reading without closing (a stalled browser tab, a suspended
 * `admin events --follow`) is cut as too slow; the keep-alive timer must not write after that, or the
 * write-after-end error stops the whole process and every provider's ingest with it.
 */
const TOKEN = 'stall-test-token';
const KEEP_ALIVE_MS = 40;

let backends: EmbeddedBackends;
let server: AdminServer;
let dataDir = '';
const uncaught: unknown[] = [];
const onUncaught = (err: unknown): void => {
  uncaught.push(err);
};

beforeAll(async () => {
  process.on('uncaughtException', onUncaught);
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'admin-stall-'));
  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_PORT: '0' });
  backends = await openEmbeddedBackends({ dataDir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 600_000 });
  server = await startAdminServer({
    config,
    backends,
    logger: pino({ level: 'silent' }),
    token: TOKEN,
    port: 0,
    streamKeepAliveMs: KEEP_ALIVE_MS,
    streamFlushMs: 20,
  });
});

afterAll(async () => {
  process.off('uncaughtException', onUncaught);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await server?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await backends?.close();
  if (dataDir !== '') rmSync(dataDir, { recursive: true, force: true });
});

describe('a live stream whose reader stalls', () => {
  it('is cut, its subscription freed, and the keep-alive timer never writes after the cut', async () => {
    const feed = backends.feed;
    if (!(feed instanceof LocalEventFeed)) throw new Error('expected the local event feed');
    const url = new URL(server.url);
    const socket = net.connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    let closed = false;
    socket.on('close', () => (closed = true));
    socket.on('error', () => undefined);
    socket.write(`GET /admin/events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    // Read the response head, then stop reading: the socket's buffers fill and the server's backlog grows.
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.pause();
    for (let i = 0; i < 50 && feed.size === 0; i++) await sleep(10);
    expect(feed.size).toBe(1);

    const next = eventRecords({ eventTimeBase: Date.UTC(2026, 0, 1), stepMs: 1000, receivedAt: Date.now(), dedupePrefix: 'stall-' });
    const bulky = 'x'.repeat(32 * 1024);
    let id = 1n;
    // Publish until the server gives up on the reader (kernel buffers absorb a few MB first).
    const deadline = Date.now() + 20_000;
    for (let round = 0; Date.now() < deadline && feed.size > 0; round++) {
      feed.publish([next({ codigo: bulky })], [id++], Date.now());
      if (round % 20 === 0) await sleep(5);
    }
    expect(feed.size).toBe(0);
    // Several keep-alive periods after the cut: a write after the end would surface here.
    await sleep(KEEP_ALIVE_MS * 6);
    expect(uncaught).toEqual([]);
    socket.destroy();
    await sleep(20);
    expect(closed).toBe(true);
    // The admin port still answers.
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
  });

  it('a reader that stalls with no events flowing is kept alive by comments and freed when it leaves', async () => {
    const feed = backends.feed;
    if (!(feed instanceof LocalEventFeed)) throw new Error('expected the local event feed');
    const res = await fetch(`${server.url}/admin/events/stream`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    const reader = res.body?.getReader();
    if (reader === undefined) throw new Error('no body');
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('keep-alive')) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value as Uint8Array);
    }
    expect(text).toContain(': keep-alive');
    await reader.cancel();
    for (let i = 0; i < 50 && feed.size > 0; i++) await sleep(10);
    expect(feed.size).toBe(0);
    await sleep(KEEP_ALIVE_MS * 3);
    expect(uncaught).toEqual([]);
  });
});
