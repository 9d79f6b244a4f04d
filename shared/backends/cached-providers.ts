import type { Provider, ProviderPatch, ProviderStore } from './types.js';

/**
 * Providers are read on every Login-prefixed call and change rarely. This keeps each one for
 * `ttlMs`; writes through this store invalidate at once, so a single process (embedded mode)
 * always sees its own changes, and other gateways' changes show within `ttlMs`. A gateway with
 * several front-end threads has one of these per thread: `announce` tells the others about each
 * write, and they call `invalidate` (gateway/threads/provider-invalidation.ts).
 */
export class CachedProviderStore implements ProviderStore {
  private readonly cache = new Map<string, { provider: Provider | null; until: number }>();

  constructor(
    private readonly inner: ProviderStore,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 100_000,
    private readonly announce: (systemUser: string) => void = () => {},
  ) {}

  /** Forgets the cached record: another thread of this process changed it. */
  invalidate(systemUser: string): void {
    this.cache.delete(systemUser);
  }

  peek(systemUser: string): Provider | null | undefined {
    const hit = this.cache.get(systemUser);
    return hit !== undefined && hit.until > this.now() ? hit.provider : undefined;
  }

  async get(systemUser: string): Promise<Provider | null> {
    if (this.ttlMs <= 0) return this.inner.get(systemUser);
    const hit = this.cache.get(systemUser);
    const now = this.now();
    if (hit !== undefined && hit.until > now) return hit.provider;
    const provider = await this.inner.get(systemUser);
    // Unknown users are cached too (briefly), so a flood of bad logins costs no lookups.
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(systemUser, { provider, until: now + this.ttlMs });
    return provider;
  }

  async create(provider: Provider): Promise<Provider | null> {
    this.cache.delete(provider.systemUser);
    try {
      return await this.inner.create(provider);
    } finally {
      this.announce(provider.systemUser);
    }
  }

  async update(systemUser: string, patch: ProviderPatch, now: number): Promise<Provider | null> {
    this.cache.delete(systemUser);
    try {
      return await this.inner.update(systemUser, patch, now);
    } finally {
      this.cache.delete(systemUser);
      this.announce(systemUser);
    }
  }

  list(): Promise<Provider[]> {
    return this.inner.list();
  }

  async delete(systemUser: string): Promise<boolean> {
    this.cache.delete(systemUser);
    try {
      return await this.inner.delete(systemUser);
    } finally {
      this.cache.delete(systemUser);
      this.announce(systemUser);
    }
  }
}
