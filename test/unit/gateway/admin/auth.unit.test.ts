/**
 * ADMIN_TOKEN / ADMIN_TOKEN_FILE: the bootstrap token read from a file (the settings table's secret
 * rule, shared/config/load.ts), what a bearer token may hold, and how resolveAdminToken uses it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveAdminToken } from '../../../../gateway/admin/auth.js';
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

const tokenFrom = (text: string): string | null => loadConfig({ ADMIN_TOKEN_FILE: file(text) }).admin.token;

describe('ADMIN_TOKEN_FILE', () => {
  it('reads the token, ignoring one trailing newline (LF or CRLF)', () => {
    expect(tokenFrom('s3cret-token')).toBe('s3cret-token');
    expect(tokenFrom('s3cret-token\n')).toBe('s3cret-token');
    expect(tokenFrom('s3cret-token\r\n')).toBe('s3cret-token');
  });

  it('refuses an empty file, a second newline, inner whitespace and a missing file, naming the file but never its text', () => {
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
      let failure: unknown;
      try {
        loadConfig({ ADMIN_TOKEN_FILE: f });
      } catch (err) {
        failure = err;
      }
      expect(failure, JSON.stringify(text)).toBeInstanceOf(ConfigError);
      expect((failure as Error).message).toMatch(error);
      if (text.trim() !== '') expect((failure as Error).message).not.toContain(text.trim());
    }
    expect(() => loadConfig({ ADMIN_TOKEN_FILE: '/nonexistent/dir/token' })).toThrow('ADMIN_TOKEN_FILE: cannot read /nonexistent/dir/token (ENOENT).');
  });

  it('is the bootstrap token when set; DATA_DIR/admin-token is neither read nor written then', async () => {
    const f = file('from-the-file\n');
    const dataDir = path.dirname(f);
    const resolved = await resolveAdminToken(loadConfig({ ADMIN_TOKEN_FILE: f, DATA_DIR: dataDir }));
    expect(resolved).toEqual({ token: 'from-the-file', generated: false, path: null });
    expect(fs.existsSync(path.join(dataDir, 'admin-token'))).toBe(false);
  });

  it('cannot be set together with ADMIN_TOKEN; ADMIN_AUDIT_RETENTION_DAYS defaults to 90 and is at least 1', () => {
    const f = file('x');
    expect(() => loadConfig({ ADMIN_TOKEN: 'x', ADMIN_TOKEN_FILE: f })).toThrow(ConfigError);
    expect(() => loadConfig({ ADMIN_TOKEN: 'x', ADMIN_TOKEN_FILE: f })).toThrow('Set ADMIN_TOKEN or ADMIN_TOKEN_FILE, not both.');
    expect(loadConfig({}).admin.token).toBeNull();
    expect(loadConfig({}).admin.auditRetentionMs).toBe(90 * 86_400_000);
    expect(loadConfig({ ADMIN_AUDIT_RETENTION_DAYS: '7' }).admin.auditRetentionMs).toBe(7 * 86_400_000);
    expect(() => loadConfig({ ADMIN_AUDIT_RETENTION_DAYS: '0' })).toThrow(/at least 1/);
  });
});
