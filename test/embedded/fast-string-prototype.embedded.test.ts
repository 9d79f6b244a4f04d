/**
 * String.prototype must stay in V8's fast-properties mode in every thread that serves requests:
 * in dictionary mode every string method lookup in optimized code is a generic LoadIC call
 * (6x slower string loops; see shared/runtime/fast-string-prototype.ts for what put it there). V8's
 * natives syntax, in a child process, is the only way to ask.
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/paths.js';

const ROOT = REPO;
const PROBE = path.join(ROOT, 'test', 'fixtures', 'string-prototype-probe.mjs');

describe('String.prototype keeps fast properties', () => {
  it('restoreFastStringPrototype makes a dictionary-mode String.prototype fast again', () => {
    const script = `
      const fast = new Function('o', 'return %HasFastProperties(o)');
      const before = fast(String.prototype);
      class Verbatim extends String {}
      const normalized = fast(String.prototype);
      const { restoreFastStringPrototype } = await import(${JSON.stringify(path.join(ROOT, 'shared', 'runtime', 'fast-string-prototype.ts'))});
      restoreFastStringPrototype();
      console.log(JSON.stringify({ before, normalized, after: fast(String.prototype), still: new Verbatim('x').length }));`;
    const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    // `normalized` false shows the probe can see the slow mode this guards against.
    expect(JSON.parse(out.trim())).toEqual({ before: true, normalized: false, after: true, still: 1 });
  });

  it('holds in the running service: the main thread and a front-end thread', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-fast-string-'));
    const child = spawn(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--import', PROBE, 'main.ts'], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir, PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', ADMIN_TOKEN: 'probe', GATEWAY_THREADS: '2', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const seen = await new Promise<Map<string, string>>((resolve, reject) => {
        let listening = false;
        let out = '';
        let err = '';
        const afterStart = new Map<string, string>();
        const timer = setTimeout(() => reject(new Error(`no report from both threads within 30 s:\n${out}\n${err.slice(-2000)}`)), 30_000);
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('"service"')) listening = true;
        });
        child.stderr.on('data', (d: Buffer) => {
          err += d.toString();
          if (!listening) return;
          for (const m of err.matchAll(/string-prototype thread=(\d+) fast=(true|false)/g)) afterStart.set(m[1]!, m[2]!);
          err = '';
          // Thread 0 is the main thread; the front-end threads report with their own ids.
          if (afterStart.has('0') && afterStart.size >= 2) {
            clearTimeout(timer);
            resolve(afterStart);
          }
        });
        child.once('exit', (code) => reject(new Error(`service exited (${code}):\n${out}\n${err.slice(-2000)}`)));
      });
      expect(Object.fromEntries(seen)).toEqual(Object.fromEntries([...seen.keys()].map((thread) => [thread, 'true'])));
      expect(seen.get('0')).toBe('true');
    } finally {
      child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
