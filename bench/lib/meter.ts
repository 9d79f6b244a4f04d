/**
 * What every bench reports for a server over a measured window, from readings taken at its start
 * and end: requests per second, CPU per request (user and kernel apart), page faults per request,
 * the share of the window the main thread spent paused in GC (bench/lib/gc-meter.mjs, preloaded by
 * startServer) and the RSS at the end. One definition, so that ours, the peers and the ceiling
 * are measured alike (the peers report no GC: they have none, or none we can see).
 */
import { existsSync, readFileSync } from 'node:fs';
import { procCounters, rssKb, type ProcCounters } from './proc.js';

export interface Reading {
  at: number;
  counters: ProcCounters;
  /** Cumulative main-thread GC pause (ms); null when the process reports none. */
  gcMs: number | null;
  rssKb: number;
}

export function readServer(pid: number, gcFile: string | null): Reading {
  const counters = procCounters(pid);
  if (counters === null) throw new Error(`process ${pid} is gone`);
  let gcMs: number | null = null;
  if (gcFile !== null && existsSync(gcFile)) gcMs = (JSON.parse(readFileSync(gcFile, 'utf8')) as { ms: number }).ms;
  return { at: performance.now(), counters, gcMs, rssKb: rssKb(pid) };
}

export interface Window {
  requests: number;
  seconds: number;
  reqPerSec: number;
  /** CPU µs per request: all, user, kernel. */
  cpuUs: number;
  userUs: number;
  systemUs: number;
  /** Minor + major page faults per request. */
  faultsPerRequest: number;
  /** Main-thread GC pause as a share of the window's wall time (0..1); null when not reported. */
  gcShare: number | null;
  rssMb: number;
}

export function windowOf(before: Reading, after: Reading, requests: number): Window {
  const seconds = (after.at - before.at) / 1000;
  const user = after.counters.userSeconds - before.counters.userSeconds;
  const system = after.counters.systemSeconds - before.counters.systemSeconds;
  const faults = after.counters.minorFaults + after.counters.majorFaults - before.counters.minorFaults - before.counters.majorFaults;
  const per = (x: number): number => (requests > 0 ? x / requests : 0);
  return {
    requests,
    seconds,
    reqPerSec: requests / seconds,
    cpuUs: per((user + system) * 1e6),
    userUs: per(user * 1e6),
    systemUs: per(system * 1e6),
    faultsPerRequest: per(faults),
    gcShare: before.gcMs === null || after.gcMs === null ? null : (after.gcMs - before.gcMs) / (seconds * 1000),
    rssMb: after.rssKb / 1024,
  };
}

/** One line of a window's figures, for logs and tables. */
export function describeWindow(w: Window): string {
  const gc = w.gcShare === null ? '' : `, GC ${(w.gcShare * 100).toFixed(1)}%`;
  return `${w.reqPerSec.toFixed(0)} req/s, ${w.cpuUs.toFixed(0)} µs CPU/request (user ${w.userUs.toFixed(0)}, kernel ${w.systemUs.toFixed(0)}), ${w.faultsPerRequest.toFixed(3)} faults/request${gc}, RSS ${w.rssMb.toFixed(0)} MB`;
}
