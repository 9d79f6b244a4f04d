import type { LockoutStore } from '../types.js';

/**
 * Most failure times kept per user. The policy needs only a handful (default threshold 10); the cap
 * keeps a user hammered thousands of times per second from growing an unbounded array. Counts
 * saturate at this value.
 */
export const MAX_FAILURES_KEPT = 10_000;

interface Entry {
  /** Failure times inside the window (as of the latest recordFailure), oldest first. */
  failures: number[];
  /** Window of the latest recordFailure call, so the sweep knows when the failures stop mattering. */
  windowMs: number;
  lastFailureAt: number;
  lockedUntil: number | null;
}

/**
 * In process memory, like the ASMX service's InProc state: a restart forgets failures and locks,
 * which is what the deployed service did too.
 */
export class MemoryLockoutStore implements LockoutStore {
  private readonly entries = new Map<string, Entry>();

  async recordFailure(systemUser: string, now: number, windowMs: number): Promise<number> {
    let entry = this.entries.get(systemUser);
    if (entry === undefined) {
      entry = { failures: [], windowMs, lastFailureAt: -Infinity, lockedUntil: null };
      this.entries.set(systemUser, entry);
    }
    const failures = entry.failures;
    // Kept sorted so expired times are a prefix. Times come from the caller's clock and are normally
    // increasing, so the insert is nearly always a push.
    let at = failures.length;
    while (at > 0 && (failures[at - 1] ?? 0) > now) at--;
    failures.splice(at, 0, now);
    const cutoff = now - windowMs;
    let expired = 0;
    while (expired < failures.length && (failures[expired] ?? 0) <= cutoff) expired++;
    if (failures.length - expired > MAX_FAILURES_KEPT) expired = failures.length - MAX_FAILURES_KEPT;
    if (expired > 0) failures.splice(0, expired);
    entry.windowMs = windowMs;
    entry.lastFailureAt = failures[failures.length - 1] ?? now;
    // Times after `now` (a caller's clock running behind another's) are inside the window too.
    return Math.max(failures.length, 1);
  }

  async lock(systemUser: string, until: number): Promise<void> {
    const entry = this.entries.get(systemUser);
    if (entry === undefined) this.entries.set(systemUser, { failures: [], windowMs: 0, lastFailureAt: -Infinity, lockedUntil: until });
    else entry.lockedUntil = until;
  }

  async lockedUntil(systemUser: string, now: number): Promise<number | null> {
    const entry = this.entries.get(systemUser);
    if (entry === undefined || entry.lockedUntil === null) return null;
    if (entry.lockedUntil <= now) {
      entry.lockedUntil = null;
      return null;
    }
    return entry.lockedUntil;
  }

  async clear(systemUser: string): Promise<void> {
    this.entries.delete(systemUser);
  }

  /**
   * Drops users whose failures are all outside their window and who are not locked. Without it,
   * failed logins for made-up SystemUsers would grow the map forever.
   */
  sweep(now: number): void {
    for (const [systemUser, entry] of this.entries) {
      const failuresLive = entry.lastFailureAt > now - entry.windowMs;
      const locked = entry.lockedUntil !== null && entry.lockedUntil > now;
      if (!failuresLive && !locked) this.entries.delete(systemUser);
    }
  }

  /** Number of users tracked (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }
}
