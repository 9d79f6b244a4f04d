/** The authenticator's verification cache and single flight (docs/protocol.md §Authentication and passwords), on real SQLite. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedBackends, type EmbeddedBackends } from '../shared/backends/embedded/index.js';
import { loadConfig } from '../shared/config.js';
import { hashPassword, verifyPassword } from '../shared/domain/passwords.js';
import { Authenticator } from '../gateway/service/auth.js';

describe('Authenticator', () => {
  let backends: EmbeddedBackends;
  let dir: string;
  afterEach(async () => {
    await backends.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function setup(cacheSeconds: string) {
    dir = mkdtempSync(path.join(tmpdir(), 'auth-'));
    backends = await openEmbeddedBackends({ dataDir: dir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 60_000 });
    await backends.providers.create({
      systemUser: 'acme', passwordHash: await hashPassword('secret-1'), enabled: true, timeZone: null,
      requireRegisteredVehicles: false, createdAt: 0, updatedAt: 0,
    });
    let calls = 0;
    const counting = (password: string, stored: string) => {
      calls++;
      return verifyPassword(password, stored);
    };
    const auth = new Authenticator(backends, loadConfig({ CREDENTIAL_CACHE_SECONDS: cacheSeconds }), counting);
    return { auth, calls: () => calls };
  }

  it('concurrent first logins share one verification; later ones hit the cache until it expires', async () => {
    const { auth, calls } = await setup('60');
    const results = await Promise.all(Array.from({ length: 20 }, () => auth.authenticate('acme', 'secret-1', 1000)));
    expect(results.every((p) => p?.systemUser === 'acme')).toBe(true);
    expect(calls()).toBe(1);
    await auth.authenticate('acme', 'secret-1', 30_000);
    expect(calls()).toBe(1);
    await auth.authenticate('acme', 'secret-1', 1000 + 60_001);
    expect(calls()).toBe(2);
  });

  it('wrong passwords are never cached as right, and a changed hash invalidates the cache', async () => {
    const { auth, calls } = await setup('60');
    expect(await auth.authenticate('acme', 'nope', 1)).toBeNull();
    expect(await auth.authenticate('acme', 'nope', 2)).toBeNull();
    expect(calls()).toBe(2);
    expect(await auth.authenticate('acme', 'secret-1', 3)).not.toBeNull();
    await backends.providers.update('acme', { passwordHash: await hashPassword('secret-2') }, 4);
    expect(await auth.authenticate('acme', 'secret-1', 5)).toBeNull();
    expect(await auth.authenticate('acme', 'secret-2', 6)).not.toBeNull();
  });

  it('with the cache disabled every call verifies', async () => {
    const { auth, calls } = await setup('0');
    await auth.authenticate('acme', 'secret-1', 1);
    await auth.authenticate('acme', 'secret-1', 2);
    expect(calls()).toBe(2);
  });
});
