/**
 * Child processes of a bench script: every child is tracked until it has exited and killed on any
 * way out (normal end, failure, Ctrl-C), and a server started here is ready once it prints one
 * JSON line `{"url": ...}` on stdout.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** Children started here: `group` children lead their own process group (detached). */
const children = new Map<ChildProcess, { group: boolean }>();

export function track(child: ChildProcess, group: boolean): void {
  children.set(child, { group });
  child.once('exit', () => children.delete(child));
}

export function signal(child: ChildProcess, sig: NodeJS.Signals, group: boolean): void {
  if (child.pid === undefined) return;
  try {
    // A negative pid signals the whole process group: the child and anything it started.
    process.kill(group ? -child.pid : child.pid, sig);
  } catch {
    // already gone
  }
}

export function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (exited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** SIGTERM, then SIGKILL after `graceMs`. */
export async function terminate(child: ChildProcess, group: boolean, graceMs = 5000): Promise<void> {
  if (exited(child)) return;
  signal(child, 'SIGTERM', group);
  if (await waitExit(child, graceMs)) return;
  signal(child, 'SIGKILL', group);
  await waitExit(child, 2000);
}

export function killAllNow(): void {
  for (const [child, { group }] of children) signal(child, 'SIGKILL', group);
}

/** Kills every tracked child when this process exits or is interrupted. */
export function stopChildrenOnExit(log: (msg: string) => void): void {
  process.once('exit', killAllNow);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      log(`${sig}: stopping every process started here`);
      void Promise.all([...children].map(([c, { group }]) => terminate(c, group))).finally(() => process.exit(130));
    });
  }
}

/** Traffic goes to loopback only: refuse anything else before sending a byte. */
export function loopback(url: string): string {
  const host = new URL(url).hostname;
  if (host !== '127.0.0.1') throw new Error(`refusing to send traffic to ${url}: only 127.0.0.1 is allowed`);
  return url;
}

export interface ReadyServer {
  url: string;
  pid: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts a server in its own process group and waits (up to `readyMs`) for its `{"url"}` line;
 * stderr is passed through. The URL must be on 127.0.0.1.
 */
export async function spawnReady(
  name: string,
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; readyMs?: number } = {},
): Promise<ReadyServer> {
  const readyMs = options.readyMs ?? 60_000;
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  track(child, true);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`${name}: not ready after ${readyMs / 1000} s`)), readyMs);
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        for (const line of out.split('\n')) {
          if (!line.startsWith('{')) continue;
          try {
            const parsed = JSON.parse(line) as { url?: unknown };
            if (typeof parsed.url === 'string') {
              clearTimeout(timer);
              resolve(parsed.url);
            }
          } catch {
            // partial line
          }
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${name}: exited (${code}) before it was ready`));
      });
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    child.stdout.resume();
    return { url: loopback(url), pid: child.pid!, child, stop: () => terminate(child, true) };
  } catch (err) {
    await terminate(child, true);
    throw err;
  }
}
