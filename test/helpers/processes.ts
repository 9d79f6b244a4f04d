/**
 * Gateways and workers as real processes (so that a test can kill -9 one, or read its memory):
 * `gateway/main.ts` or `worker/main.ts` under tsx with the given environment.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

export interface Proc {
  child: ChildProcess;
  /** The SOAP service URL (gateways) or '' (worker). */
  serviceUrl: string;
  adminUrl: string;
  alive(): boolean;
  kill9(): void;
  stop(): Promise<void>;
  /** The last 8,000 characters the process wrote (stdout and stderr): what a failing test prints. */
  logTail(): string;
  /** Every log line the process wrote to stdout so far (JSON lines). */
  lines(): string[];
  /** Resident memory now, from /proc (bytes); null once it exited. */
  rss(): number | null;
  /** Resolves with the exit code once the process exited. */
  exited: Promise<number | null>;
}

/** Runs `gateway/main.ts` or `worker/main.ts` as a child process, resolved once it started. */
export function startProc(kind: 'gateway' | 'worker', env: Record<string, string>): Promise<Proc> {
  return startNode(kind, ['--import', 'tsx', `${kind}/main.ts`], ROOT, env);
}

/**
 * Runs `node <args>` in `cwd` as a child process with a fresh DATA_DIR, resolved once it started:
 * a gateway (`main.ts`, `dist/main.js`...) once it logged its service and admin URLs, a worker
 * after three seconds up (it logs no start line).
 */
export async function startNode(kind: 'gateway' | 'worker', args: string[], cwd: string, env: Record<string, string>): Promise<Proc> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-proc-'));
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env, DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (d: Buffer) => (tail = (tail + d.toString()).slice(-8000));
  child.stderr.on('data', keep);
  const lines: string[] = [];
  let partial = '';
  child.stdout.on('data', (d: Buffer) => {
    const parts = (partial + d.toString()).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts.filter((l) => l !== ''));
  });
  const exitedWith = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const urls = await new Promise<{ serviceUrl: string; adminUrl: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${kind} did not start within 60 s:\n${tail}`)), 60_000);
    const done = (v: { serviceUrl: string; adminUrl: string }) => {
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve(v);
    };
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`${kind} exited with ${code}:\n${tail}`));
    };
    child.on('exit', onExit);
    // The worker logs no start line: it runs once the process is up and its clients are open.
    if (kind === 'worker') setTimeout(() => done({ serviceUrl: '', adminUrl: '' }), 3000);
    child.stdout.on('data', (d: Buffer) => {
      keep(d);
      const m = /"service":"([^"]+)".*"admin":"([^"]+)"/.exec(tail);
      if (m !== null) done({ serviceUrl: m[1]!, adminUrl: m[2]! });
    });
  });
  let exited = false;
  void exitedWith.then(() => (exited = true));
  return {
    child,
    ...urls,
    alive: () => !exited,
    logTail: () => tail,
    lines: () => lines,
    exited: exitedWith,
    rss: () => {
      if (exited || child.pid === undefined) return null;
      try {
        const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
        return kb === undefined ? null : Number(kb) * 1024;
      } catch {
        return null;
      }
    },
    kill9: () => {
      if (exited) return;
      child.kill('SIGKILL');
      // Nothing starts again in this directory (each start has its own): gone once the process is.
      void exitedWith.then(() => rmSync(dataDir, { recursive: true, force: true }));
    },
    async stop() {
      if (!exited) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exitedWith;
        clearTimeout(killer);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

