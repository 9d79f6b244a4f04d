import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { launchedSemiSpaces, launchFlagsInForce, startWorkerWithYoungGeneration } from '../../../../shared/runtime/thread-heap.js';

describe('thread heap: the semi-space flags a process was launched with', () => {
  it('reads both flags in MB, 0 for one not given, the last one when repeated', () => {
    expect([...launchedSemiSpaces(['--max-semi-space-size=64', '--min-semi-space-size=64'])]).toEqual([
      ['--min-semi-space-size', 64],
      ['--max-semi-space-size', 64],
    ]);
    expect([...launchedSemiSpaces(['--inspect', '--max-semi-space-size=16', '--max-semi-space-size=32'])]).toEqual([
      ['--min-semi-space-size', 0],
      ['--max-semi-space-size', 32],
    ]);
    expect([...launchedSemiSpaces([])].every(([, mb]) => mb === 0)).toBe(true);
  });

  it('without the flags (this process) a small young generation is the Worker resource limit alone, and nothing waits', async () => {
    const code = `require('node:worker_threads').parentPort.postMessage(require('node:worker_threads').resourceLimits.maxYoungGenerationSizeMb)`;
    const worker = startWorkerWithYoungGeneration(code, { eval: true }, 8);
    const limit = await new Promise((resolve) => worker.once('message', resolve));
    await worker.terminate();
    expect(limit).toBe(8);
    await expect(launchFlagsInForce()).resolves.toBeUndefined();
    // The plain Worker constructor is untouched.
    const plain = new Worker(`require('node:worker_threads').parentPort.postMessage(require('node:worker_threads').resourceLimits.maxYoungGenerationSizeMb)`, { eval: true });
    const plainLimit = await new Promise((resolve) => plain.once('message', resolve));
    await plain.terminate();
    expect(plainLimit).not.toBe(8);
  });
});
