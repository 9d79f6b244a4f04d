/** What happens when a front-end thread fails (gateway/threads/pool.ts): the gateway stops, never half-serves. */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbeddedBackends, type EmbeddedBackends } from '../../shared/backends/embedded/index.js';
import { loadConfig, type Config } from '../../shared/config/index.js';
import { TokenBucketLimiter } from '../../gateway/service/rate-limit.js';
import { FrontEndPool } from '../../gateway/threads/pool.js';
import type { SharedState } from '../../gateway/threads/shared-state.js';
import { FIXTURES } from '../helpers/paths.js';
import { pathToFileURL } from 'node:url';
import { freePort } from '../helpers/spawned.js';


describe('a front-end thread that fails', () => {
  let dir: string;
  let backends: EmbeddedBackends;
  let config: Config;
  let state: SharedState;
  const logs: string[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs.push(chunk.toString('utf8'));
        done();
      },
    }),
  );

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'gw-pool-'));
    config = loadConfig({ DATA_DIR: dir, HOST: '127.0.0.1', GATEWAY_THREADS: '2' });
    backends = await openEmbeddedBackends({ dataDir: dir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 60_000 });
    state = { ...backends, rateLimiter: new TokenBucketLimiter(0) };
  });
  afterAll(async () => {
    await backends.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (port: number, entry?: URL) =>
    FrontEndPool.start({ config, logger, state, threads: 1, port, httpPort: null, clock: null, invalidation: `test-${port}`, ownClients: false, ...(entry === undefined ? {} : { entry }) });

  it('an uncaught exception is reported as the gateway\'s failure, logged, and the thread ends cleanly', async () => {
    const port = await freePort();
    const pool = await start(port, pathToFileURL(path.join(FIXTURES, 'crashing-front-end.ts')));
    const failure = await pool.failed;
    expect(failure.message).toContain('boom from a front-end thread');
    expect(logs.some((l) => l.includes('a front-end thread failed; the gateway stops') && l.includes('boom from a front-end thread'))).toBe(true);
    // Its sockets are closed: the port is free for a new listener without SO_REUSEPORT.
    await pool.close(1000);
    expect(await pool.healthy()).toBe(false);
    await new Promise<void>((resolve, reject) => {
      const server = net.createServer().once('error', reject).listen(port, '127.0.0.1', () => server.close(() => resolve()));
    });
  });

  it('a thread that cannot listen fails the start with the reason', async () => {
    const blocker = net.createServer();
    const port = await new Promise<number>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as net.AddressInfo).port)));
    try {
      await expect(start(port)).rejects.toThrow(new RegExp(`Cannot listen on 127.0.0.1:${port}`));
    } finally {
      blocker.close();
    }
  });

  it('the process then stops as on SIGTERM and exits 1, for its supervisor to restart it', async () => {
    const script = path.join(FIXTURES, 'failing-process.ts');
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', script], { env: { ...process.env, LOG_LEVEL: 'info' } }, (err, out) => {
        resolve({ code: err === null ? 0 : ((err as { code?: number }).code ?? null), stdout: out });
      });
    });
    expect(code).toBe(1);
    expect(stdout).toContain('"signal":"failure"');
    expect(stdout).toContain('closed everything');
    expect(stdout).toContain('"msg":"stopped"');
  });
});
