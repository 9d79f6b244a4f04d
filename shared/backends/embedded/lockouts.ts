import type { Lockout, LockoutPolicy, LockoutStore } from '../types.js';

/** Default cap of SystemUser+address pairs tracked at once. */
const DEFAULT_MAX_TRACKED_PAIRS = 100_000;

interface PairEntry {
  readonly systemUser: string;
  readonly address: string;
  /** Failure times inside the window, oldest first; never more than the policy's threshold. */
  failures: number[];
  lockedUntil: number | null;
  /** Window of the latest failure, so the sweep knows when the entry stops mattering. */
  windowMs: number;
}

/** SystemUser-wide count over a fixed window, and the lock it sets past the ceiling. */
interface UserEntry {
  windowStart: number;
  windowMs: number;
  count: number;
  lockedUntil: number | null;
}

const pairKey = (systemUser: string, address: string): string => `${systemUser}\u0000${address}`;
const live = (until: number | null, now: number): until is number => until !== null && until > now;

/**
 * In process memory, like the ASMX service's InProc state: a restart forgets failures and locks.
 * Memory is bounded whatever the traffic: only known SystemUsers are recorded (the domain checks),
 * a pair keeps at most `maxFailures` times, and past `maxTrackedPairs` the least recently failing
 * pair is forgotten. A SystemUser-wide lock stops further recording for that user.
 */
export class MemoryLockoutStore implements LockoutStore {
  /** In least-recently-failed order: a failure moves its pair to the end. */
  private readonly pairs = new Map<string, PairEntry>();
  private readonly users = new Map<string, UserEntry>();
  /** How many pairs each SystemUser has: one without any needs no address to be checked. */
  private readonly pairsOf = new Map<string, number>();

  constructor(private readonly maxTrackedPairs = DEFAULT_MAX_TRACKED_PAIRS) {}

  lockedUntil(systemUser: string, address: () => string, now: number): Promise<number | null> {
    return Promise.resolve(this.lockedUntilNow(systemUser, address, now));
  }

  lockedUntilNow(systemUser: string, address: () => string, now: number): number | null {
    const user = this.users.get(systemUser)?.lockedUntil ?? null;
    const pair = this.pairsOf.has(systemUser) ? (this.pairs.get(pairKey(systemUser, address()))?.lockedUntil ?? null) : null;
    const until = Math.max(live(user, now) ? user : -Infinity, live(pair, now) ? pair : -Infinity);
    return until === -Infinity ? null : until;
  }

  async recordFailure(systemUser: string, address: string, now: number, policy: LockoutPolicy): Promise<Lockout | null> {
    // While the SystemUser is locked everywhere nothing more is recorded: memory stays bounded.
    const locked = this.users.get(systemUser)?.lockedUntil ?? null;
    if (live(locked, now)) return { systemUser, address: null, until: locked };
    this.countForUser(systemUser, now, policy);
    const key = pairKey(systemUser, address);
    let pair = this.pairs.get(key);
    if (pair === undefined) {
      pair = { systemUser, address, failures: [], lockedUntil: null, windowMs: policy.windowMs };
      this.pairsOf.set(systemUser, (this.pairsOf.get(systemUser) ?? 0) + 1);
    } else this.pairs.delete(key); // re-inserted below: the most recently failing pair goes last
    this.pairs.set(key, pair);
    this.evictBeyondCap();

    const cutoff = now - policy.windowMs;
    pair.failures = pair.failures.filter((t) => t > cutoff);
    pair.failures.push(now);
    if (pair.failures.length > policy.maxFailures) pair.failures.splice(0, pair.failures.length - policy.maxFailures);
    pair.windowMs = policy.windowMs;
    if (pair.failures.length >= policy.maxFailures) {
      pair.lockedUntil = now + policy.lockMs;
      pair.failures = [];
    }
    const userLock = this.users.get(systemUser)?.lockedUntil ?? null;
    if (live(userLock, now)) return { systemUser, address: null, until: userLock };
    return live(pair.lockedUntil, now) ? { systemUser, address, until: pair.lockedUntil } : null;
  }

  async clear(systemUser: string): Promise<void> {
    this.users.delete(systemUser);
    for (const [key, pair] of this.pairs) if (pair.systemUser === systemUser) this.forget(key, pair);
  }

  async list(now: number): Promise<Lockout[]> {
    const locks: Lockout[] = [];
    for (const [systemUser, user] of this.users) if (live(user.lockedUntil, now)) locks.push({ systemUser, address: null, until: user.lockedUntil });
    for (const pair of this.pairs.values()) {
      if (live(pair.lockedUntil, now)) locks.push({ systemUser: pair.systemUser, address: pair.address, until: pair.lockedUntil });
    }
    return locks.sort((a, b) => a.until - b.until);
  }

  /** Drops what no longer matters: failures all outside their window and no lock in force. */
  sweep(now: number): void {
    for (const [key, pair] of this.pairs) {
      const lastFailure = pair.failures[pair.failures.length - 1] ?? -Infinity;
      if (lastFailure <= now - pair.windowMs && !live(pair.lockedUntil, now)) this.forget(key, pair);
    }
    for (const [systemUser, user] of this.users) {
      if (user.windowStart <= now - user.windowMs && !live(user.lockedUntil, now)) this.users.delete(systemUser);
    }
  }

  /** Pairs tracked (for tests and metrics). */
  get size(): number {
    return this.pairs.size;
  }

  private countForUser(systemUser: string, now: number, policy: LockoutPolicy): void {
    let user = this.users.get(systemUser);
    if (user === undefined || now - user.windowStart >= policy.windowMs) {
      user = { windowStart: now, windowMs: policy.windowMs, count: 0, lockedUntil: user?.lockedUntil ?? null };
      this.users.set(systemUser, user);
    }
    user.count++;
    if (user.count >= policy.userMaxFailures) {
      user.lockedUntil = now + policy.lockMs;
      user.count = 0;
    }
  }

  private evictBeyondCap(): void {
    for (const [key, pair] of this.pairs) {
      if (this.pairs.size <= this.maxTrackedPairs) return;
      this.forget(key, pair);
    }
  }

  private forget(key: string, pair: PairEntry): void {
    this.pairs.delete(key);
    const left = (this.pairsOf.get(pair.systemUser) ?? 1) - 1;
    if (left === 0) this.pairsOf.delete(pair.systemUser);
    else this.pairsOf.set(pair.systemUser, left);
  }
}
