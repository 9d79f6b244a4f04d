import { setFlagsFromString } from 'node:v8';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Young generations per thread. A process launched for serving sizes V8's young generation with
 * `--min-semi-space-size` / `--max-semi-space-size` (docs/running.md §Operating it), and V8 applies
 * those flags to every isolate it creates afterwards, ahead of a Worker's `resourceLimits`. A
 * front-end thread parses requests like the main thread and wants the same; the SQLite writer thread
 * allocates a few hundred bytes per event that die within the commit, and with the process's flags it
 * held 128 MB of young generation, prefaulted at start, for nothing (bench/LOG.md, 2026-11-29).
 *
 * So a thread with a size of its own is created with the flags cleared, and they are set back to
 * what the process was launched with once its isolate exists (its 'online' event). Any other
 * thread waits for that (`launchFlagsInForce`), so it never starts inside the window.
 */
const SEMI_SPACE_FLAGS = ['--min-semi-space-size', '--max-semi-space-size'] as const;

let inForce: Promise<void> = Promise.resolve();

/** The semi-space flags in `execArgv` with their values (MB), 0 for one not given (V8's default). */
export function launchedSemiSpaces(execArgv: readonly string[] = process.execArgv): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const flag of SEMI_SPACE_FLAGS) {
    const arg = execArgv.findLast((a) => a.startsWith(`${flag}=`));
    sizes.set(flag, arg === undefined ? 0 : Number(arg.slice(flag.length + 1)));
  }
  return sizes;
}

function setSemiSpaces(sizes: ReadonlyMap<string, number>): void {
  for (const [flag, mb] of sizes) setFlagsFromString(`${flag}=${mb}`);
}

/** Resolves once no thread is being started with a young generation of its own. */
export function launchFlagsInForce(): Promise<void> {
  return inForce;
}

/**
 * A worker whose young generation is at most `youngGenerationMb` (V8's young generation size:
 * both semi-spaces and the new large-object space), whatever the process was launched with.
 */
export function startWorkerWithYoungGeneration(file: URL | string, options: WorkerOptions, youngGenerationMb: number): Worker {
  const resourceLimits = { ...options.resourceLimits, maxYoungGenerationSizeMb: youngGenerationMb };
  const launched = launchedSemiSpaces();
  if ([...launched.values()].every((mb) => mb === 0)) return new Worker(file, { ...options, resourceLimits });
  setSemiSpaces(new Map(SEMI_SPACE_FLAGS.map((flag) => [flag, 0])));
  let worker: Worker;
  try {
    worker = new Worker(file, { ...options, resourceLimits });
  } catch (err) {
    setSemiSpaces(launched);
    throw err;
  }
  inForce = new Promise<void>((resolve) => {
    const restore = (): void => {
      worker.off('online', restore).off('error', restore).off('exit', restore);
      setSemiSpaces(launched);
      resolve();
    };
    worker.on('online', restore).on('error', restore).on('exit', restore);
  });
  return worker;
}
