import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO } from './paths.js';
import { freePort } from './spawned.js';
import { waitFor } from './wait.js';

/** A ClickHouse 18.16 server of one test's own, for SQL that may crash the server. */
export interface ScratchClickHouse {
  readonly url: string;
  /** Runs `sql`, the answer's body (an error's text too). */
  run(sql: string): Promise<string>;
  /** SIGKILL and its state removed; whether it was still alive before that. */
  stop(): Promise<{ wasAlive: boolean }>;
}

/**
 * Starts scripts/services/clickhouse-scratch.sh (up.sh's server config, its own ports and state).
 * ClickHouse 18.16's Kafka engine can abort the server when a Kafka table is dropped (seen in CI
 * and reproduced: SIGABRT in librdkafka), so a test that opens one does it here, not on the
 * server every other suite shares.
 */
export async function startScratchClickHouse(): Promise<ScratchClickHouse> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ch-scratch-'));
  const [http, tcp, interserver] = [await freePort(), await freePort(), await freePort()];
  const proc = spawn(path.join(REPO, 'scripts', 'services', 'clickhouse-scratch.sh'), [dir, String(http), String(tcp), String(interserver)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const keep = (b: Buffer): void => void output.push(b.toString('utf8'));
  proc.stdout.on('data', keep);
  proc.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  // A test process that ends without stop() (a timeout, a crash) must not leave the server running.
  const killOnExit = (): void => void proc.kill('SIGKILL');
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));
  const alive = (): boolean => proc.exitCode === null && proc.signalCode === null;
  const url = `http://127.0.0.1:${http}/`;
  const run = async (sql: string): Promise<string> => (await fetch(url, { method: 'POST', body: sql })).text();
  const stop = async (): Promise<{ wasAlive: boolean }> => {
    const wasAlive = alive();
    if (wasAlive) proc.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
    return { wasAlive };
  };
  const died = exited.then(() => {
    throw new Error(`scratch ClickHouse exited before answering /ping: ${output.join('')}`);
  });
  const pinged = waitFor('scratch ClickHouse /ping', async () => (await fetch(`${url}ping`).then((r) => r.text()).catch(() => '')) === 'Ok.\n', 60_000);
  try {
    await Promise.race([pinged, died]);
  } catch (e) {
    await stop();
    throw e;
  }
  died.catch(() => undefined); // its later rejection (when stopped) is expected
  return { url, run, stop };
}
