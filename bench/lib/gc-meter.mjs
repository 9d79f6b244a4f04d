// Preloaded into a bench server (`--import`): the time V8's collector paused the main thread, from
// perf_hooks' `gc` entries, written as JSON to BENCH_GC_FILE every 100 ms ({ ms, count, byKind }),
// whole and renamed, so the bench reads cumulative figures at the start and the end of a window.
// Plain JavaScript without the project's code, so that any build (an older checkout in an A/B,
// on an older Node.js) can be measured the same way. Only the main thread writes.
import { renameSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { setInterval } from 'node:timers';
import { isMainThread } from 'node:worker_threads';

const file = process.env.BENCH_GC_FILE;
if (file && isMainThread) {
  const kinds = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
  };
  const totals = { ms: 0, count: 0, byKind: { minor: 0, major: 0, incremental: 0, weakcb: 0 } };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      totals.ms += entry.duration;
      totals.count++;
      const detail = /** @type {{ detail?: { kind?: number } }} */ (/** @type {unknown} */ (entry)).detail;
      const kind = kinds[detail?.kind ?? -1];
      if (kind !== undefined) totals.byKind[/** @type {'minor'} */ (kind)] += entry.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  setInterval(() => {
    writeFileSync(`${file}.partial`, JSON.stringify(totals));
    renameSync(`${file}.partial`, file);
  }, 100).unref();
}
