import { spawn, type ChildProcess } from 'node:child_process';
import { pinned } from './pin.js';
import path from 'node:path';

/** The Lua scripts driving wrk (bench/wrk/*.lua; common.lua documents their arguments). */
export const WRK_DIR = path.resolve(import.meta.dirname, '..', 'wrk');

export interface WrkRun {
  /** Service URL, 127.0.0.1 only. */
  url: string;
  /** A file in bench/wrk. */
  script: string;
  seconds: number;
  connections: number;
  /** First script argument: where the script's event counter starts (every event distinct). */
  seed: number;
  /** Further script arguments (a session cookie, a rate). */
  args?: string[];
  /** Runs wrk as the leader of its own process group (so a caller can kill the group). */
  detached?: boolean;
  /** Sees the child as soon as it is spawned (tracking, CPU sampling). */
  onSpawn?: (child: ChildProcess) => void;
  /** The wrk binary (default `wrk`). */
  wrk?: string;
}

/** What wrk and the bench/wrk scripts print; null where the output lacks it. */
export interface WrkResult {
  code: number | null;
  stdout: string;
  stderr: string;
  reqPerSec: number | null;
  requests: number | null;
  /** Latency percentiles in ms. */
  p50: number | null;
  p99: number | null;
  /** Answers the script checked / that failed its check (lua_checked / lua_bad). */
  checked: number | null;
  bad: number | null;
  /** Paced script: slots sent more than 1 ms late. */
  late: number | null;
  non2xx: number;
  /** connect + read + write + timeout, and wrk's own line for them ('' when none). */
  socketErrors: number;
  socketDetail: string;
}

function toMs(value: string, unit: string): number {
  const n = Number(value);
  switch (unit) {
    case 'us':
      return n / 1000;
    case 'ms':
      return n;
    case 's':
      return n * 1000;
    case 'm':
      return n * 60_000;
    default:
      throw new Error(`unknown wrk time unit ${unit}`);
  }
}

/** Reads wrk's report (with --latency) and the scripts' lua_* lines. */
export function parseWrk(stdout: string): Omit<WrkResult, 'code' | 'stdout' | 'stderr'> {
  const num = (re: RegExp): number | null => {
    const m = re.exec(stdout);
    return m ? Number(m[1]) : null;
  };
  const percentile = (p: string): number | null => {
    const m = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(stdout);
    return m ? toMs(m[1]!, m[2]!) : null;
  };
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  return {
    reqPerSec: num(/Requests\/sec:\s+([\d.]+)/),
    requests: num(/(\d+) requests in /),
    p50: percentile('50'),
    p99: percentile('99'),
    checked: num(/lua_checked: (\d+)/),
    bad: num(/lua_bad: (\d+)/),
    late: num(/lua_late: (\d+)/),
    non2xx: num(/Non-2xx or 3xx responses: (\d+)/) ?? 0,
    socketErrors: sock ? sock.slice(1, 5).reduce((a, b) => a + Number(b), 0) : 0,
    socketDetail: sock ? sock[0].replace('Socket errors: ', '') : '',
  };
}

/** Runs `wrk -t1 -c<connections> -d<seconds>s --latency -s <script> <url> -- <seed> [args]`. */
export async function runWrk(run: WrkRun): Promise<WrkResult> {
  if (new URL(run.url).hostname !== '127.0.0.1') throw new Error(`refusing to send traffic to ${run.url}: only 127.0.0.1 is allowed`);
  const argv = [
    '-t1',
    `-c${run.connections}`,
    `-d${run.seconds}s`,
    '--latency',
    '-s',
    path.join(WRK_DIR, run.script),
    run.url,
    '--',
    String(run.seed),
    ...(run.args ?? []),
  ];
  const [command, commandArgs] = pinned(run.wrk ?? 'wrk', argv, process.env.BENCH_PIN_WRK);
  const child = spawn(command, commandArgs, { stdio: ['ignore', 'pipe', 'pipe'], detached: run.detached ?? false });
  run.onSpawn?.(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c) => resolve(c));
  });
  return { code, stdout, stderr, ...parseWrk(stdout) };
}
