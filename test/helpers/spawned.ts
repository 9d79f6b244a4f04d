import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

/** A process of ours (gateway/main.ts, worker/main.ts...) run as operators run it: its own environment, its output kept. */
export class Spawned {
  readonly output: string[] = [];
  readonly exited: Promise<number | null>;
  private readonly waiters: { test: (line: string) => boolean; resolve: (line: string) => void }[] = [];

  private constructor(readonly proc: ChildProcess) {
    const take = (chunk: Buffer): void => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue;
        this.output.push(line);
        for (const w of [...this.waiters]) {
          if (w.test(line)) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve(line);
          }
        }
      }
    };
    proc.stdout?.on('data', take);
    proc.stderr?.on('data', take);
    this.exited = new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
  }

  /** `tsx <entry> [args]` with only PATH and HOME of this environment, plus `env`. */
  static start(entry: string, env: Record<string, string>, args: readonly string[] = []): Spawned {
    const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', LOG_LEVEL: 'info' };
    return new Spawned(spawn(TSX, [entry, ...args], { cwd: ROOT, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
  }

  /** The first line (seen or to come) matching `pattern`; rejects when the process exits first or after `timeoutMs`. */
  async line(pattern: RegExp, timeoutMs = 90_000): Promise<string> {
    const seen = this.output.find((l) => pattern.test(l));
    if (seen !== undefined) return seen;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; output:\n${this.output.join('\n')}`)), timeoutMs);
      this.waiters.push({ test: (l) => pattern.test(l), resolve: (l) => { clearTimeout(timer); resolve(l); } });
      void this.exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`exited (${code}) before a line matching ${pattern}; output:\n${this.output.join('\n')}`));
      });
    });
  }

  /** Exit code within `timeoutMs`, or null (and the process killed) when it did not exit. */
  async exitWithin(timeoutMs: number): Promise<number | null | 'running'> {
    const timer = new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), timeoutMs));
    const result = await Promise.race([this.exited, timer]);
    if (result === 'running') await this.stop();
    return result;
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(timer);
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
