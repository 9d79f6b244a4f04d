import type { Session, SessionStore } from '../types.js';

interface Entry {
  systemUser: string;
  expiresAt: number;
}

/**
 * In process memory with sliding expiry, like ASP.NET InProc session state: a restart logs
 * everybody out and clients simply Login again (most traffic uses the stateless Login-prefixed
 * operations anyway).
 */
export class MemorySessionStore implements SessionStore {
  private readonly entries = new Map<string, Entry>();

  async create(id: string, systemUser: string, now: number, ttlMs: number): Promise<Session> {
    const entry: Entry = { systemUser, expiresAt: now + ttlMs };
    this.entries.set(id, entry);
    return { id, ...entry };
  }

  async touch(id: string, now: number, ttlMs: number): Promise<Session | null> {
    const entry = this.entries.get(id);
    if (entry === undefined) return null;
    if (entry.expiresAt <= now) {
      this.entries.delete(id);
      return null;
    }
    entry.expiresAt = now + ttlMs;
    // A copy, so a caller cannot change the stored expiry.
    return { id, ...entry };
  }

  async destroy(id: string, now: number): Promise<boolean> {
    const entry = this.entries.get(id);
    if (entry === undefined) return false;
    this.entries.delete(id);
    return entry.expiresAt > now;
  }

  /** Removes expired sessions that nobody touched again, so memory stays bounded. */
  sweep(now: number): void {
    for (const [id, entry] of this.entries) {
      if (entry.expiresAt <= now) this.entries.delete(id);
    }
  }

  /** Number of sessions held, live or not yet swept (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }
}
