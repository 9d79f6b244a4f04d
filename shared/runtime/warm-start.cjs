// @ts-check
/**
 * Warm from the first request: what a process launched for serving (`npm start`, the image, `npm
 * run gateway`: the launches that size V8's young generation with --min-semi-space-size,
 * docs/running.md §Operating it) does before it takes traffic, so that its first seconds of load cost
 * what the later ones do (bench/warm-probe.ts measures it). Plain CommonJS: the SQLite writer thread
 * (writer-thread-main.cjs) runs it too, with no TypeScript loader.
 *
 * A fresh young generation is virtual memory the kernel has not mapped yet: each first touch of a
 * 4 KB page is a fault and a zeroed page. With 64 MB semi-spaces that is 128 MB per isolate,
 * faulted in during the first seconds of load (0.3-0.9 faults per request there, against 0.01
 * later). Allocating short-lived garbage until both semi-spaces have been used moves those faults
 * to the start, where they cost about a tenth of a second and nobody waits.
 */
const v8 = require('node:v8');
const { performance } = require('node:perf_hooks');
const process = require('node:process');

/** Whether this process was launched for serving, with the young generation sized up front. */
function launchedWarm() {
  return process.execArgv.some((arg) => arg.startsWith('--min-semi-space-size'));
}

/** Capacity of V8's new space (both semi-spaces), bytes. */
function newSpaceBytes() {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

/**
 * Faults in this isolate's young generation; null when the process was not launched warm (the
 * tests, tools), else what it allocated and how long it took.
 * @returns {{ allocatedMb: number, ms: number } | null}
 */
function prefaultYoungGeneration() {
  if (!launchedWarm()) return null;
  const started = performance.now();
  let allocated = 0;
  let sink = 0;
  // Twice the capacity as it stands when done (V8 grows new space to its minimum on the first
  // scavenges): every page of both semi-spaces has then held garbage at least once. The capacity
  // is read every 8 MB (reading it builds the statistics of every space).
  let target = 2 * newSpaceBytes();
  while (allocated < target) {
    for (let i = 0; i < 1024; i++) {
      const garbage = new Array(2048).fill(i & 0xff);
      sink ^= garbage.length;
    }
    allocated += 1024 * (2048 * 4 + 16);
    target = 2 * newSpaceBytes();
  }
  return { allocatedMb: Math.round(allocated / 2 ** 20) + (sink & 0), ms: Math.round(performance.now() - started) };
}

module.exports = { launchedWarm, prefaultYoungGeneration };
