/**
 * What waking the SQLite writer thread costs the main thread: Atomics.notify to a thread asleep in
 * Atomics.wait (what writer-thread.ts does) against a one-number postMessage to a thread waiting in
 * its event loop. Each round trip is a wake and the thread's `{seq}`-like reply, as for a commit
 * group; main-thread CPU from /proc (schedstat), alternating rounds.
 *
 *   npx tsx bench/writer-wake.ts [--wakes 20000] [--rounds 3]
 */
import { Worker } from 'node:worker_threads';
import { threadCpuSecondsFine } from './lib/proc.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const WAKES = arg('wakes', 20_000);
const ROUNDS = arg('rounds', 3);

type Mode = 'notify' | 'post';

const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const control = new Int32Array(workerData.buffer);
if (workerData.mode === 'notify') {
  let seen = 0;
  for (;;) {
    Atomics.wait(control, 0, seen);
    seen = Atomics.load(control, 0);
    if (seen === -1) break;
    parentPort.postMessage(seen);
  }
} else {
  parentPort.on('message', (m) => (m === -1 ? parentPort.close() : parentPort.postMessage(Atomics.load(control, 0))));
}`;

async function roundTrips(mode: Mode): Promise<{ mainUs: number; wallUs: number }> {
  const buffer = new SharedArrayBuffer(16);
  const control = new Int32Array(buffer);
  const worker = new Worker(THREAD, { eval: true, workerData: { buffer, mode } });
  await new Promise((resolve) => worker.once('online', resolve));
  const cpu0 = threadCpuSecondsFine(process.pid, process.pid) ?? 0;
  const wall0 = performance.now();
  let sent = 0;
  await new Promise<void>((resolve) => {
    const wake = (): void => {
      if (++sent > WAKES) {
        resolve();
        return;
      }
      Atomics.store(control, 0, sent);
      if (mode === 'notify') Atomics.notify(control, 0);
      else worker.postMessage(0);
    };
    worker.on('message', wake);
    wake();
  });
  const mainUs = (((threadCpuSecondsFine(process.pid, process.pid) ?? 0) - cpu0) * 1e6) / WAKES;
  const wallUs = ((performance.now() - wall0) * 1000) / WAKES;
  Atomics.store(control, 0, -1);
  Atomics.notify(control, 0);
  await worker.terminate();
  return { mainUs, wallUs };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const results: Record<Mode, { mainUs: number; wallUs: number }[]> = { notify: [], post: [] };
for (let r = 0; r < ROUNDS; r++) for (const mode of ['notify', 'post'] as const) results[mode].push(await roundTrips(mode));
console.log(`Waking the writer thread, ${WAKES.toLocaleString('en-US')} round trips per round, ${ROUNDS} alternating rounds, median; node ${process.version}`);
for (const mode of ['notify', 'post'] as const) {
  console.log(`  ${mode}: main thread ${median(results[mode].map((x) => x.mainUs)).toFixed(2)} µs CPU per round trip, ${median(results[mode].map((x) => x.wallUs)).toFixed(1)} µs wall`);
}
