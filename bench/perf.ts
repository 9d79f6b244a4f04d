/**
 * Where the server's CPU goes, per thread, below JavaScript: Linux `perf` (Debian `linux-perf`)
 * samples the gateway under one wrk scenario, with V8 writing its JIT symbols
 * (`--perf-basic-prof`). Prints CPU µs per request per thread (user and system, from /proc), each
 * thread's share by binary (JIT code, V8/Node, the kernel, SQLite, uWS) and the top symbols of
 * the two busiest threads (the main thread and the SQLite writer).
 *
 * What it sees that `bench/profile.ts` (V8's own profiler) does not: V8's builtins (a generic
 * property load, a Map lookup, a write barrier), the garbage collector's helper threads, the
 * kernel per system call, and the writer thread's native frames. The three findings of
 * bench/LOG.md §"2026-11-26 (third session)" came from it.
 *
 * Run: npx tsx bench/perf.ts [script.lua [wrk script args]]
 *        (env DURATION=8, WARMUP=3 (seconds of load before recording), CONNECTIONS=50, TOP=25,
 *        PERF_DATA=/tmp/gw-perf.data: the file stays for `perf report -i`; SQLITE_COMMIT=thread, the
 *        server's commit mode; PERF_EVENT=page-faults
 *        records every page fault instead of sampling the CPU: where faults per request come from)
 */
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { CLK_TCK } from './lib/proc.js';
import { startServer } from './lib/server.js';
import { runWrk } from './lib/wrk.js';

const [script = 'soap11-insert.lua', ...scriptArgs] = process.argv.slice(2);
const DURATION = Number(process.env.DURATION ?? 8);
const WARMUP = Number(process.env.WARMUP ?? 3);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
const TOP = Number(process.env.TOP ?? 25);
const PERF_DATA = process.env.PERF_DATA ?? '/tmp/gw-perf.data';
/** cpu-clock sampled at 2 kHz, or a software event counted whole (`-c 1`: page-faults, minor-faults). */
const PERF_EVENT = process.env.PERF_EVENT ?? 'cpu-clock';
const PERF_RATE = PERF_EVENT === 'cpu-clock' ? ['-F', '2000'] : ['-c', '1'];

interface ThreadCpu {
  name: string;
  user: number;
  system: number;
}

/** User and system CPU seconds of every thread of `pid`, by thread id. */
function threadCpu(pid: number): Map<string, ThreadCpu> {
  const threads = new Map<string, ThreadCpu>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      threads.set(tid, { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), user: Number(fields[11]) / CLK_TCK, system: Number(fields[12]) / CLK_TCK });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return threads;
}

/** `perf report` lines as [percent, rest]. */
function report(args: string[]): [number, string][] {
  const out = execFileSync('perf', ['report', '-i', PERF_DATA, '--stdio', '--no-children', '-g', 'none', ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] });
  return out
    .split('\n')
    .filter((line) => /^\s+\d/.test(line))
    .map((line) => {
      const m = /^\s+([\d.]+)%\s+(.*?)\s*$/.exec(line)!;
      return [Number(m[1]), m[2]!.replace(/(\s+-)+$/, '').replace(/\s{2,}/g, '  ')] as [number, string];
    });
}

try {
  execFileSync('perf', ['--version'], { stdio: 'ignore' });
} catch {
  throw new Error('bench/perf.ts needs Linux perf (Debian: apt-get install linux-perf)');
}

const server = await startServer(
  { GATEWAY_THREADS: process.env.GATEWAY_THREADS ?? '1', SQLITE_SYNCHRONOUS: 'FULL', SQLITE_COMMIT: process.env.SQLITE_COMMIT ?? 'thread' },
  { nodeArgs: ['--perf-basic-prof'] },
);
const pid = server.child.pid!;
try {
  await server.admin('POST', '/admin/providers', { systemUser: 'bench', password: 'bench-secret' });
  await runWrk({ url: server.serviceUrl, script, seconds: WARMUP, connections: CONNECTIONS, seed: 1, args: scriptArgs });
  const before = threadCpu(pid);
  const perf = spawn('perf', ['record', '-q', '-e', PERF_EVENT, ...PERF_RATE, '-g', '-p', String(pid), '-o', PERF_DATA], { stdio: 'ignore' });
  const run = await runWrk({ url: server.serviceUrl, script, seconds: DURATION, connections: CONNECTIONS, seed: 100_000_000, args: scriptArgs });
  perf.kill('SIGINT');
  await new Promise((resolve) => perf.once('exit', resolve));
  const after = threadCpu(pid);
  const requests = run.requests ?? 0;
  if (requests === 0 || (run.bad ?? 0) > 0) throw new Error(`the run answered ${requests} requests, ${run.bad ?? 0} of them wrong`);

  console.log(`\n${script} ${scriptArgs.join(' ')}: ${run.reqPerSec} req/s, ${requests} requests, p99 ${run.p99} ms (perf's sampling slows the server a little)`);
  console.log('\nCPU µs per request by thread (/proc, the measured run):');
  const us = (seconds: number): string => ((seconds * 1e6) / requests).toFixed(1).padStart(6);
  let user = 0;
  let system = 0;
  for (const [tid, a] of after) {
    const b = before.get(tid) ?? { name: a.name, user: 0, system: 0 };
    user += a.user - b.user;
    system += a.system - b.system;
    if (a.user + a.system - b.user - b.system > 0.02) console.log(`  thread ${tid.padEnd(8)} user ${us(a.user - b.user)}  system ${us(a.system - b.system)}${tid === String(pid) ? '  (main)' : ''}`);
  }
  console.log(`  all threads      user ${us(user)}  system ${us(system)}`);

  console.log('\nshare of all samples by thread and binary:');
  for (const [pct, what] of report(['--sort', 'pid,dso']).slice(0, 14)) console.log(`${pct.toFixed(2).padStart(7)}%  ${what}`);
  const busiest = report(['--sort', 'pid'])
    .slice(0, 2)
    .map(([, what]) => /(\d+):/.exec(what)?.[1])
    .filter((tid): tid is string => tid !== undefined);
  for (const tid of busiest) {
    console.log(`\ntop ${TOP} symbols of thread ${tid}${tid === String(pid) ? ' (main)' : ''} (share of all samples):`);
    for (const [pct, what] of report(['--tid', tid, '--sort', 'dso,symbol']).slice(0, TOP)) console.log(`${pct.toFixed(2).padStart(7)}%  ${what}`);
  }
  console.log(`\nperf data: ${PERF_DATA} (perf report -i ${PERF_DATA}; callers: -G)`);
} finally {
  await server.stop();
}
