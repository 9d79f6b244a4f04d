/**
 * The embedded gateway's resident memory under insert load, part by part, against the budget
 * docs/running.md §Memory sets for it (defaults: one front-end thread, DEDUPE_MAX_KEYS 1M, the
 * launch flags of `npm start`). Starts `dist/main.js` as `npm start` does, saturates it with single
 * inserts (wrk, 50 connections) and samples every 5 s: /proc/PID/status (file-backed and anonymous
 * RSS) and the gateway's own /metrics (the main isolate's V8 spaces, its external memory, the SQLite
 * writer thread's heap). Prints each part's largest sample beside its budget, and the ratio.
 *
 * Run: npx tsx bench/memory-budget.ts   (env LOAD_SECONDS=60, CONNECTIONS=50)
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { statusKbOf } from './lib/proc.js';
import { startServer } from './lib/server.js';
import { runWrk } from './lib/wrk.js';

const LOAD_SECONDS = Number(process.env.LOAD_SECONDS ?? 60);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
const MB = 2 ** 20;

/** The parts this script measures, in the order of the budget table in docs/running.md §Memory. */
const PARTS = [
  'main thread: young generation (2 × --max-semi-space-size)',
  'main thread: the rest of its V8 heap (old generation, code, maps)',
  'outside the V8 heap (external: the dedupe index at 1M keys, the writer ring)',
  'SQLite writer thread: its V8 heap',
  'native memory (SQLite page caches, uWS, V8 and Node.js internals, stacks)',
  'code and read-only data mapped from files (node, the addons)',
] as const;
type Part = (typeof PARTS)[number];

/** The budget column of docs/running.md §Memory (MB), the one place the figures are written. */
function readBudget(): Record<Part, number> {
  const doc = readFileSync(new URL('../docs/running.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('### Memory'));
  const figures = section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| part'))
    .map((line) => /^\|[^|]*\| \**(\d+) MB\** \|/.exec(line)?.[1])
    .filter((mb): mb is string => mb !== undefined)
    .map(Number);
  if (figures.length < PARTS.length + 1) throw new Error('docs/running.md §Memory: expected a budget table of 6 parts and a total');
  const budget = Object.fromEntries(PARTS.map((part, i) => [part, figures[i]!])) as Record<Part, number>;
  const sum = PARTS.reduce((a, part) => a + budget[part], 0);
  if (sum !== figures[PARTS.length]) throw new Error(`docs/running.md §Memory: the parts add up to ${sum} MB, the table says ${figures[PARTS.length]}`);
  return budget;
}
const BUDGET = readBudget();


/** The value of a metric line `name{labels} value` (first match), bytes; 0 when absent. */
function metric(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels === '' ? ' ' : `{${labels}} `}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const server = await startServer({ SQLITE_SYNCHRONOUS: 'FULL' });
await server.admin('POST', '/admin/providers', { systemUser: 'bench', password: 'bench-secret' });
const pid = server.child.pid!;

async function sample(): Promise<{ rss: number; parts: Record<Part, number> }> {
  const text = await (await fetch(`${server.adminUrl}/metrics`, { headers: { Authorization: 'Bearer bench' } })).text();
  const newSpace = metric(text, 'nodejs_heap_space_size_total_bytes', 'space="new"');
  const heapTotal = metric(text, 'nodejs_heap_size_total_bytes');
  const external = metric(text, 'nodejs_external_memory_bytes');
  const writer = metric(text, 'gateway_event_writer_heap_bytes', 'kind="allocated"');
  const status = statusKbOf(pid, ['VmRSS', 'RssAnon', 'RssFile', 'RssShmem']);
  const anon = status.RssAnon * 1024;
  const file = (status.RssFile + status.RssShmem) * 1024;
  const parts: Record<Part, number> = {
    'main thread: young generation (2 × --max-semi-space-size)': newSpace,
    'main thread: the rest of its V8 heap (old generation, code, maps)': heapTotal - newSpace,
    'outside the V8 heap (external: the dedupe index at 1M keys, the writer ring)': external,
    'SQLite writer thread: its V8 heap': writer,
    'native memory (SQLite page caches, uWS, V8 and Node.js internals, stacks)': Math.max(0, anon - heapTotal - external - writer),
    'code and read-only data mapped from files (node, the addons)': file,
  };
  return { rss: status.VmRSS * 1024, parts };
}

const mb = (bytes: number): string => (bytes / MB).toFixed(0);
const idle = await sample();
const peak = { rss: idle.rss, parts: { ...idle.parts } };
const series: string[] = [];
let requests = 0;
let seed = 1;
const started = Date.now();
while (Date.now() - started < LOAD_SECONDS * 1000) {
  const run = await runWrk({ url: server.serviceUrl, script: 'soap11-insert.lua', seconds: 5, connections: CONNECTIONS, seed: seed++ * 100_000_000 });
  requests += run.requests ?? 0;
  const now = await sample();
  series.push(`${Math.round((Date.now() - started) / 1000)} s ${mb(now.rss)}/${mb(now.parts['native memory (SQLite page caches, uWS, V8 and Node.js internals, stacks)'])}`);
  peak.rss = Math.max(peak.rss, now.rss);
  for (const part of PARTS) peak.parts[part] = Math.max(peak.parts[part], now.parts[part]);
}
const last = await sample();
await server.stop();

const budgetTotal = PARTS.reduce((a, part) => a + BUDGET[part], 0);
console.log(`Machine: ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, Node.js ${process.version}; ${new Date().toISOString()}`);
console.log(`Load: ${requests.toLocaleString('en')} single inserts in ${LOAD_SECONDS} s (wrk, ${CONNECTIONS} connections), SQLITE_SYNCHRONOUS=FULL, sampled every 5 s.\n`);
console.log('| part | budget MB | idle MB | largest sample MB | last MB | largest ÷ budget |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const part of PARTS) {
  console.log(`| ${part} | ${BUDGET[part]} | ${mb(idle.parts[part])} | ${mb(peak.parts[part])} | ${mb(last.parts[part])} | ${(peak.parts[part] / MB / BUDGET[part]).toFixed(2)}x |`);
}
console.log(`| **RSS** | **${budgetTotal}** | ${mb(idle.rss)} | ${mb(peak.rss)} | ${mb(last.rss)} | **${(peak.rss / MB / budgetTotal).toFixed(2)}x** |`);
console.log(`\nRSS / native memory, MB, by sample: ${series.join(', ')}`);
console.log(`\nRSS within budget: ${peak.rss / MB <= budgetTotal ? 'yes' : 'NO'} (the parts are read at different instants, so they need not add up to the RSS exactly).`);
