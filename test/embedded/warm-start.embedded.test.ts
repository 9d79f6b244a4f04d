/**
 * A process launched for serving (the semi-space flags `npm start` and the image pass) is warm before
 * its first request: its young generation faulted in, its SQLite writer thread started, its dedupe
 * index's pages taken (shared/runtime/warm-start.cjs, the embedded event log). Without the flags (tests, tools) nothing of it happens.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { launchedWarm, prefaultYoungGeneration } from '../../shared/runtime/warm-start.cjs';
import { REPO } from '../helpers/paths.js';
import { startNode, type Proc } from '../helpers/processes.js';

const FLAGS = ['--max-semi-space-size=64', '--min-semi-space-size=64'];
let gateway: Proc | null = null;
afterAll(async () => {
  await gateway?.stop();
});

/** The names of a process's threads (/proc/PID/task/TID/comm). */
function threadNames(pid: number): string[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim());
}

describe('warm start', () => {
  it('does nothing in a process launched without the young-generation flags', () => {
    expect(launchedWarm()).toBe(false);
    expect(prefaultYoungGeneration()).toBeNull();
  });

  it('faults in both semi-spaces at once when launched with them: RSS up by most of 128 MB, a second call adds nothing', () => {
    const probe = `
      const w = require(${JSON.stringify(path.join(REPO, 'shared/runtime/warm-start.cjs'))});
      const rss = () => process.memoryUsage().rss / 2 ** 20;
      const r0 = rss(); const first = w.prefaultYoungGeneration(); const r1 = rss(); w.prefaultYoungGeneration(); const r2 = rss();
      process.stdout.write(JSON.stringify({ first, grew: r1 - r0, again: r2 - r1 }));`;
    const out = JSON.parse(execFileSync(process.execPath, [...FLAGS, '-e', probe], { encoding: 'utf8' })) as { first: { allocatedMb: number }; grew: number; again: number };
    expect(out.first.allocatedMb).toBeGreaterThanOrEqual(256);
    expect(out.grew).toBeGreaterThan(100);
    expect(out.again).toBeLessThan(10);
  });

  it('a thread given a young generation of its own gets it despite the launch flags; threads started after it, and the main thread, keep the flags', () => {
    const probe = `
      import v8 from 'node:v8';
      import { Worker } from 'node:worker_threads';
      import { launchFlagsInForce, startWorkerWithYoungGeneration } from './shared/runtime/thread-heap.ts';
      // Each thread allocates past its young generation a few times, then reports its capacity (MB).
      const code = "const v8 = process.getBuiltinModule('node:v8'); let a = []; for (let i = 0; i < 3e6; i++) { a.push({ i }); if (a.length > 1000) a = []; }" +
        "process.getBuiltinModule('node:worker_threads').parentPort.postMessage(v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 2 ** 20)";
      const capacity = (w) => new Promise((resolve) => w.once('message', (mb) => { void w.terminate(); resolve(mb); }));
      const small = startWorkerWithYoungGeneration(code, { eval: true }, 8);
      await launchFlagsInForce();
      const later = new Worker(code, { eval: true });
      const [smallMb, laterMb] = await Promise.all([capacity(small), capacity(later)]);
      const mainMb = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 2 ** 20;
      process.stdout.write(JSON.stringify({ smallMb, laterMb, mainMb }));`;
    const out = JSON.parse(execFileSync(process.execPath, [...FLAGS, '--import', 'tsx', '--input-type=module', '-e', probe], { cwd: REPO, encoding: 'utf8' })) as { smallMb: number; laterMb: number; mainMb: number };
    expect(out.smallMb).toBeLessThanOrEqual(8);
    expect(out.laterMb).toBeGreaterThanOrEqual(64);
    expect(out.mainMb).toBeGreaterThanOrEqual(64);
  });

  it('the dedupe index prefaulted takes its memory at once: inserts into it then fault almost no page', () => {
    // Each run in a process of its own launched as for serving: page faults are counted per process.
    const faults = (prefault: boolean): { prefault: number; adds: number } => {
      const probe = `
        import { createHash } from 'node:crypto';
        import warm from './shared/runtime/warm-start.cjs';
        import { DedupeRing } from './shared/backends/embedded/dedupe-ring.ts';
        const keys = Array.from({ length: 300000 }, (_, i) => createHash('sha256').update(String(i)).digest('base64'));
        // As a process launched for serving: its young generation's pages are taken already.
        warm.prefaultYoungGeneration();
        const ring = new DedupeRing({ expectedKeys: 1000000 });
        const f0 = process.resourceUsage().minorPageFault;
        if (${prefault}) ring.prefault();
        const f1 = process.resourceUsage().minorPageFault;
        for (let i = 0; i < keys.length; i++) ring.add(keys[i], BigInt(i + 1), i, null);
        const f2 = process.resourceUsage().minorPageFault;
        if (ring.get(keys[123456])?.id !== 123457n) throw new Error('an entry went missing');
        process.stdout.write(JSON.stringify({ prefault: f1 - f0, adds: f2 - f1 }));`;
      return JSON.parse(execFileSync(process.execPath, [...FLAGS, '--import', 'tsx', '--input-type=module', '-e', probe], { cwd: REPO, encoding: 'utf8' })) as { prefault: number; adds: number };
    };
    const cold = faults(false);
    const warm = faults(true);
    // 82 MB of ring and table at 1M keys: about 21,000 pages.
    expect(warm.prefault).toBeGreaterThan(15_000);
    expect(cold.adds).toBeGreaterThan(3_000);
    // Measured 11,301 against 759 (2026-11-29): what is left is V8's own.
    expect(warm.adds).toBeLessThan(cold.adds / 5);
  });

  it('a gateway launched as npm start launches it has its writer thread before any request, and says it faulted in its heap', { timeout: 60_000 }, async () => {
    gateway = await startNode('gateway', ['--import', 'tsx', ...FLAGS, 'main.ts'], REPO, { PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', ADMIN_TOKEN: 'warm', LOG_LEVEL: 'debug', LOG_FORMAT: 'json', GATEWAY_THREADS: '1' });
    expect(gateway.lines().some((l) => l.includes('young generation faulted in'))).toBe(true);
    // Node names a worker thread's OS thread "WorkerThread"; the writer is the only one in embedded mode with one front-end thread.
    const deadline = Date.now() + 10_000;
    while (!threadNames(gateway.child.pid!).includes('WorkerThread') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(threadNames(gateway.child.pid!)).toContain('WorkerThread');
    // The writer thread's heap is its own small young generation, not the 128 MB the flags give the main thread.
    const metrics = await (await fetch(`${gateway.adminUrl}/metrics`, { headers: { Authorization: 'Bearer warm' } })).text();
    const allocated = /^gateway_event_writer_heap_bytes\{kind="allocated"\} (\d+)/m.exec(metrics);
    expect(allocated).not.toBeNull();
    expect(Number(allocated![1])).toBeLessThan(40 * 2 ** 20);
  });
});
