/**
 * What `npm start` writes to its log (shared/runtime/logger.ts, LOG_FORMAT): JSON lines where a
 * machine reads them, each key once (the audit line used to carry `component` twice, a front-end
 * thread's relayed lines `thread` twice); one readable line per entry with LOG_FORMAT=pretty, as a
 * terminal gets by default.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, Spawned } from '../helpers/spawned.js';

const dirs: string[] = [];
const started: Spawned[] = [];
afterAll(async () => {
  await Promise.all(started.map((p) => p.stop()));
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** A call on a connection of its own (the kernel spreads connections over the front-end threads). */
function refusedLogin(port: number, systemUser: string): Promise<void> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: `/service.asmx/Login?SystemUser=${systemUser}&Password=x`, agent: false }, (res) => res.resume().on('end', resolve)).on('error', reject);
  });
}

async function gateway(env: Record<string, string>): Promise<{ proc: Spawned; port: number; adminPort: number; dataDir: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'log-format-'));
  dirs.push(dataDir);
  const [port, adminPort] = [await freePort(), await freePort()];
  const proc = Spawned.start('main.ts', { HOST: '127.0.0.1', PORT: String(port), ADMIN_PORT: String(adminPort), DATA_DIR: dataDir, ...env });
  started.push(proc);
  await proc.line(/operators' console/);
  return { proc, port, adminPort, dataDir };
}

/** The top-level keys of a JSON object line, duplicates kept (JSON.parse would collapse them). */
function topLevelKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      let j = i + 1;
      while (line[j] !== '"') j += line[j] === '\\' ? 2 : 1;
      if (depth === 1 && line[j + 1] === ':') keys.push(JSON.parse(line.slice(i, j + 1)) as string);
      i = j;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return keys;
}

describe('the log of npm start', () => {
  it('is JSON lines when piped, every key once: the audit line, the refusal line, a front-end thread\'s lines', async () => {
    const { proc, port, adminPort, dataDir } = await gateway({ LOG_LEVEL: 'debug', GATEWAY_THREADS: '2' });
    const token = fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
    const created = await fetch(`http://127.0.0.1:${adminPort}/admin/providers`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ systemUser: 'acme', password: 'secret-1' }),
    });
    expect(created.status).toBe(201);
    await proc.line(/"msg":"admin audit"/);
    // Refusals of made-up SystemUsers, one line each, logged by whichever thread took the connection.
    for (let i = 0; i < 12; i++) await refusedLogin(port, `nobody-${i}`);
    await proc.line(/"thread":1,.*"msg":"refused Login of nobody-/);
    const lines = proc.output.filter((l) => l.startsWith('{'));
    expect(lines.length).toBe(proc.output.length);
    for (const line of lines) {
      const keys = topLevelKeys(line);
      expect(new Set(keys).size, line).toBe(keys.length);
    }
    expect(JSON.parse(lines.find((l) => l.includes('"msg":"admin audit"'))!)).toMatchObject({ component: 'audit' });
    expect(lines.some((l) => /"thread":1/.test(l))).toBe(true);
  });

  it('is one readable line per entry with LOG_FORMAT=pretty', async () => {
    const { proc } = await gateway({ LOG_FORMAT: 'pretty', GATEWAY_THREADS: '1' });
    const listening = proc.output.find((l) => l.includes('provider service listening'));
    expect(listening).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: provider service listening: http:\/\/127\.0\.0\.1:\d+\/service\.asmx/);
    expect(proc.output.some((l) => l.startsWith('{'))).toBe(false);
  });
});
