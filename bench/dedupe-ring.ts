/**
 * The embedded event log's dedupe index alone, two builds in one process, alternating: per event
 * the event log's own sequence (get, add with a pending tag, settle once committed, prune to the
 * window) over keys in its form (base64 SHA-256), with `INDEX` entries held. Prints CPU ns per
 * event, the longest one event's steps took (a growth or a rehash stops the event loop that
 * long), the heap the index holds, and a full GC's time with the index alive.
 *
 * Run: node --expose-gc --import tsx bench/dedupe-ring.ts <checkout A with dist/> [checkout B]
 *      (env EVENTS=1000000 INDEX=500000 ROUNDS=3)
 */
import { hash } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '..');
const [rootA, rootB = ROOT] = process.argv.slice(2).map((p) => path.resolve(p));
if (rootA === undefined) throw new Error('usage: bench/dedupe-ring.ts <checkout A with dist/> [checkout B]');
const EVENTS = Number(process.env.EVENTS ?? 1_000_000);
const INDEX = Number(process.env.INDEX ?? 500_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const gc = (globalThis as { gc?: () => void }).gc;

type Ring = InstanceType<typeof import('../shared/backends/embedded/dedupe-ring.js').DedupeRing<number>>;
type RingClass = typeof import('../shared/backends/embedded/dedupe-ring.js').DedupeRing;
const load = async (root: string): Promise<RingClass> =>
  ((await import(pathToFileURL(path.join(root, 'dist/shared/backends/embedded/dedupe-ring.js')).href)) as typeof import('../shared/backends/embedded/dedupe-ring.js')).DedupeRing;


function run(Ring: RingClass, keyNs: number): { nsPerEvent: number; longestMs: number; heapMb: number; fullGcMs: number } {
  gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  // Sized for the window as the event log makes it (builds before that option ignore it).
  const ring: Ring = new Ring({ expectedKeys: INDEX });
  const started = process.cpuUsage();
  const group = 1;
  let longestMs = 0;
  for (let i = 0; i < EVENTS; i++) {
    // A fresh key string per event, as every request makes its own (its SHA-256 is the baseline below).
    const key = hash('sha256', `event ${i}`, 'base64');
    const stepStarted = performance.now();
    if (ring.get(key) === undefined) ring.add(key, BigInt(i + 1), i, group);
    // As the event log does: a build with settleAll settles a whole group at its commit, an older one key by key.
    if (!('settleAll' in ring)) (ring as Ring).settle(key, group);
    else if ((i & 1023) === 1023) ring.settleAll(group);
    if ((i & 1023) === 0) ring.prune(i - INDEX, INDEX);
    const step = performance.now() - stepStarted;
    if (step > longestMs) longestMs = step;
  }
  const used = process.cpuUsage(started);
  const heapMb = (process.memoryUsage().heapUsed - heap0) / 2 ** 20;
  let fullGcMs = NaN;
  if (gc) {
    const t = performance.now();
    gc();
    fullGcMs = performance.now() - t;
  }
  if (ring.size < INDEX * 0.9) throw new Error(`index holds ${ring.size}`);
  return { nsPerEvent: ((used.user + used.system) * 1000) / EVENTS - keyNs - timingNs, longestMs, heapMb, fullGcMs };
}

/** What reading the clock around each event costs (two performance.now() calls), taken off too. */
function timingCost(): number {
  const started = process.cpuUsage();
  let sum = 0;
  for (let i = 0; i < EVENTS; i++) sum += performance.now() - performance.now();
  const used = process.cpuUsage(started);
  if (Number.isNaN(sum)) throw new Error('no clock');
  return ((used.user + used.system) * 1000) / EVENTS;
}

/** What making the keys costs alone, taken off both sides' figures. */
function baseline(): number {
  const started = process.cpuUsage();
  let n = 0;
  for (let i = 0; i < EVENTS; i++) n += hash('sha256', `event ${i}`, 'base64').length;
  const used = process.cpuUsage(started);
  if (n === 0) throw new Error('no keys');
  return ((used.user + used.system) * 1000) / EVENTS;
}

const [A, B] = [await load(rootA), await load(rootB)];
const keyNs = baseline();
const timingNs = timingCost();
console.log(`${EVENTS} events, ${INDEX} held; making each key costs ${keyNs.toFixed(0)} ns, taken off below`);
for (let r = 1; r <= ROUNDS; r++) {
  const a = run(A, keyNs);
  const b = run(B, keyNs);
  console.log(
    `round ${r}: A ${a.nsPerEvent.toFixed(0)} ns/event, longest ${a.longestMs.toFixed(1)} ms, heap +${a.heapMb.toFixed(0)} MB, full GC ${a.fullGcMs.toFixed(1)} ms | ` +
      `B ${b.nsPerEvent.toFixed(0)} ns/event, longest ${b.longestMs.toFixed(1)} ms, heap +${b.heapMb.toFixed(0)} MB, full GC ${b.fullGcMs.toFixed(1)} ms`,
  );
}
