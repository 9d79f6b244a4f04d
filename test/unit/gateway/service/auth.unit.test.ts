/** The authenticator's verification cache and single flight (docs/protocol.md §Authentication and passwords), on real SQLite. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedBackends, type EmbeddedBackends } from '../../../../shared/backends/embedded/index.js';
import { loadConfig } from '../../../../shared/config/index.js';
import { hashPassword, verifyPassword } from '../../../../shared/domain/passwords.js';
import { Authenticator } from '../../../../gateway/service/auth.js';
import { CachedProviderStore } from '../../../../gateway/service/provider-cache.js';

const ADDRESS = (): string => '192.0.2.1';

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
    const auth = new Authenticator(backends, loadConfig({ CREDENTIAL_CACHE_SECONDS: cacheSeconds }).logins, undefined, counting);
    return { auth, calls: () => calls };
  }

  it('concurrent first logins share one verification; later ones hit the cache until it expires', async () => {
    const { auth, calls } = await setup('60');
    const results = await Promise.all(Array.from({ length: 20 }, () => auth.authenticate('acme', 'secret-1', 1000, ADDRESS)));
    expect(results.every((p) => p?.systemUser === 'acme')).toBe(true);
    expect(calls()).toBe(1);
    await auth.authenticate('acme', 'secret-1', 30_000, ADDRESS);
    expect(calls()).toBe(1);
    await auth.authenticate('acme', 'secret-1', 1000 + 60_001, ADDRESS);
    expect(calls()).toBe(2);
  });

  it('wrong passwords are never cached as right, and a changed hash invalidates the cache', async () => {
    const { auth, calls } = await setup('60');
    expect(await auth.authenticate('acme', 'nope', 1, ADDRESS)).toBeNull();
    expect(await auth.authenticate('acme', 'nope', 2, ADDRESS)).toBeNull();
    expect(calls()).toBe(2);
    expect(await auth.authenticate('acme', 'secret-1', 3, ADDRESS)).not.toBeNull();
    await backends.providers.update('acme', { passwordHash: await hashPassword('secret-2') }, 4);
    expect(await auth.authenticate('acme', 'secret-1', 5, ADDRESS)).toBeNull();
    expect(await auth.authenticate('acme', 'secret-2', 6, ADDRESS)).not.toBeNull();
  });

  it('with the cache disabled every call verifies', async () => {
    const { auth, calls } = await setup('0');
    await auth.authenticate('acme', 'secret-1', 1, ADDRESS);
    await auth.authenticate('acme', 'secret-1', 2, ADDRESS);
    expect(calls()).toBe(2);
  });

  it('made-up SystemUsers leave nothing behind; a real one is locked only for the failing address', async () => {
    const { auth } = await setup('60');
    const lockouts = backends.lockouts as unknown as { size: number };
    for (let i = 0; i < 5000; i++) expect(await auth.authenticate(`nobody-${i}`, 'guess', 10, ADDRESS)).toBeNull();
    expect(lockouts.size).toBe(0);

    const attacker = (): string => '203.0.113.66';
    for (let i = 0; i < 10; i++) expect(await auth.authenticate('acme', `guess-${i}`, 20 + i, attacker)).toBeNull();
    expect(await auth.authenticate('acme', 'secret-1', 40, attacker)).toBeNull();
    expect(await auth.authenticate('acme', 'secret-1', 40, ADDRESS)).not.toBeNull();
    expect(await backends.lockouts.list(40)).toEqual([{ systemUser: 'acme', address: '203.0.113.66', until: 29 + 15 * 60_000 }]);
  });

  describe('authenticateNow (the synchronous happy path)', () => {
    async function cachedSetup() {
      await setup('60');
      let clock = 1000;
      const providers = new CachedProviderStore(backends.providers, 1000, () => clock);
      const auth = new Authenticator({ providers, lockouts: backends.lockouts }, loadConfig({ CREDENTIAL_CACHE_SECONDS: '60' }).logins);
      return { auth, providers, setClock: (t: number) => (clock = t) };
    }

    it('answers only what authenticate has verified before, while the provider is cached', async () => {
      const { auth, setClock } = await cachedSetup();
      expect(auth.authenticateNow('acme', 'secret-1', 1000, ADDRESS)).toBeUndefined();
      expect(await auth.authenticate('acme', 'secret-1', 1000, ADDRESS)).not.toBeNull();
      expect(auth.authenticateNow('acme', 'secret-1', 1001, ADDRESS)?.systemUser).toBe('acme');
      // A wrong password, an unknown user or an over-long one is never answered here: authenticate counts the refusal.
      expect(auth.authenticateNow('acme', 'secret-2', 1002, ADDRESS)).toBeUndefined();
      expect(auth.authenticateNow('nobody', 'secret-1', 1002, ADDRESS)).toBeUndefined();
      expect(auth.authenticateNow('acme', 'x'.repeat(200), 1002, ADDRESS)).toBeUndefined();
      setClock(2001); // the provider cache expired: the store must be asked again
      expect(auth.authenticateNow('acme', 'secret-1', 2001, ADDRESS)).toBeUndefined();
    });

    it('never answers past a lock, a disabled provider or a changed password', async () => {
      const { auth, providers } = await cachedSetup();
      await auth.authenticate('acme', 'secret-1', 1000, ADDRESS);
      for (let i = 0; i < 10; i++) await auth.authenticate('acme', `guess-${i}`, 1000 + i, ADDRESS);
      expect(await backends.lockouts.lockedUntil('acme', ADDRESS, 1010)).not.toBeNull();
      expect(auth.authenticateNow('acme', 'secret-1', 1010, ADDRESS)).toBeUndefined();
      await backends.lockouts.clear('acme');
      expect(auth.authenticateNow('acme', 'secret-1', 1010, ADDRESS)?.systemUser).toBe('acme');

      await providers.update('acme', { enabled: false }, 1011);
      await providers.get('acme');
      expect(auth.authenticateNow('acme', 'secret-1', 1011, ADDRESS)).toBeUndefined();
      await providers.update('acme', { enabled: true, passwordHash: await hashPassword('secret-2') }, 1012);
      await providers.get('acme');
      expect(auth.authenticateNow('acme', 'secret-1', 1012, ADDRESS)).toBeUndefined();
      expect(await auth.authenticate('acme', 'secret-1', 1012, ADDRESS)).toBeNull();
    });
  });
});
