/**
 * The gateway under fuzz: the real `main.ts` in embedded mode, as a child process, so a crash
 * is an exit we see and its RSS is the server's own, not the fuzzer's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, scryptSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openEmbeddedBackends } from '../../shared/backends/embedded/index.js';
import { FUZZ_PASSWORD, FUZZ_USER } from './corpus.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const CANARY_USER = 'canary';
export const CANARY_PASSWORD = 'canary-pw-1';
const ADMIN_TOKEN = 'fuzz-admin-token';

/**
 * A valid stored hash with a tiny scrypt cost (the format carries its parameters): mutated
 * passwords are wrong passwords, and each would otherwise cost the default 16 MB scrypt.
 */
function cheapHash(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, 32, { N: 16, r: 1, p: 1 });
  return `scrypt$16$1$1$${salt.toString('base64')}$${key.toString('base64')}`;
}

async function seedProviders(dataDir: string): Promise<void> {
  const backends = await openEmbeddedBackends({ dataDir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 600_000, offThreadCommits: false });
  try {
    const now = Date.now();
    for (const [systemUser, password] of [
      [FUZZ_USER, FUZZ_PASSWORD],
      [CANARY_USER, CANARY_PASSWORD],
    ] as const) {
      await backends.providers.create({ systemUser, passwordHash: cheapHash(password), enabled: true, timeZone: null, requireRegisteredVehicles: false, createdAt: now, updatedAt: now });
    }
  } finally {
    await backends.close();
  }
}

export interface TargetOptions {
  /** `tsx` runs main.ts from source; `dist` runs the compiled build (`npm run build` first). */
  runner: 'tsx' | 'dist';
}

export class FuzzTarget {
  port = 0;
  adminUrl = '';
  exit: { code: number | null; signal: string | null } | null = null;
  /** The last log lines (JSON, from stdout and stderr) for crash reports. */
  readonly logTail: string[] = [];
  /** Error-level log messages, counted by message. */
  readonly loggedErrors = new Map<string, number>();
  private child!: ChildProcess;
  private dataDir = '';

  static async start(options: TargetOptions = { runner: 'tsx' }): Promise<FuzzTarget> {
    const t = new FuzzTarget();
    t.dataDir = mkdtempSync(path.join(tmpdir(), 'gw-fuzz-'));
    await seedProviders(t.dataDir);
    // Embedded mode whatever the caller's environment says.
    const { REDIS_URL, KAFKA_BROKERS, CLICKHOUSE_URL, NODE_OPTIONS, ...env } = process.env;
    Object.assign(env, {
      DATA_DIR: t.dataDir,
      PORT: '0',
      ADMIN_PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_HOST: '127.0.0.1',
      ADMIN_TOKEN,
      SQLITE_SYNCHRONOUS: 'NORMAL',
      LOG_LEVEL: 'info',
      // Mutated passwords must not lock the fuzzed provider out (every later case would be -1)...
      LOCKOUT_MAX_FAILURES: '1000000000',
      LOCKOUT_USER_MAX_FAILURES: '1000000000',
      // ...nor change it (a changed password makes every later case a wrong one, each a full
      // scrypt): no NuevaClave that fits in a 1 MiB body reaches this minimum.
      PASSWORD_MIN_LENGTH: '2000000',
    });
    const args = options.runner === 'tsx' ? ['--import', 'tsx', 'main.ts'] : ['dist/main.js'];
    t.child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`gateway did not start in 60 s:\n${t.logTail.join('\n')}`)), 60_000);
      const onLine = (line: string): void => {
        t.remember(line);
        if (t.port !== 0) return;
        const m = /"service":"http:\/\/127\.0\.0\.1:(\d+)\/[^"]*".*"admin":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(line);
        if (m) {
          t.port = Number(m[1]);
          t.adminUrl = m[2]!;
          clearTimeout(timer);
          resolve();
        }
      };
      lines(t.child.stdout!, onLine);
      lines(t.child.stderr!, (l) => t.remember(l));
      t.child.once('exit', (code, signal) => {
        t.exit = { code, signal };
        clearTimeout(timer);
        reject(new Error(`gateway exited (${code ?? signal}) before listening:\n${t.logTail.join('\n')}`));
      });
    });
    return t;
  }

  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** Resident set size of the gateway process in bytes (Linux /proc), null once it is gone. */
  rss(): number | null {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${this.pid}/status`, 'utf8'));
      return m ? Number(m[1]) * 1024 : null;
    } catch {
      return null;
    }
  }

  onExit(listener: (code: number | null, signal: string | null) => void): void {
    if (this.exit !== null) listener(this.exit.code, this.exit.signal);
    else this.child.once('exit', (code, signal) => listener(code, signal));
  }

  async admin(method: string, pathAndQuery: string, body?: unknown): Promise<{ status: number; json: unknown }> {
    const res = await fetch(`${this.adminUrl}${pathAndQuery}`, {
      method,
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, json: text === '' ? null : (JSON.parse(text) as unknown) };
  }

  async stop(): Promise<void> {
    if (this.exit === null) {
      const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  private remember(line: string): void {
    this.logTail.push(line.length > 2000 ? `${line.slice(0, 2000)}…` : line);
    if (this.logTail.length > 50) this.logTail.shift();
    if (line.startsWith('{"level":50') || line.startsWith('{"level":60')) {
      const msg = /"msg":"([^"]*)"/.exec(line)?.[1] ?? line.slice(0, 100);
      const err = /"message":"([^"]{0,120})/.exec(line)?.[1];
      const key = err ? `${msg}: ${err}` : msg;
      this.loggedErrors.set(key, (this.loggedErrors.get(key) ?? 0) + 1);
    }
  }
}

function lines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop() ?? '';
    for (const p of parts) if (p !== '') onLine(p);
  });
}
