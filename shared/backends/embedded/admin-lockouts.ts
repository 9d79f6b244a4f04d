import type { AdminLockoutStore, GuessPolicy } from '../operators.js';

/** Addresses tracked at once by default; past it the one that failed least recently is forgotten. */
const DEFAULT_MAX_TRACKED_ADDRESSES = 10_000;

interface AddressEntry {
  windowStart: number;
  failures: number;
  lockedUntil: number | null;
  /** When the entry stops mattering: the window's end or the lock's, whichever is later. */
  relevantUntil: number;
}

/**
 * Wrong admin tokens per client address, in process memory (the embedded mode is one process).
 * Bounded: at most `maxTracked` addresses, the least recently failing forgotten first, and an
 * entry is dropped as soon as its window and lock are over.
 */
export class MemoryAdminLockoutStore implements AdminLockoutStore {
  /** In least-recently-failed order: a failure moves its address to the end. */
  private readonly entries = new Map<string, AddressEntry>();

  constructor(private readonly maxTracked = DEFAULT_MAX_TRACKED_ADDRESSES) {}

  async lockedUntil(address: string, now: number): Promise<number | null> {
    const until = this.entries.get(address)?.lockedUntil ?? null;
    return until !== null && until > now ? until : null;
  }

  async recordFailure(address: string, now: number, policy: GuessPolicy): Promise<number | null> {
    let entry = this.entries.get(address);
    if (entry !== undefined && entry.lockedUntil !== null && entry.lockedUntil > now) return entry.lockedUntil;
    if (entry === undefined || now - entry.windowStart >= policy.windowMs) {
      entry = { windowStart: now, failures: 0, lockedUntil: null, relevantUntil: now + policy.windowMs };
    }
    entry.failures++;
    if (entry.failures >= policy.maxFailures) {
      entry.lockedUntil = now + policy.lockMs;
      entry.failures = 0;
      entry.windowStart = now;
    }
    entry.relevantUntil = Math.max(entry.windowStart + policy.windowMs, entry.lockedUntil ?? 0);
    this.entries.delete(address);
    this.entries.set(address, entry);
    this.sweep(now);
    return entry.lockedUntil !== null && entry.lockedUntil > now ? entry.lockedUntil : null;
  }

  /** Addresses tracked (tests). */
  get size(): number {
    return this.entries.size;
  }

  /** Forgets what no longer matters, then the oldest beyond the cap. */
  private sweep(now: number): void {
    for (const [address, entry] of this.entries) {
      if (this.entries.size <= this.maxTracked && entry.relevantUntil > now) return;
      this.entries.delete(address);
    }
  }
}
