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
  /** In least-recently-used order: touch moves an entry to the end. */
  private readonly entries = new Map<string, Entry>();

  /** Clients that Login before every call leave a session each: past `maxSessions` the least recently used go. */
  constructor(private readonly maxSessions = 1_000_000) {}

  async create(id: string, systemUser: string, now: number, ttlMs: number): Promise<Session> {
    const entry: Entry = { systemUser, expiresAt: now + ttlMs };
    this.entries.set(id, entry);
    if (this.entries.size > this.maxSessions) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    return { id, ...entry };
  }

  touch(id: string, now: number, ttlMs: number): Promise<Session | null> {
    return Promise.resolve(this.touchNow(id, now, ttlMs));
  }

  touchNow(id: string, now: number, ttlMs: number): Session | null {
    const entry = this.entries.get(id);
    if (entry === undefined) return null;
    if (entry.expiresAt <= now) {
      this.entries.delete(id);
      return null;
    }
    entry.expiresAt = now + ttlMs;
    this.entries.delete(id);
    this.entries.set(id, entry);
    // A copy, so a caller cannot change the stored expiry.
    return { id, ...entry };
  }

  async destroy(id: string, now: number): Promise<boolean> {
    const entry = this.entries.get(id);
    if (entry === undefined) return false;
    this.entries.delete(id);
    return entry.expiresAt > now;
  }

  /** A scan of every session: deleting a provider is rare, and an index would cost every Login. */
  async endAll(systemUser: string, now: number): Promise<number> {
    let live = 0;
    for (const [id, entry] of this.entries) {
      if (entry.systemUser !== systemUser) continue;
      if (entry.expiresAt > now) live++;
      this.entries.delete(id);
    }
    return live;
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
