/**
 * An event is acknowledged only after it is committed (docs/protocol.md §Events): SIGKILL the real process
 * (`main.ts`, as `npm start` runs it) while a burst is in flight, restart it on the same DATA_DIR,
 * and every id that was answered must be stored, once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { credentials, event, soap11Envelope, xmlParams } from '../helpers/harness.js';
import { REPO } from '../helpers/paths.js';

const ROOT = REPO;

interface Running {
  child: ChildProcess;
  serviceUrl: string;
  adminUrl: string;
}

function startProcess(dataDir: string): Promise<Running> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', ADMIN_TOKEN: 'durability', SQLITE_SYNCHRONOUS: 'FULL', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no start line within 30 s:\n${out}`)), 30_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      for (const line of out.split('\n')) {
        if (!line.includes('"service"')) continue;
        const log = JSON.parse(line) as { service: string; admin: string };
        clearTimeout(timer);
        resolve({ child, serviceUrl: log.service, adminUrl: log.admin });
        return;
      }
    });
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => reject(new Error(`exited with ${code}:\n${out}`)));
  });
}

async function insert(url: string, codigo: string): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"http://tempuri.org/LoginYInsertarEvento"' },
    body: soap11Envelope('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event({ Codigo: codigo }) })),
  });
  const text = await res.text();
  const m = /<LoginYInsertarEventoResult>(-?\d+)</.exec(text);
  if (m === null) throw new Error(`unexpected answer ${res.status}: ${text}`);
  return Number(m[1]);
}

describe('durability', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-durability-'));
  let running: Running | null = null;
  afterAll(() => {
    running?.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('SIGKILL during a burst loses no acknowledged event and stores none twice', { timeout: 120_000 }, async () => {
    running = await startProcess(dataDir);
    const admin = async (method: string, p: string, body?: unknown) =>
      fetch(`${running!.adminUrl}${p}`, { method, headers: { Authorization: 'Bearer durability', 'Content-Type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    expect((await admin('POST', '/admin/providers', { systemUser: 'acme', password: 'secret-1' })).status).toBe(201);

    // 40 concurrent clients insert until 600 acknowledgements are in, then the process is killed
    // with requests still in flight.
    const acked = new Map<string, number>();
    let next = 0;
    let killed = false;
    const client = async () => {
      while (!killed) {
        const codigo = `e${next++}`;
        try {
          const id = await insert(running!.serviceUrl, codigo);
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- another client may have set it during the await
          if (killed) return; // answered after the kill signal was sent: not counted either way
          expect(id).toBeGreaterThan(0);
          acked.set(codigo, id);
          if (acked.size >= 600) {
            killed = true;
            running!.child.kill('SIGKILL');
          }
        } catch {
          return; // connection reset by the kill
        }
      }
    };
    await Promise.all(Array.from({ length: 40 }, client));
    await new Promise<void>((r) => (running!.child.exitCode !== null || running!.child.signalCode !== null ? r() : running!.child.once('exit', () => r())));
    expect(running.child.signalCode).toBe('SIGKILL');
    expect(acked.size).toBeGreaterThanOrEqual(600);

    running = await startProcess(dataDir);
    const res = await admin('GET', '/admin/events?provider=acme&limit=1000');
    const { events } = (await res.json()) as { events: { id: string; codigo: string }[] };
    const byCodigo = new Map<string, string[]>();
    for (const e of events) byCodigo.set(e.codigo, [...(byCodigo.get(e.codigo) ?? []), e.id]);
    for (const [codigo, id] of acked) {
      expect(byCodigo.get(codigo), `acknowledged ${codigo} (id ${id}) must be stored once`).toEqual([String(id)]);
    }
    // After the restart, ids continue above everything stored, and a resend is deduplicated.
    const maxStored = Math.max(...events.map((e) => Number(e.id)));
    const fresh = await insert(running.serviceUrl, 'after-restart');
    expect(fresh).toBeGreaterThan(maxStored);
    const [codigo, id] = acked.entries().next().value as [string, number];
    expect(await insert(running.serviceUrl, codigo)).toBe(id);
    running.child.kill('SIGTERM');
    await new Promise((r) => running!.child.once('exit', r));
    expect(running.child.exitCode).toBe(0);
    running = null;
  });
});
