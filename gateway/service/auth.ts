import { hash } from 'node:crypto';
import type { Backends, Provider } from '../../shared/backends/types.js';
import type { Config } from '../../shared/config.js';
import { hashPassword, verifyPassword } from '../../shared/domain/passwords.js';

/**
 * Password checks with lockout (docs/protocol.md §Authentication and passwords, §Lockout). Every Login-prefixed call carries the password,
 * so successful verifications are cached in memory, keyed by a hash of user and password and
 * bound to the stored hash: a password change invalidates them without any bookkeeping.
 */
const CACHE_LIMIT = 100_000;

interface CachedVerification {
  passwordHash: string;
  expiresAt: number;
}

export class Authenticator {
  private readonly verified = new Map<string, CachedVerification>();
  /** Verifications under way: concurrent calls with the same credentials share one scrypt. */
  private readonly inFlight = new Map<string, Promise<boolean>>();

  constructor(
    private readonly backends: Pick<Backends, 'providers' | 'lockouts'>,
    private readonly config: Pick<
      Config,
      'credentialCacheMs' | 'lockoutMaxFailures' | 'lockoutWindowMs' | 'lockoutDurationMs' | 'passwordMinLength'
    >,
    private readonly verify: (password: string, stored: string) => Promise<boolean> = verifyPassword,
  ) {}

  /** The enabled, unlocked provider these credentials belong to, or null. */
  async authenticate(systemUser: string | null, password: string | null, now: number): Promise<Provider | null> {
    if (!systemUser || password === null) return null;
    if ((await this.backends.lockouts.lockedUntil(systemUser, now)) !== null) return null;
    const provider = await this.backends.providers.get(systemUser);
    if (provider !== null && provider.enabled && (await this.checkPassword(provider, password, now))) return provider;
    await this.recordFailure(systemUser, now);
    return null;
  }

  /** Verifies a password of a known provider (CambiarClave's AntiguaClave), counting failures. */
  async confirmPassword(provider: Provider, password: string | null, now: number): Promise<boolean> {
    if (password === null) return false;
    if ((await this.backends.lockouts.lockedUntil(provider.systemUser, now)) !== null) return false;
    if (await this.checkPassword(provider, password, now)) return true;
    await this.recordFailure(provider.systemUser, now);
    return false;
  }

  /** Applies the password policy and stores the new hash; true only if it really changed. */
  async changePassword(provider: Provider, oldPassword: string, newPassword: string | null, now: number): Promise<boolean> {
    if (newPassword === null || newPassword.length < this.config.passwordMinLength || newPassword === oldPassword) return false;
    const passwordHash = await hashPassword(newPassword);
    return (await this.backends.providers.update(provider.systemUser, { passwordHash }, now)) !== null;
  }

  private async checkPassword(provider: Provider, password: string, now: number): Promise<boolean> {
    const key = hash('sha256', `${provider.systemUser}\0${password}\0${provider.passwordHash}`, 'base64');
    const cached = this.verified.get(key);
    if (cached !== undefined && cached.passwordHash === provider.passwordHash && cached.expiresAt > now) return true;
    let pending = this.inFlight.get(key);
    if (pending === undefined) {
      pending = this.verify(password, provider.passwordHash).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    if (!(await pending)) return false;
    if (this.config.credentialCacheMs > 0) {
      if (this.verified.size >= CACHE_LIMIT) this.verified.clear();
      this.verified.set(key, { passwordHash: provider.passwordHash, expiresAt: now + this.config.credentialCacheMs });
    }
    return true;
  }

  private async recordFailure(systemUser: string, now: number): Promise<void> {
    const failures = await this.backends.lockouts.recordFailure(systemUser, now, this.config.lockoutWindowMs);
    if (failures >= this.config.lockoutMaxFailures) {
      await this.backends.lockouts.lock(systemUser, now + this.config.lockoutDurationMs);
    }
  }
}
