/**
 * A store that cannot write (docs/running.md §Operating it): the data directory on a real, small
 * tmpfs that is filled up. Inserts answer -5, the command operations their documented "temporarily
 * unavailable" fault, admin writes a JSON 503, /readyz fails; and everything recovers by itself
 * once space is freed. Needs root (mount), as CI runs. (A filesystem cannot be remounted read-only
 * while SQLite holds it open for writing; read-only storage is covered by translating SQLite's own
 * SQLITE_READONLY below.)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { translateStoreError } from '../../shared/backends/embedded/store-access.js';
import { BackendUnavailableError } from '../../shared/backends/types.js';
import { credentials, event, TestApp, xmlParams } from '../helpers/harness.js';

const mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-tmpfs-'));
const filler = path.join(mountPoint, 'filler');
let t: TestApp;

function mount(options: string): void {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', mountPoint], { stdio: 'pipe' });
  } catch (err) {
    throw new Error(`This suite mounts a small tmpfs and needs root: ${String(err)}`, { cause: err });
  }
}

function fillDisk(): void {
  const fd = fs.openSync(filler, 'w');
  const block = Buffer.alloc(64 * 1024);
  try {
    for (;;) fs.writeSync(fd, block);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    fs.closeSync(fd);
  }
}

async function ready(): Promise<number> {
  return (await fetch(`${t.app.admin.url}/readyz`)).status;
}

const insertCode = async (codigo: string): Promise<number> => {
  const r = await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event({ Codigo: codigo }) }));
  expect(r.status).toBe(200);
  return Number(/Result>(-?\d+)</.exec(r.text)?.[1]);
};

beforeAll(async () => {
  mount('size=8m');
  t = await TestApp.start({ DATA_DIR: path.join(mountPoint, 'data'), STORE_MIN_FREE_MB: '1' });
  await t.provider('acme', 'secret-1');
  expect(await insertCode('before')).toBeGreaterThan(0);
});

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await t?.stop();
  execFileSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
  fs.rmSync(mountPoint, { recursive: true, force: true });
});

/** What the store-dependent operations may answer while it cannot write: never a 500 "internal error". */
async function expectDocumentedFailures(): Promise<void> {
  expect(await ready()).toBe(503);
  // Commits that still fit in the WAL succeed; then every insert answers -5, never a 500.
  let code = 0;
  for (let i = 0; i < 500 && code !== -5; i++) {
    const items = Array.from({ length: 50 }, (_, k) => `<pEvento>${xmlParams(event({ Codigo: `full-${i}-${k}`, Crudo: 'x'.repeat(2000) }))}</pEvento>`).join('');
    const r = await t.soap11('LoginYInsertarEventos', `${xmlParams(credentials())}<Eventos>${items}</Eventos>`);
    expect(r.status).toBe(200);
    const codes = [...r.text.matchAll(/<int>(-?\d+)<\/int>/g)].map((m) => Number(m[1]));
    expect(codes.every((c) => c > 0 || c === -5)).toBe(true);
    code = codes[0] ?? 0;
  }
  expect(code).toBe(-5);
  expect(await insertCode(`while-${Date.now()}`)).toBe(-5);
  const poll = await t.soap11('LoginYObtenerComando', xmlParams(credentials()));
  // A poll that still fits in the WAL may succeed; one that does not is the documented fault.
  if (poll.status !== 200) {
    expect(poll.status).toBe(500);
    expect(poll.text).toContain('temporarily unavailable');
  }
  expect(poll.text).not.toContain('internal error');
  const queued = await t.admin('POST', '/admin/providers/acme/commands', { cmd: 'CC', unidad: 'AB123CD', equipo: '1' });
  expect([201, 503]).toContain(queued.status);
  if (queued.status === 503) expect((queued.json as { requestId: string }).requestId).toMatch(/^[0-9a-f-]{36}$/);
}

async function recovers(): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await ready()) !== 200) {
    if (Date.now() > deadline) throw new Error('/readyz did not recover');
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(await insertCode(`after-${Date.now()}`)).toBeGreaterThan(0);
  expect((await t.soap11('LoginYObtenerComando', xmlParams(credentials()))).status).toBe(200);
}

describe('a store that cannot write', () => {
  it('disk full: -5, documented faults, 503s and not ready; all recover once space is freed', async () => {
    expect(await ready()).toBe(200);
    fillDisk();
    await expectDocumentedFailures();
    fs.rmSync(filler);
    await recovers();
  });

  it('nothing acknowledged before the disk filled was lost', async () => {
    expect((await t.app.backends.events.recent({ provider: 'acme', limit: 100_000 })).map((e) => e.codigo)).toContain('before');
  });
});

describe('read-only storage', () => {
  it("SQLite's SQLITE_READONLY is 'unavailable' (503 / retry later), not a bug", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-ro-'));
    const Database = (await import('better-sqlite3')).default;
    new Database(path.join(dir, 'x.sqlite')).exec('CREATE TABLE t (v)').close();
    const readOnly = new Database(path.join(dir, 'x.sqlite'), { readonly: true });
    let caught: unknown;
    try {
      readOnly.exec('INSERT INTO t VALUES (1)');
    } catch (err) {
      caught = translateStoreError(err);
    } finally {
      readOnly.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(caught).toBeInstanceOf(BackendUnavailableError);
    expect((caught as Error).message).toContain('SQLITE_READONLY');
  });
});
