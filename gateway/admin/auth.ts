import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../shared/config/index.js';

/** Name of the file in DATA_DIR holding the generated admin token. */
export const ADMIN_TOKEN_FILE = 'admin-token';

interface ResolvedAdminToken {
  token: string;
  /** True when this call generated the token (and wrote it to `path`). */
  generated: boolean;
  /** The token file, or null when the token came from ADMIN_TOKEN. */
  path: string | null;
}

function isErrno(err: unknown, code: string): boolean {
  return err instanceof Error && (err as NodeJS.ErrnoException).code === code;
}

async function readTokenFile(file: string): Promise<string | null> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return null;
    throw err;
  }
  const token = text.trim();
  if (token === '') throw new Error(`The admin token file ${file} is empty; delete it to generate a new token.`);
  return token;
}

/**
 * Returns config.admin.token, else the token stored in DATA_DIR/admin-token, else generates a
 * random one (32 bytes, base64url), writes it there with mode 0600 and returns it with
 * generated=true. Safe against a concurrent first start: the file is created exclusively.
 */
export async function resolveAdminToken(config: Pick<Config, 'admin' | 'embedded'>): Promise<ResolvedAdminToken> {
  if (config.admin.token !== null && config.admin.token !== '') {
    return { token: config.admin.token, generated: false, path: null };
  }
  const file = path.join(config.embedded.dataDir, ADMIN_TOKEN_FILE);
  const existing = await readTokenFile(file);
  if (existing !== null) return { token: existing, generated: false, path: file };

  await fs.mkdir(config.embedded.dataDir, { recursive: true });
  const token = randomBytes(32).toString('base64url');
  // Written in full to a private temporary file, then linked into place: link() fails if the
  // name exists, so a concurrent first start never sees a half-written file or loses its token.
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await fs.open(temp, 'wx', 0o600);
  try {
    // The umask can only remove bits, but make the mode explicit anyway.
    await handle.chmod(0o600);
    await handle.writeFile(`${token}\n`, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.link(temp, file);
  } catch (err) {
    if (!isErrno(err, 'EEXIST')) throw err;
    const theirs = await readTokenFile(file);
    if (theirs === null) throw err;
    return { token: theirs, generated: false, path: file };
  } finally {
    await fs.rm(temp, { force: true });
  }
  return { token, generated: true, path: file };
}
