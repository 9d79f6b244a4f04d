import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { startAdminServer, type AdminServer } from '../../gateway/admin/server.js';
import { openEmbeddedBackends, type EmbeddedBackends } from '../../shared/backends/embedded/index.js';
import { LocalEventFeed } from '../../shared/backends/embedded/live-feed.js';
import { loadConfig } from '../../shared/config/index.js';
import { eventRecords } from '../helpers/event-records.js';
import { REPO } from '../helpers/paths.js';
import { sleep, waitFor } from '../helpers/wait.js';

/**
 * Live streams cannot hurt the process that ingests: a cap (503 past it), one feed subscription and
 * one serialisation per event for every stream, a rate cap per stream announced by `skipped`, and
 * readers that stop reading (a suspended CLI, many idle sockets) cut or carried without harm.
 */
const TOKEN = 'streams-test-token';
const MAX_STREAMS = 1200;
const EVENTS_PER_SECOND = 100;
const FLUSH_MS = 50;

let backends: EmbeddedBackends;
let server: AdminServer;
let dataDir = '';
let feed: LocalEventFeed;
const uncaught: unknown[] = [];
const onUncaught = (err: unknown): void => {
  uncaught.push(err);
};

beforeAll(async () => {
  process.on('uncaughtException', onUncaught);
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'admin-streams-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    ADMIN_PORT: '0',
    ADMIN_STREAMS_MAX: String(MAX_STREAMS),
    ADMIN_STREAM_EVENTS_PER_SECOND: String(EVENTS_PER_SECOND),
  });
  backends = await openEmbeddedBackends({ dataDir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 600_000 });
  if (!(backends.feed instanceof LocalEventFeed)) throw new Error('expected the local event feed');
  feed = backends.feed;
  server = await startAdminServer({ config, backends, logger: pino({ level: 'silent' }), token: TOKEN, port: 0, streamFlushMs: FLUSH_MS });
});

afterAll(async () => {
  process.off('uncaughtException', onUncaught);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await server?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await backends?.close();
  if (dataDir !== '') rmSync(dataDir, { recursive: true, force: true });
});

/** A raw stream request; the socket and all it has received so far. */
async function rawStream(query = ''): Promise<{ socket: net.Socket; text: () => string }> {
  const url = new URL(server.url);
  const socket = net.connect(Number(url.port), url.hostname);
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (received += d));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(`GET /admin/events/stream${query} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
  return { socket, text: () => received };
}

const next = eventRecords({ eventTimeBase: Date.UTC(2026, 0, 1), stepMs: 1000, receivedAt: Date.now(), dedupePrefix: 'streams-' });
let nextId = 1n;

describe('live event streams under load', () => {
  it('share one feed subscription, get every event once each, and are capped (503 past ADMIN_STREAMS_MAX)', async () => {
    const streams = await Promise.all(Array.from({ length: MAX_STREAMS }, () => rawStream()));
    await waitFor('every stream open', () => server.liveStreams === MAX_STREAMS && streams.every((s) => s.text().includes('stream open')));
    // One subscription for all of them: the per-stream work is a write per flush, not a view per event.
    expect(feed.size).toBe(1);

    const refused = await fetch(`${server.url}/admin/events/stream`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(((await refused.json()) as { error: string }).error).toMatch(/ADMIN_STREAMS_MAX/);

    const id = nextId++;
    feed.publish([next({ dominio: 'SHARED1' })], [id], Date.now());
    await waitFor('the event on every stream', () => streams.every((s) => s.text().includes(`id: ${id.toString()}\n`)));
    for (const s of streams) expect(s.text().split(`id: ${id.toString()}\n`).length).toBe(2);

    // The admin port still answers while they are open.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    for (const s of streams) s.socket.destroy();
    await waitFor('every stream freed', () => server.liveStreams === 0 && feed.size === 0);
    expect(uncaught).toEqual([]);
  });

  it('a filtered stream sees only its provider and Dominio', async () => {
    const s = await rawStream('?provider=acme&dominio=AAA111');
    await waitFor('open', () => s.text().includes('stream open'));
    const mine = nextId++;
    const other = nextId++;
    feed.publish([next({ systemUser: 'acme', dominio: 'AAA111' }), next({ systemUser: 'acme', dominio: 'BBB222' })], [mine, other], Date.now());
    await waitFor('its event', () => s.text().includes(`id: ${mine.toString()}\n`));
    await sleep(FLUSH_MS * 3);
    expect(s.text()).not.toContain(`id: ${other.toString()}\n`);
    s.socket.destroy();
    await waitFor('freed', () => server.liveStreams === 0);
  });

  it('carries at most ADMIN_STREAM_EVENTS_PER_SECOND and says how many it skipped', async () => {
    const s = await rawStream();
    await waitFor('open', () => s.text().includes('stream open'));
    const burst = 1000;
    const ids = Array.from({ length: burst }, () => nextId++);
    feed.publish(ids.map(() => next({})), ids, Date.now());
    await waitFor('the skipped note', () => s.text().includes('event: skipped'));
    const carried = s.text().split('event: event\n').length - 1;
    const skipped = Number(/event: skipped\ndata: \{"events":(\d+)\}/.exec(s.text())?.[1]);
    expect(carried).toBe(Math.round((EVENTS_PER_SECOND * FLUSH_MS) / 1000));
    expect(carried + skipped).toBe(burst);
    s.socket.destroy();
    await waitFor('freed', () => server.liveStreams === 0);
  });

  it('a suspended `admin events --follow` (SIGSTOP) is cut; the process stays up and serving', async () => {
    const cli = spawn(process.execPath, ['--import', 'tsx', 'cli/admin.ts', '--json', '--url', server.url, '--token', TOKEN, 'events', '--follow'], {
      cwd: REPO,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => cli.once('exit', (code) => resolve(code)));
    try {
      await waitFor('the CLI connected', () => server.liveStreams === 1, 30_000);
      cli.kill('SIGSTOP');
      const bulky = 'x'.repeat(32 * 1024);
      const deadline = Date.now() + 30_000;
      // Publish until the server gives up on the reader (kernel buffers absorb a few MB first).
      for (let round = 0; Date.now() < deadline && server.liveStreams > 0; round++) {
        feed.publish([next({ codigo: bulky })], [nextId++], Date.now());
        if (round % 5 === 0) await sleep(FLUSH_MS / 5);
      }
      expect(server.liveStreams).toBe(0);
      expect(feed.size).toBe(0);
      await sleep(FLUSH_MS * 4);
      expect(uncaught).toEqual([]);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      cli.kill('SIGCONT');
      // Resumed, the CLI finds its stream ended and says so (exit 1), rather than hanging.
      expect(await exited).toBe(1);
    } finally {
      cli.kill('SIGCONT');
      cli.kill('SIGKILL');
    }
  });

  it('HEAD on the stream answers the head at once and opens nothing', async () => {
    const res = await fetch(`${server.url}/admin/events/stream`, { method: 'HEAD', headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    await sleep(FLUSH_MS);
    expect(server.liveStreams).toBe(0);
  });
});
