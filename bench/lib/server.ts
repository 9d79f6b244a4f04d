import { Agent, fetch } from 'undici';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { pinned } from './pin.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readServer, type Reading } from './meter.js';
import { peakRssKb } from './proc.js';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
let builtOnce = false;

export interface BenchServer {
  serviceUrl: string;
  adminUrl: string;
  child: ChildProcess;
  admin(method: string, p: string, body?: unknown): Promise<unknown>;
  /** Peak resident set size of the server process so far (kB), from /proc. */
  rssKb(): number;
  /** The server's cumulative counters now (CPU, page faults, GC pauses, RSS): bench/lib/meter.ts. */
  reading(): Reading;
  /** Where it writes its GC pauses (bench/lib/gc-meter.mjs). */
  gcFile: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Node.js flags (e.g. `--cpu-prof`). */
  nodeArgs?: string[];
  /** Another checkout whose `dist/` (already built) runs instead of this one (A/B runs). */
  root?: string;
  /** The entry point under the checkout: `dist/main.js` (`npm start`) unless given. */
  script?: string;
  /** PEM CA the admin calls trust (the server runs with TLS_CERT_FILE signed by it). */
  ca?: string;
  /** The Node.js executable (an A/B across runtimes); the bench's own unless given. */
  node?: string;
}

/**
 * The Node.js flags and the environment (its leading NAME=value words) the checkout's own npm script
 * gives `script` (`npm start` for dist/main.js, `npm run gateway` for dist/gateway/main.js): the bench
 * measures the server as it is launched.
 */
function launchOf(root: string, script: string): { flags: string[]; env: Record<string, string> } {
  const scripts = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
  for (const command of Object.values(scripts)) {
    const words = command.split(' ');
    const node = words.findIndex((w) => !/^[A-Z_]+=/.test(w));
    if (words[node] !== 'node' || words[words.length - 1] !== script) continue;
    const env = Object.fromEntries(words.slice(0, node).map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]));
    return { flags: words.slice(node + 1, -1).filter((word) => word.startsWith('--')), env };
  }
  return { flags: [], env: {} };
}

/** Runs the gateway (`dist/main.js`, what `npm start` runs) in its own process on a fresh DATA_DIR. */
export async function startServer(env: Record<string, string> = {}, options: StartOptions = {}): Promise<BenchServer> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-bench-'));
  // BENCH_ROOT=<other checkout, built> runs that build instead (before/after of any bench script).
  const root = options.root ?? (process.env.BENCH_ROOT || ROOT);
  // The compiled build, as `npm start` and the Docker image run it (tsx adds per-closure overhead).
  if (!builtOnce && root === ROOT) {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
    builtOnce = true;
  }
  // BENCH_CPU_PROF_DIR=dir profiles the server of any bench script (summarise: bench/profile.ts <file>).
  const profiling = process.env.BENCH_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : [];
  const script = options.script ?? 'dist/main.js';
  // Every server reports its GC pauses (bench/lib/gc-meter.mjs, plain JavaScript: any build can load it).
  const gcFile = path.join(dataDir, 'gc.json');
  const meter = ['--import', pathToFileURL(path.join(ROOT, 'bench', 'lib', 'gc-meter.mjs')).href];
  // BENCH_NODE=<node executable> runs any bench script's server on another runtime (with BENCH_ROOT, an older build).
  const node = options.node ?? (process.env.BENCH_NODE || process.execPath);
  const launch = launchOf(root, script);
  const [command, args] = pinned(node, [...launch.flags, ...meter, ...profiling, ...(options.nodeArgs ?? []), script], process.env.BENCH_PIN_SERVER);
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, ...launch.env, DATA_DIR: dataDir, PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', ADMIN_TOKEN: 'bench', LOG_LEVEL: 'info', BENCH_GC_FILE: gcFile, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const { service, admin } = await new Promise<{ service: string; admin: string }>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.includes('"service"'));
      if (line) resolve(JSON.parse(line) as { service: string; admin: string });
    });
    child.on('exit', (code) => reject(new Error(`server exited (${code})`)));
  });
  const dispatcher = options.ca === undefined ? undefined : new Agent({ connect: { ca: options.ca } });
  const adminCall = async (method: string, p: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(`${admin.replace('//127.0.0.1:', '//localhost:')}${p}`, {
      dispatcher,
      method,
      headers: { Authorization: 'Bearer bench', 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return text ? (JSON.parse(text) as unknown) : null;
  };
  return {
    serviceUrl: service,
    adminUrl: admin,
    child,
    admin: adminCall,
    rssKb: () => peakRssKb(child.pid!),
    reading: () => readServer(child.pid!, gcFile),
    gcFile,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
