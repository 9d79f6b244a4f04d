/**
 * The CLI for a person and for a script (cli/render.ts, cli/common.ts): tables by default, the
 * API's JSON with --json, a short overview; `npx gateway-admin` (bin/gateway-admin.js) prints
 * nothing of npm's own, so a token redirected to a file is the file's only line. And no error
 * message ever holds the token or a password it was given, whatever went wrong.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, TSX } from '../helpers/admin-cli.js';
import { TestApp } from '../helpers/harness.js';
import { freePort } from '../helpers/spawned.js';

let t: TestApp;
let dir: string;

interface Run {
  code: number;
  out: string;
  err: string;
}

/** A command line in bash, in the repository, with only PATH, HOME and `env`. */
function sh(command: string, env: Record<string, string> = {}, input = ''): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile('bash', ['-c', command], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env } }, (err, out, errOut) =>
      resolve({ code: err === null ? 0 : ((err as { code?: number }).code ?? -1), out, err: errOut }),
    );
    child.stdin?.end(input);
  });
}

const adminEnv = (): Record<string, string> => ({ ADMIN_URL: t.app.admin.url, ADMIN_TOKEN: t.app.adminToken });

beforeAll(async () => {
  t = await TestApp.start();
  await t.provider('acme', 'secret-1');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-output-'));
});

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await t?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('output', () => {
  it('a list is a table by default and the API answer with --json', async () => {
    const table = await sh(`${TSX} cli/admin.ts providers list`, adminEnv());
    expect(table.code, table.err).toBe(0);
    const [header, row] = table.out.split('\n');
    expect(header).toMatch(/^systemUser\s+enabled\s+timeZone/);
    expect(row).toMatch(/^acme\s+yes\s+-/);
    expect(() => JSON.parse(table.out) as unknown).toThrow();

    const json = await sh(`${TSX} cli/admin.ts --json providers list`, adminEnv());
    expect(JSON.parse(json.out)).toMatchObject({ providers: [{ systemUser: 'acme', enabled: true }] });
  });

  it('overview is a dozen lines at most, where the API answers ninety ten-second buckets', async () => {
    const short = await sh(`${TSX} cli/admin.ts overview`, adminEnv());
    expect(short.code, short.err).toBe(0);
    const lines = short.out.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(12);
    expect(lines[0]).toMatch(/^mode\s+embedded, ready$/);
    expect(short.out).toMatch(/^providers\s+1, 0 sending in the last 15 min$/m);
    const full = JSON.parse((await sh(`${TSX} cli/admin.ts --json overview`, adminEnv())).out) as { eventsPerSecond: unknown[] };
    expect(full.eventsPerSecond.length).toBeGreaterThan(80);
  });

  it('npx gateway-admin token create > file: the file holds the token alone, and signs the CLI in', async () => {
    const file = path.join(dir, 'ana.token');
    const created = await sh(`npx gateway-admin token create ana --role operator > ${file}`, adminEnv());
    expect(created.code, created.err).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^gwo_[A-Za-z0-9_-]{43}\n$/);
    expect(created.err).toContain('Token ana created for the operator role');
    const me = await sh('npx gateway-admin whoami', { ADMIN_URL: t.app.admin.url, ADMIN_TOKEN_FILE: file });
    expect(me.code, me.err).toBe(0);
    expect(me.out).toMatch(/^identity\s+ana$/m);
    expect(me.out).toMatch(/^role\s+operator$/m);
  });
});

describe('no error holds the token or a password', () => {
  it('a token file that also holds npm\'s banner: named, not shown, and not taken for an unreachable gateway', async () => {
    const made = await sh(`${TSX} cli/admin.ts token create bob --role viewer`, adminEnv());
    const token = made.out.trim();
    expect(token).toMatch(/^gwo_/);
    const file = path.join(dir, 'bob.token');
    // What `npm run admin -- token create bob ... > bob.token` writes: npm's banner, then the token.
    fs.writeFileSync(file, `\n> prestadores-gateway@0.1.0 admin\n> tsx cli/admin.ts token create bob --role viewer\n\n${token}\n`);
    const run = await sh(`${TSX} cli/admin.ts whoami`, { ADMIN_URL: t.app.admin.url, ADMIN_TOKEN_FILE: file });
    expect(run.code).toBe(1);
    expect(run.err).toContain(`ADMIN_TOKEN_FILE ${file} holds 5 lines`);
    expect(run.err).toContain('npx gateway-admin token create');
    expect(run.err).not.toMatch(/Cannot reach|invalid header/);
    expect(run.err + run.out).not.toContain(token);
  });

  it('a token with a space, a token refused (401), a gateway that is not there: none is echoed', async () => {
    const spaced = 'gwo_abcdefghijklmnop qrstuvwxyz0123456789';
    const bad = await sh(`${TSX} cli/admin.ts whoami`, { ADMIN_URL: t.app.admin.url, ADMIN_TOKEN: spaced });
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/^Error: ADMIN_TOKEN holds a space or a character a token cannot have/);
    expect(bad.err).not.toContain('qrstuvwxyz');

    const wrong = 'gwo_ThisTokenWasNeverIssuedToAnyoneAtAll0123456';
    const refused = await sh(`${TSX} cli/admin.ts --token ${wrong} whoami`, { ADMIN_URL: t.app.admin.url });
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('HTTP 401');
    expect(refused.err).not.toContain(wrong);

    const away = await sh(`${TSX} cli/admin.ts --token ${wrong} overview`, { ADMIN_URL: `http://127.0.0.1:${await freePort()}` });
    expect(away.code).toBe(1);
    expect(away.err).toContain('Cannot reach the admin API');
    expect(away.err).not.toContain(wrong);
  });

  it('a password refused by the API, given as an option or on stdin, is not in the message', async () => {
    const asOption = await sh(`${TSX} cli/admin.ts providers create shorty --password abcd1`, adminEnv());
    expect(asOption.code).toBe(1);
    expect(asOption.err).toMatch(/^Error \(HTTP 400\)/);
    expect(asOption.err).not.toContain('abcd1');
    const onStdin = await sh(`${TSX} cli/admin.ts providers update acme --password -`, adminEnv(), 'abcd2\n');
    expect(onStdin.code).toBe(1);
    expect(onStdin.err).not.toContain('abcd2');
    const away = await sh(`${TSX} cli/admin.ts providers create other --password long-enough-secret`, { ADMIN_URL: `http://127.0.0.1:${await freePort()}`, ADMIN_TOKEN: t.app.adminToken });
    expect(away.code).toBe(1);
    expect(away.err).not.toContain('long-enough-secret');
    expect(away.err).not.toContain(t.app.adminToken);
  });
});
