/**
 * On- and off-boarding an operator with the CLI (docs/security.md): `token create` prints the token
 * once, alone on stdout, so it can go straight to a file the CLI (ADMIN_TOKEN_FILE) then reads;
 * the operator's role is enforced; `audit list` shows who did what; `token revoke` ends it.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, TSX } from '../helpers/admin-cli.js';
import { TestApp } from '../helpers/harness.js';

let t: TestApp;
let dir: string;

interface Run {
  code: number;
  out: string;
  err: string;
}

/** The CLI with only the environment given (no --token unless in `args`). */
function cli(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(TSX, ['cli/admin.ts', '--json', '--url', t.app.admin.url, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } }, (err, out, errOut) => {
      resolve({ code: err === null ? 0 : ((err as { code?: number }).code ?? -1), out, err: errOut });
    });
  });
}

beforeAll(async () => {
  t = await TestApp.start();
  await t.provider('acme', 'secret-1');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'access-cli-'));
});

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await t?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('operators with the CLI', () => {
  const tokenFile = (): string => path.join(dir, 'ana.token');

  it('token create prints the token alone on stdout, once; the file it goes to signs the CLI in', async () => {
    const created = await cli(['token', 'create', 'ana', '--role', 'operator', '--expires-in', '30d'], { ADMIN_TOKEN: t.app.adminToken });
    expect(created.code, created.err).toBe(0);
    expect(created.out).toMatch(/^gwo_[A-Za-z0-9_-]{43}\n$/);
    const about = JSON.parse(created.err.slice(0, created.err.lastIndexOf('}') + 1)) as Record<string, unknown>;
    expect(about).toMatchObject({ name: 'ana', role: 'operator', createdBy: 'bootstrap', expiresAt: expect.any(String) as unknown });
    expect(created.err).not.toContain(created.out.trim());
    expect(created.err).toContain('not shown again');
    fs.writeFileSync(tokenFile(), created.out, { mode: 0o600 });

    const me = await cli(['whoami'], { ADMIN_TOKEN_FILE: tokenFile() });
    expect(me.code, me.err).toBe(0);
    expect(JSON.parse(me.out)).toMatchObject({ identity: 'ana', role: 'operator' });
    const listed = await cli(['token', 'list'], { ADMIN_TOKEN: t.app.adminToken });
    expect(JSON.parse(listed.out)).toMatchObject({ tokens: [{ name: 'ana', role: 'operator', expired: false }] });
    expect(listed.out).not.toContain(created.out.trim());
  });

  it("an operator queues a command but cannot create a provider; the audit trail shows both, and the provider's own history", async () => {
    const queued = await cli(['commands', 'queue', 'acme', '--cmd', 'CC', '--unidad', 'AB1', '--equipo', '7'], { ADMIN_TOKEN_FILE: tokenFile() });
    expect(queued.code, queued.err).toBe(0);
    const refused = await cli(['providers', 'create', 'zeta', '--password', 'secret-99'], { ADMIN_TOKEN_FILE: tokenFile() });
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('Error (HTTP 403): POST /admin/providers needs the admin role; ana is an operator.');

    const trail = await cli(['audit', 'list', '--identity', 'ana', '--since', new Date(t.now - 3_600_000).toISOString()], { ADMIN_TOKEN: t.app.adminToken });
    expect(trail.code, trail.err).toBe(0);
    const entries = (JSON.parse(trail.out) as { entries: Record<string, unknown>[] }).entries;
    expect(entries.map((e) => [e.route, e.outcome, e.target])).toEqual([
      ['POST /admin/providers', 'refused', null],
      ['POST /admin/providers/:systemUser/commands', 'ok', 'provider/acme/command/1'],
    ]);
    const history = await cli(['audit', 'list', '--provider', 'acme', '--limit', '5'], { ADMIN_TOKEN: t.app.adminToken });
    expect((JSON.parse(history.out) as { entries: unknown[]; nextBefore: unknown }).entries).toHaveLength(1);
    // An operator may not read the whole trail.
    expect((await cli(['audit', 'list'], { ADMIN_TOKEN_FILE: tokenFile() })).err).toContain('HTTP 403');
  });

  it('token revoke ends it at once; bad arguments stop before any request', async () => {
    const revoked = await cli(['token', 'revoke', 'ana'], { ADMIN_TOKEN: t.app.adminToken });
    expect(JSON.parse(revoked.out)).toEqual({ revoked: 'ana' });
    const after = await cli(['whoami'], { ADMIN_TOKEN_FILE: tokenFile() });
    expect(after.code).toBe(1);
    expect(after.err).toContain('HTTP 401');
    for (const args of [
      ['token', 'create', 'x', '--role', 'root'],
      ['token', 'create', 'x', '--role', 'viewer', '--expires-in', 'soon'],
      ['audit', 'list', '--since', 'yesterday'],
    ]) {
      const r = await cli(args, { ADMIN_TOKEN: t.app.adminToken });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.err, args.join(' ')).toMatch(/error: option .* argument .* is invalid/);
    }
    const missing = await cli(['whoami'], { ADMIN_TOKEN_FILE: path.join(dir, 'nope') });
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('ENOENT');
  });
});

describe('ADMIN_TOKEN_FILE', () => {
  it('starts the gateway with the token in the file (one trailing newline ignored); the CLI reads the same file', async () => {
    const file = path.join(dir, 'bootstrap.token');
    fs.writeFileSync(file, 'file-held-bootstrap-token\n', { mode: 0o600 });
    const other = await TestApp.start({ ADMIN_TOKEN: '', ADMIN_TOKEN_FILE: file });
    try {
      expect(other.app.adminToken).toBe('file-held-bootstrap-token');
      const me = await new Promise<Run>((resolve) => {
        execFile(TSX, ['cli/admin.ts', '--json', '--url', other.app.admin.url, 'whoami'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ADMIN_TOKEN_FILE: file } }, (err, out, errOut) =>
          resolve({ code: err === null ? 0 : 1, out, err: errOut }),
        );
      });
      expect(me.code, me.err).toBe(0);
      expect(JSON.parse(me.out)).toMatchObject({ identity: 'bootstrap', role: 'admin', kind: 'bootstrap' });
      expect(fs.existsSync(path.join(other.dataDir, 'admin-token'))).toBe(false);
    } finally {
      await other.stop();
    }
  });
});
