/**
 * Group-commit throughput of the embedded EventLog (SQLite via better-sqlite3).
 *
 *   npx tsx bench/embedded-eventlog.ts [--sync FULL|NORMAL|both] [--dir <parent dir>] [--reps N]
 *
 * Each scenario runs in a fresh database under --dir (default: the OS temp dir; use a directory on
 * the disk you will deploy to, since fsync cost is the point). Figures are the median of --reps runs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openEmbeddedBackends, type EmbeddedBackends } from '../shared/backends/embedded/index.js';
import { sampleEvent } from '../test/helpers/event-records.js';
import type { EventRecord } from '../shared/backends/types.js';
import { threadCpuSecondsFine } from './lib/proc.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? (process.argv[i + 1] as string) : fallback;
}

const syncArg = arg('sync', 'FULL').toUpperCase();
const modes: ('FULL' | 'NORMAL')[] = syncArg === 'BOTH' ? ['FULL', 'NORMAL'] : syncArg === 'NORMAL' ? ['NORMAL'] : ['FULL'];
const parentDir = arg('dir', os.tmpdir());
const reps = Math.max(1, Number(arg('reps', '3')));
/** Comma-separated group caps to compare, e.g. --caps 5000,1000. */
const caps = arg('caps', '5000').split(',').map(Number);

let serial = 0;
/** A typical LoginYInsertarEvento2 event: a few sensors, a raw payload, reception time. */
function makeEvent(): EventRecord {
  serial++;
  const now = Date.now();
  return sampleEvent(serial, {
    latitud: -34.6 + (serial % 100) / 1000,
    longitud: -58.4 - (serial % 100) / 1000,
    eventTime: { epochMs: now - 1000 + (serial % 1000), subMsTicks: serial % 10_000 },
    receptionTime: { epochMs: now, subMsTicks: 0 },
    receivedAt: now,
  });
}

interface Result {
  eventsPerSecond: number;
  /** Events per second of this process's CPU time: what the rate would be if I/O never waited. */
  eventsPerCpuSecond: number;
  /** CPU µs per event of the main thread (the event loop), and of every other thread (the SQLite writer, GC helpers). */
  mainUsPerEvent: number;
  otherUsPerEvent: number;
  commits: number;
  avgCommitMs: number;
  maxCommitMs: number;
}

/** Builds its events up front (not timed) and returns the timed part. */
type Scenario = (b: EmbeddedBackends) => () => Promise<number>;

async function withBackends(sync: 'FULL' | 'NORMAL', maxGroupEvents: number, scenario: Scenario): Promise<Result> {
  const dir = fs.mkdtempSync(path.join(parentDir, 'bench-eventlog-'));
  const b = await openEmbeddedBackends({ dataDir: dir, sqliteSynchronous: sync, dedupeWindowMs: 10 * 60_000, maxGroupEvents });
  try {
    // Warm-up: statement preparation, page cache, JIT.
    await Promise.all(Array.from({ length: 2000 }, () => b.eventLog.append([makeEvent()])));
    const run = scenario(b);
    const before = b.eventLogStats();
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const mainBefore = mainThreadCpu();
    const events = await run();
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const mainSeconds = mainThreadCpu() - mainBefore;
    const after = b.eventLogStats();
    const commits = after.commits - before.commits;
    if (after.events - before.events !== events) throw new Error(`stored ${after.events - before.events} of ${events} events`);
    return {
      eventsPerSecond: events / seconds,
      eventsPerCpuSecond: events / ((cpu.user + cpu.system) / 1e6),
      mainUsPerEvent: (mainSeconds * 1e6) / events,
      otherUsPerEvent: ((cpu.user + cpu.system) / 1e6 - mainSeconds) * 1e6 / events,
      commits,
      avgCommitMs: (after.commitMs - before.commitMs) / Math.max(1, commits),
      maxCommitMs: after.maxCommitMs,
    };
  } finally {
    await b.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** This process's main thread's CPU seconds (/proc; 0 where there is none). */
const mainThreadCpu = (): number => threadCpuSecondsFine(process.pid, process.pid) ?? 0;

async function expectStored(outcomes: Promise<unknown>[]): Promise<void> {
  for (const batch of (await Promise.all(outcomes)) as { ok: boolean }[][]) {
    for (const o of batch) if (!o.ok) throw new Error('an append was refused');
  }
}

/** All callers issue their append in the same event-loop turn. */
function burst(callers: number, perCall: number): Scenario {
  return (b) => {
    const batches = Array.from({ length: callers }, () => Array.from({ length: perCall }, makeEvent));
    return async () => {
      await expectStored(batches.map((batch) => b.eventLog.append(batch)));
      return callers * perCall;
    };
  };
}

/** `clients` callers, each appending one event and waiting for it before sending the next. */
function closedLoop(clients: number, total: number): Scenario {
  return (b) => {
    const events = Array.from({ length: total }, makeEvent);
    return async () => {
      let next = 0;
      const client = async () => {
        while (next < total) {
          const [o] = await b.eventLog.append([events[next++] as EventRecord]);
          if (!o?.ok) throw new Error('an append was refused');
        }
      };
      await Promise.all(Array.from({ length: clients }, client));
      return total;
    };
  };
}

const scenarios: [string, (sync: 'FULL' | 'NORMAL') => Scenario][] = [
  ['10,000 events: 1,000 concurrent callers x 10 events (one tick)', () => burst(1000, 10)],
  ['10,000 events: 10,000 concurrent callers x 1 event (one tick)', () => burst(10_000, 1)],
  ['20,000 events: 100 closed-loop clients, 1 event each, await, repeat', () => closedLoop(100, 20_000)],
  ['20,000 events: 1,000 closed-loop clients, 1 event each, await, repeat', () => closedLoop(1000, 20_000)],
  ['one caller, 1 event per append, awaited (a commit per event)', (sync) => closedLoop(1, sync === 'FULL' ? 2000 : 5000)],
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

console.log(`EventLog group commit, better-sqlite3, WAL; dir ${parentDir}; median of ${reps} runs; node ${process.version}`);
for (const sync of modes) for (const cap of caps) {
  console.log(`\nsynchronous=${sync}, group cap ${cap} events`);
  for (const [name, make] of scenarios) {
    const results: Result[] = [];
    for (let i = 0; i < reps; i++) results.push(await withBackends(sync, cap, make(sync)));
    const eps = median(results.map((r) => r.eventsPerSecond));
    const epcs = median(results.map((r) => r.eventsPerCpuSecond));
    const mainUs = median(results.map((r) => r.mainUsPerEvent));
    const otherUs = median(results.map((r) => r.otherUsPerEvent));
    const commits = median(results.map((r) => r.commits));
    const avg = median(results.map((r) => r.avgCommitMs));
    const max = Math.max(...results.map((r) => r.maxCommitMs));
    console.log(
      `  ${name}\n    ${Math.round(eps).toLocaleString('en-US')} events/s ` +
        `(${Math.round(epcs).toLocaleString('en-US')} per CPU-second; CPU µs/event: main thread ${mainUs.toFixed(1)}, other threads ${otherUs.toFixed(1)}), ${commits} commits, ` +
        `commit ${avg.toFixed(2)} ms avg / ${max.toFixed(1)} ms max`,
    );
  }
}
