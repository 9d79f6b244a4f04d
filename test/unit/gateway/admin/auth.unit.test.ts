/** ADMIN_TOKEN_FILE: how the bootstrap token is read from a file, and the settings around it. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readAdminTokenFile, resolveAdminToken } from '../../../../gateway/admin/auth.js';
import { ConfigError, loadConfig } from '../../../../shared/config/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function file(text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'token-file-'));
  dirs.push(dir);
  const f = path.join(dir, 'token');
  fs.writeFileSync(f, text, { mode: 0o600 });
  return f;
}

describe('ADMIN_TOKEN_FILE', () => {
  it('reads the token, ignoring one trailing newline (LF or CRLF)', async () => {
    expect(await readAdminTokenFile(file('s3cret-token'))).toBe('s3cret-token');
    expect(await readAdminTokenFile(file('s3cret-token\n'))).toBe('s3cret-token');
    expect(await readAdminTokenFile(file('s3cret-token\r\n'))).toBe('s3cret-token');
  });

  it('refuses an empty file, a second newline, inner whitespace and a missing file, naming the file but never its text', async () => {
    const cases: [string, RegExp][] = [
      ['', /is empty/],
      ['\n', /is empty/],
      ['s3cret-token\n\n', /whitespace or a control character/],
      ['two words', /whitespace or a control character/],
      [' s3cret-token', /whitespace or a control character/],
      ['tab\there', /whitespace or a control character/],
    ];
    for (const [text, error] of cases) {
      const f = file(text);
      const failure = await readAdminTokenFile(f).catch((err: unknown) => err as Error);
      expect(failure, JSON.stringify(text)).toBeInstanceOf(Error);
      expect((failure as Error).message).toMatch(error);
      expect((failure as Error).message).toContain(f);
      if (text.trim() !== '') expect((failure as Error).message).not.toContain(text.trim());
    }
    await expect(readAdminTokenFile('/nonexistent/dir/token')).rejects.toThrow(/\/nonexistent\/dir\/token cannot be read \(ENOENT\)/);
  });

  it('is the bootstrap token when set; DATA_DIR/admin-token is neither read nor written then', async () => {
    const f = file('from-the-file\n');
    const dataDir = path.dirname(f);
    const resolved = await resolveAdminToken(loadConfig({ ADMIN_TOKEN_FILE: f, DATA_DIR: dataDir }));
    expect(resolved).toEqual({ token: 'from-the-file', generated: false, path: f });
    expect(fs.existsSync(path.join(dataDir, 'admin-token'))).toBe(false);
  });

  it('cannot be set together with ADMIN_TOKEN; ADMIN_AUDIT_RETENTION_DAYS defaults to 90 and is at least 1', () => {
    expect(() => loadConfig({ ADMIN_TOKEN: 'x', ADMIN_TOKEN_FILE: '/run/secrets/admin' })).toThrow(ConfigError);
    expect(() => loadConfig({ ADMIN_TOKEN: 'x', ADMIN_TOKEN_FILE: '/run/secrets/admin' })).toThrow(/both set/);
    expect(loadConfig({ ADMIN_TOKEN_FILE: 'rel/token' }).adminTokenFile).toBe(path.resolve('rel/token'));
    expect(loadConfig({}).adminTokenFile).toBeNull();
    expect(loadConfig({}).adminAuditRetentionMs).toBe(90 * 86_400_000);
    expect(loadConfig({ ADMIN_AUDIT_RETENTION_DAYS: '7' }).adminAuditRetentionMs).toBe(7 * 86_400_000);
    expect(() => loadConfig({ ADMIN_AUDIT_RETENTION_DAYS: '0' })).toThrow(/at least 1/);
  });
});
