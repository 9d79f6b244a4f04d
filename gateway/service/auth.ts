import { hash } from 'node:crypto';
import type { Backends, LockoutPolicy, Provider } from '../../shared/backends/types.js';
import { MAX_LENGTH } from '../../shared/catalogue/index.js';
import type { Config } from '../../shared/config/index.js';
import { hashPassword, verifyPassword } from '../../shared/domain/passwords.js';
import type { Metrics } from '../../shared/runtime/metrics.js';
import type { Deadline } from '../../shared/util/deadline.js';

/**
 * Password checks with lockout (docs/protocol.md §Authentication and passwords, §Lockout). Every Login-prefixed call carries
 * the password, so successful verifications are cached in memory, keyed by a hash of user and
 * password and bound to the stored hash: a password change invalidates them without bookkeeping.
 *
 * Failures are counted per SystemUser and client address, and only for SystemUsers that exist:
 * made-up names cost a metric increment and no memory, and a stranger guessing a provider's
 * password locks out his own address, not the provider's servers.
 */
const CACHE_LIMIT = 100_000;

interface CachedVerification {
  passwordHash: string;
  expiresAt: number;
}

type FailureReason = 'unknown_user' | 'disabled' | 'wrong_password' | 'locked' | 'too_long';

/** Filled in with the reason when credentials are refused (for the refusal log, refusals.ts). */
export interface RefusalNote {
  reason: string | null;
  /** Whose call it was, when the refusal learnt it (a session's provider). */
  systemUser?: string;
}

/** Each refusal in an operator's words. */
const WHY: Record<FailureReason | 'missing', string> = {
  missing: 'SystemUser or Password is missing',
  too_long: 'SystemUser or Password is longer than any stored one',
  unknown_user: 'no provider has this SystemUser',
  disabled: 'the provider is disabled',
  wrong_password: 'wrong password (LOCKOUT_MAX_FAILURES of them from one address lock the provider out there)',
  locked: 'locked out after too many wrong passwords: it ends after LOCKOUT_MINUTES, or an operator lifts it (admin lockouts lift)',
};

export class Authenticator {
  private readonly verified = new Map<string, CachedVerification>();
  /** Verifications under way: concurrent calls with the same credentials share one scrypt. */
  private readonly inFlight = new Map<string, Promise<boolean>>();
  private readonly policy: LockoutPolicy;

  constructor(
    private readonly backends: Pick<Backends, 'providers' | 'lockouts'>,
    private readonly config: Config['logins'],
    private readonly metrics?: Metrics,
    private readonly verify: (password: string, stored: string) => Promise<boolean> = verifyPassword,
  ) {
    this.policy = {
      maxFailures: config.lockoutMaxFailures,
      userMaxFailures: config.lockoutUserMaxFailures,
      windowMs: config.lockoutWindowMs,
      lockMs: config.lockoutDurationMs,
    };
  }

  /** The enabled, unlocked provider these credentials belong to, or null. */
  async authenticate(systemUser: string | null, password: string | null, now: number, address: () => string, note?: RefusalNote, deadline?: Deadline): Promise<Provider | null> {
    if (!systemUser || password === null) {
      if (note !== undefined) note.reason = WHY.missing;
      return null;
    }
    // No stored SystemUser or password is this long: refused before any lookup or hash.
    if (systemUser.length > MAX_LENGTH.systemUser || password.length > MAX_LENGTH.password) return this.refuse('too_long', note);
    const provider = await this.backends.providers.get(systemUser, deadline);
    if (provider === null) return this.refuse('unknown_user', note);
    if (!provider.enabled) return this.refuse('disabled', note);
    return (await this.confirmPassword(provider, password, now, address, note, deadline)) ? provider : null;
  }

  /**
   * `authenticate` answered from memory when it can: the provider cached and enabled, no lock in
   * force (asked of a lockout store that answers at once), and these credentials verified within
   * CREDENTIAL_CACHE_SECONDS. Undefined whenever anything is missing or the answer is a refusal:
   * then `authenticate` decides, and counts the refusal.
   */
  authenticateNow(systemUser: string | null, password: string | null, now: number, address: () => string): Provider | undefined {
    if (!systemUser || password === null || systemUser.length > MAX_LENGTH.systemUser || password.length > MAX_LENGTH.password) return undefined;
    const provider = this.backends.providers.peek?.(systemUser);
    if (provider?.enabled !== true) return undefined;
    const lockouts = this.backends.lockouts;
    if (lockouts.lockedUntilNow === undefined || lockouts.lockedUntilNow(provider.systemUser, address, now) !== null) return undefined;
    return this.verifiedBefore(this.cacheKey(provider, password), provider, now) ? provider : undefined;
  }

  /** Verifies a password of a known provider (also CambiarClave's AntiguaClave), counting failures. */
  async confirmPassword(provider: Provider, password: string, now: number, address: () => string, note?: RefusalNote, deadline?: Deadline): Promise<boolean> {
    if ((await this.backends.lockouts.lockedUntil(provider.systemUser, address, now, deadline)) !== null) {
      this.refuse('locked', note);
      return false;
    }
    if (password.length <= MAX_LENGTH.password && (await this.checkPassword(provider, password, now))) return true;
    this.refuse('wrong_password', note);
    const lock = await this.backends.lockouts.recordFailure(provider.systemUser, address(), now, this.policy, deadline);
    // A lock is set by the failure that reaches a threshold: its end is exactly now + lockMs.
    if (lock !== null && lock.until === now + this.policy.lockMs) {
      this.metrics?.lockouts.labels({ scope: lock.address === null ? 'user' : 'address' }).inc();
    }
    return false;
  }

  /** Applies the password policy and stores the new hash; true only if it really changed. */
  async changePassword(provider: Provider, oldPassword: string, newPassword: string | null, now: number): Promise<boolean> {
    if (newPassword === null || newPassword.length < this.config.passwordMinLength || newPassword === oldPassword) return false;
    const passwordHash = await hashPassword(newPassword);
    return (await this.backends.providers.update(provider.systemUser, { passwordHash }, now)) !== null;
  }

  private refuse(reason: FailureReason, note?: RefusalNote): null {
    this.metrics?.loginFailures.labels({ reason }).inc();
    if (note !== undefined) note.reason = WHY[reason];
    return null;
  }

  /** Why `changePassword` refuses a new password, or null when it would take it. */
  passwordProblem(oldPassword: string, newPassword: string | null): string | null {
    if (newPassword === null || newPassword === '') return 'NuevaClave is missing';
    if (newPassword.length < this.config.passwordMinLength) return `NuevaClave is shorter than PASSWORD_MIN_LENGTH (${this.config.passwordMinLength})`;
    if (newPassword === oldPassword) return 'NuevaClave is the current password';
    return null;
  }

  /** Bound to the stored hash, so a password change invalidates it; never the password itself. */
  private cacheKey(provider: Provider, password: string): string {
    return hash('sha256', `${provider.systemUser}\0${password}\0${provider.passwordHash}`, 'base64');
  }

  private verifiedBefore(key: string, provider: Provider, now: number): boolean {
    const cached = this.verified.get(key);
    return cached !== undefined && cached.passwordHash === provider.passwordHash && cached.expiresAt > now;
  }

  private async checkPassword(provider: Provider, password: string, now: number): Promise<boolean> {
    const key = this.cacheKey(provider, password);
    if (this.verifiedBefore(key, provider, now)) return true;
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
}
