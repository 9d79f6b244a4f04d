/**
 * What the bench scripts read from /proc about a process: CPU time (all threads, or one) and
 * resident memory. The one place these files are parsed.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ). */
export const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/**
 * CPU time (user + system) of a process, all its threads, or of one thread (`tid`; the main
 * thread's id is the pid), in seconds; null when it is gone.
 */
export function cpuSeconds(pid: number, tid?: number): number | null {
  try {
    const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return null;
  }
}

/**
 * CPU time of one thread in seconds from /proc/<pid>/task/<tid>/schedstat (nanoseconds, where
 * stat counts 10 ms ticks); null when it is gone or the kernel keeps no schedstat.
 */
export function threadCpuSecondsFine(pid: number, tid: number): number | null {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e9;
  } catch {
    return null;
  }
}

/** CPU seconds used by a server since the probe started: all threads, and its main thread. */
export interface CpuUse {
  seconds: number;
  mainSeconds: number;
  /** Wall-clock seconds since the probe started. */
  wall: number;
  /** % of one core: all threads, and the main thread. */
  total: number;
  main: number;
}

/** Starts measuring a process's CPU use; the returned function reads it since then. */
export function cpuProbe(pid: number): () => CpuUse {
  const t0 = performance.now();
  const total0 = cpuSeconds(pid) ?? 0;
  const main0 = cpuSeconds(pid, pid) ?? 0;
  return () => {
    const wall = Math.max(0.001, (performance.now() - t0) / 1000);
    const seconds = (cpuSeconds(pid) ?? total0) - total0;
    const mainSeconds = (cpuSeconds(pid, pid) ?? main0) - main0;
    return { seconds, mainSeconds, wall, total: (seconds / wall) * 100, main: (mainSeconds / wall) * 100 };
  };
}

/**
 * Samples a short-lived process's CPU time while it runs (its /proc entry is gone once it exits,
 * so the last sample is what is known): for a load generator such as wrk.
 */
export function sampleCpu(pid: number, everyMs = 200): { stop(): { seconds: number; over: number } } {
  const start = Date.now();
  let last = { seconds: 0, at: start };
  const timer = setInterval(() => {
    const s = cpuSeconds(pid);
    if (s !== null) last = { seconds: s, at: Date.now() };
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return { seconds: last.seconds, over: Math.max(0.001, (last.at - start) / 1000) };
    },
  };
}

type StatusField = 'VmRSS' | 'VmHWM' | 'RssAnon' | 'RssFile' | 'RssShmem';

/** Memory lines of /proc/PID/status from one read (one instant), kB each (0 when the process is gone). */
export function statusKbOf<F extends StatusField>(pid: number, fields: readonly F[]): Record<F, number> {
  let text = '';
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    // gone: every field 0
  }
  const out = {} as Record<F, number>;
  for (const field of fields) out[field] = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1] ?? 0);
  return out;
}

/** One memory line of /proc/PID/status, kB (0 when the process is gone). */
export const statusKb = (pid: number, field: StatusField): number => statusKbOf(pid, [field])[field];

/** Resident set size now, kB (0 when the process is gone). */
export const rssKb = (pid: number): number => statusKb(pid, 'VmRSS');

/** Peak resident set size (VmHWM) so far, kB (0 when the process is gone). */
export const peakRssKb = (pid: number): number => statusKb(pid, 'VmHWM');

/**
 * Counters of a process summed over all its threads (/proc/<pid>/task/<tid>/stat): user and system
 * CPU seconds, and minor and major page faults. Threads that ended inside a window are lost from
 * the sum, so read it around windows during which the server's threads stay up.
 */
export interface ProcCounters {
  userSeconds: number;
  systemSeconds: number;
  minorFaults: number;
  majorFaults: number;
}

export function procCounters(pid: number): ProcCounters | null {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  const out: ProcCounters = { userSeconds: 0, systemSeconds: 0, minorFaults: 0, majorFaults: 0 };
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // Fields 10, 12, 14 and 15 of proc(5), counted from the state (field 3) as 0 here.
      out.minorFaults += Number(fields[7]);
      out.majorFaults += Number(fields[9]);
      out.userSeconds += Number(fields[11]) / CLK_TCK;
      out.systemSeconds += Number(fields[12]) / CLK_TCK;
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}
