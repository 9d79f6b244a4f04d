/**
 * One gateway per port and per data directory (shared/runtime/port-check.ts,
 * shared/backends/embedded/data-dir-lock.ts): a second `npm start` on a port another process
 * serves, or on a DATA_DIR another gateway holds, stops at once with one line naming the setting
 * to change, instead of sharing the port (SO_REUSEPORT) and splitting the data. A holder killed
 * with SIGKILL leaves nothing behind that blocks the next start.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, Spawned } from '../helpers/spawned.js';

const started: Spawned[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(started.map((p) => p.stop()));
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'one-instance-'));
  dirs.push(dir);
  return dir;
}

interface Ports {
  PORT: string;
  ADMIN_PORT: string;
}

async function ports(): Promise<Ports> {
  return { PORT: String(await freePort()), ADMIN_PORT: String(await freePort()) };
}

function gateway(env: Record<string, string>): Spawned {
  const proc = Spawned.start('main.ts', { HOST: '127.0.0.1', GATEWAY_THREADS: '1', LOG_FORMAT: 'json', ...env });
  started.push(proc);
  return proc;
}

async function running(env: Record<string, string>): Promise<Spawned> {
  const proc = gateway(env);
  await proc.line(/provider service listening/);
  return proc;
}

/** Exits non-zero within 60 s with exactly one error line, which names `setting`; that line, parsed. */
async function refused(env: Record<string, string>, setting: string): Promise<{ msg: string; setting?: string }> {
  const proc = gateway(env);
  const code = await proc.exitWithin(60_000);
  const output = proc.output.join('\n');
  expect(code, output).toBe(1);
  const errors = proc.output.filter((l) => /"level":(50|60)/.test(l));
  expect(errors, output).toHaveLength(1);
  // No stack trace, no second line about it.
  expect(output).not.toMatch(/\n\s+at /);
  const line = JSON.parse(errors[0]!) as { msg: string; setting?: string };
  expect(line.setting).toBe(setting);
  expect(line.msg).toMatch(new RegExp(`${setting} .* set ${setting} `));
  return line;
}

async function soapLogin(port: string, systemUser: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/service.asmx/Login?SystemUser=${systemUser}&Password=secret-1`);
  return (await res.text()).replace(/<[^>]+>/g, '').trim();
}

describe('one gateway per port', () => {
  it('a second gateway on the PORT of a running one (with front-end threads) is refused, and the first answers every call alone', async () => {
    const first = await ports();
    const a = await running({ ...first, DATA_DIR: dataDir(), GATEWAY_THREADS: '2' });
    const token = fs.readFileSync(path.join(dirs.at(-1)!, 'admin-token'), 'utf8').trim();
    const created = await fetch(`http://127.0.0.1:${first.ADMIN_PORT}/admin/providers`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ systemUser: 'acme', password: 'secret-1' }),
    });
    expect(created.status).toBe(201);

    const line = await refused({ PORT: first.PORT, ADMIN_PORT: String(await freePort()), DATA_DIR: dataDir() }, 'PORT');
    expect(line.msg).toContain(`PORT ${first.PORT} is already in use`);
    // The case of the report: ten Logins, some of which reached the second gateway's empty database.
    const answers = await Promise.all(Array.from({ length: 10 }, () => soapLogin(first.PORT, 'acme')));
    expect(answers).toEqual(Array(10).fill('true'));
    expect(a.output.join('\n')).toMatch(/"threads":2/);
  });

  it('a PORT another program listens on is refused the same way', async () => {
    const other = net.createServer();
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const port = String((other.address() as net.AddressInfo).port);
    try {
      await refused({ PORT: port, ADMIN_PORT: String(await freePort()), DATA_DIR: dataDir() }, 'PORT');
    } finally {
      other.close();
    }
  });

  it('an ADMIN_PORT in use is one line naming ADMIN_PORT, not a stack trace', async () => {
    const first = await ports();
    await running({ ...first, DATA_DIR: dataDir() });
    const line = await refused({ PORT: String(await freePort()), ADMIN_PORT: first.ADMIN_PORT, DATA_DIR: dataDir() }, 'ADMIN_PORT');
    expect(line.msg).toContain(`ADMIN_PORT ${first.ADMIN_PORT} is already in use`);
  });
});

describe('one gateway per DATA_DIR', () => {
  it('a second gateway on a DATA_DIR in use is refused, naming the holder; after the holder is killed with SIGKILL the next start succeeds', async () => {
    const dir = dataDir();
    const holder = await running({ ...(await ports()), DATA_DIR: dir });
    const line = await refused({ ...(await ports()), DATA_DIR: dir }, 'DATA_DIR');
    expect(line.msg).toContain(`DATA_DIR ${dir} is in use by another gateway (pid `);

    // The gateway's own process (tsx runs it as a child): its pid is on every log line.
    const pid = (JSON.parse(await holder.line(/provider service listening/)) as { pid: number }).pid;
    process.kill(pid, 'SIGKILL');
    await holder.exited;
    expect(() => process.kill(pid, 0)).toThrow();
    const next = await running({ ...(await ports()), DATA_DIR: dir });
    expect(next.output.join('\n')).not.toMatch(/"level":(50|60)/);
  });
});
