import { randomBytes } from 'node:crypto';
import type { SessionStore } from '../../shared/backends/types.js';

/** ASP.NET session ids: 24 chars of [a-z0-5], 120 random bits (docs/protocol.md §Sessions). */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz012345';

export function newSessionId(): string {
  const bytes = randomBytes(15);
  let id = '';
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      id += ALPHABET.charAt((acc >> bits) & 31);
    }
  }
  return id;
}

const SESSION_ID_RE = /^[a-z0-5]{24}$/;

export class Sessions {
  constructor(
    private readonly store: SessionStore,
    private readonly ttlMs: number,
  ) {}

  async start(systemUser: string, now: number): Promise<string> {
    const id = newSessionId();
    await this.store.create(id, systemUser, now, this.ttlMs);
    return id;
  }

  /** The provider of a live session (sliding its expiry), or null. */
  async resolve(sessionId: string | null, now: number): Promise<string | null> {
    if (sessionId === null || !SESSION_ID_RE.test(sessionId)) return null;
    const session = await this.store.touch(sessionId, now, this.ttlMs);
    return session?.systemUser ?? null;
  }

  /** `resolve` answered at once when the store keeps sessions in this thread; undefined otherwise. */
  resolveNow(sessionId: string | null, now: number): string | null | undefined {
    if (sessionId === null || !SESSION_ID_RE.test(sessionId)) return null;
    if (this.store.touchNow === undefined) return undefined;
    return this.store.touchNow(sessionId, now, this.ttlMs)?.systemUser ?? null;
  }

  async end(sessionId: string | null, now: number): Promise<boolean> {
    if (sessionId === null || !SESSION_ID_RE.test(sessionId)) return false;
    return this.store.destroy(sessionId, now);
  }
}
