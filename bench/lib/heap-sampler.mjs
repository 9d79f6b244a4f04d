// Preloaded into a bench server (`--import`): V8's sampling heap profiler over every allocation,
// including the objects the scavenger frees at once (the garbage a request leaves), which
// `node --heap-prof` leaves out. Started and stopped by files the bench creates, so no port or
// signal is needed: HEAP_SAMPLER_DIR/start, HEAP_SAMPLER_DIR/stop; the profile is written to
// HEAP_SAMPLER_DIR/allocations.heapprofile.
import console from 'node:console';
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import process from 'node:process';
import { clearInterval, setInterval } from 'node:timers';

const dir = process.env.HEAP_SAMPLER_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  let state = 'idle';
  const timer = setInterval(() => {
    if (state === 'idle' && existsSync(path.join(dir, 'start'))) {
      state = 'sampling';
      void session
        .post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMinorGC: true, includeObjectsCollectedByMajorGC: true })
        .catch((err) => console.error('heap sampler:', err));
    } else if (state === 'sampling' && existsSync(path.join(dir, 'stop'))) {
      state = 'done';
      clearInterval(timer);
      void session.post('HeapProfiler.stopSampling').then(({ profile }) => {
        // Written whole under another name, then renamed: the bench reads it as soon as it exists.
        writeFileSync(path.join(dir, 'allocations.partial'), JSON.stringify(profile));
        renameSync(path.join(dir, 'allocations.partial'), path.join(dir, 'allocations.heapprofile'));
      });
    }
  }, 50);
  timer.unref();
}
