import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface SyncLatency {
  p50: number;
  p99: number;
  samples: number;
}

/**
 * What one durable commit costs this disk at least: fdatasync after a 4 KiB append, `samples`
 * times, in the directory the bench servers keep their data (os.tmpdir()). A request acknowledged
 * only once durable waits for at least one of these, and for up to two under load (the commit in
 * flight, then its own), so this is the floor of the paced p99 goal.
 */
export function syncLatency(samples = 300): SyncLatency {
  const dir = mkdtempSync(path.join(tmpdir(), 'gw-fsync-'));
  const fd = openSync(path.join(dir, 'probe'), 'w');
  const page = Buffer.alloc(4096, 0x5a);
  const ms: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      writeSync(fd, page);
      const started = performance.now();
      fdatasyncSync(fd);
      ms.push(performance.now() - started);
    }
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
  ms.sort((a, b) => a - b);
  const at = (q: number): number => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!;
  return { p50: at(0.5), p99: at(0.99), samples };
}
