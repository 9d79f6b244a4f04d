import type { Provider, ProviderPatch, ProviderStore } from '../../shared/backends/types.js';
import type { Deadline } from '../../shared/util/deadline.js';

/**
 * Providers are read on every Login-prefixed call and change rarely. This keeps each one for
 * `ttlMs`; writes through this store invalidate at once, so a single process (embedded mode)
 * always sees its own changes, and other gateways' changes show within `ttlMs`. A gateway with
 * several front-end threads has one of these per thread: `announce` tells the others about each
 * write, and they call `invalidate` (gateway/threads/provider-invalidation.ts).
 */
export class CachedProviderStore implements ProviderStore {
  private readonly cache = new Map<string, { provider: Provider | null; until: number }>();
  /**
   * Bumped by every write and invalidation: a lookup that was in flight across one keeps its answer
   * out of the cache (it may be the record from before the write, such as "unknown" before a create).
   */
  private writes = 0;

  constructor(
    private readonly inner: ProviderStore,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 100_000,
    private readonly announce: (systemUser: string) => void = () => {},
  ) {}

  /** Forgets the cached record: this store or another thread of this process changed it. */
  invalidate(systemUser: string): void {
    this.writes++;
    this.cache.delete(systemUser);
  }

  peek(systemUser: string): Provider | null | undefined {
    const hit = this.cache.get(systemUser);
    return hit !== undefined && hit.until > this.now() ? hit.provider : undefined;
  }

  async get(systemUser: string, deadline?: Deadline): Promise<Provider | null> {
    if (this.ttlMs <= 0) return this.inner.get(systemUser, deadline);
    const hit = this.cache.get(systemUser);
    const now = this.now();
    if (hit !== undefined && hit.until > now) return hit.provider;
    const writesBefore = this.writes;
    const provider = await this.inner.get(systemUser, deadline);
    if (this.writes !== writesBefore) return provider;
    // Unknown users are cached too (briefly), so a flood of bad logins costs no lookups.
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(systemUser, { provider, until: now + this.ttlMs });
    return provider;
  }

  async create(provider: Provider): Promise<Provider | null> {
    return this.writing(provider.systemUser, () => this.inner.create(provider));
  }

  async update(systemUser: string, patch: ProviderPatch, now: number): Promise<Provider | null> {
    return this.writing(systemUser, () => this.inner.update(systemUser, patch, now));
  }

  list(): Promise<Provider[]> {
    return this.inner.list();
  }

  async delete(systemUser: string): Promise<boolean> {
    return this.writing(systemUser, () => this.inner.delete(systemUser));
  }

  /** A write: the record forgotten before and after it (a lookup overlapping it caches nothing), the other threads told. */
  private async writing<T>(systemUser: string, write: () => Promise<T>): Promise<T> {
    this.invalidate(systemUser);
    try {
      return await write();
    } finally {
      this.invalidate(systemUser);
      this.announce(systemUser);
    }
  }
}
