import type { SessionStore } from '../../shared/backends/types.js';
import { isSessionId, newSessionId } from '../../shared/domain/session-ids.js';
import type { Deadline } from '../../shared/util/deadline.js';

export { newSessionId } from '../../shared/domain/session-ids.js';

export class Sessions {
  constructor(
    private readonly store: SessionStore,
    private readonly ttlMs: number,
  ) {}

  async start(systemUser: string, now: number): Promise<string> {
    // The store may stamp the id it was given (docs/protocol.md §Sessions): the cookie carries the stored one.
    return (await this.store.create(newSessionId(), systemUser, now, this.ttlMs)).id;
  }

  /** The provider of a live session (sliding its expiry), or null. */
  async resolve(sessionId: string | null, now: number, deadline?: Deadline): Promise<string | null> {
    if (!isSessionId(sessionId)) return null;
    const session = await this.store.touch(sessionId, now, this.ttlMs, deadline);
    return session?.systemUser ?? null;
  }

  /** `resolve` answered at once when the store keeps sessions in this thread; undefined otherwise. */
  resolveNow(sessionId: string | null, now: number): string | null | undefined {
    if (!isSessionId(sessionId)) return null;
    if (this.store.touchNow === undefined) return undefined;
    return this.store.touchNow(sessionId, now, this.ttlMs)?.systemUser ?? null;
  }

  async end(sessionId: string | null, now: number): Promise<boolean> {
    if (!isSessionId(sessionId)) return false;
    return this.store.destroy(sessionId, now);
  }
}
