import type { Provider, ProviderPatch, ProviderStore } from './types.js';

/**
 * Providers are read on every Login-prefixed call and change rarely. This keeps each one for
 * `ttlMs`; writes through this store invalidate at once, so a single process (embedded mode)
 * always sees its own changes, and other gateways' changes show within `ttlMs`.
 */
export class CachedProviderStore implements ProviderStore {
  private readonly cache = new Map<string, { provider: Provider | null; until: number }>();

  constructor(
    private readonly inner: ProviderStore,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = 100_000,
  ) {}

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
    return this.inner.create(provider);
  }

  async update(systemUser: string, patch: ProviderPatch, now: number): Promise<Provider | null> {
    this.cache.delete(systemUser);
    const updated = await this.inner.update(systemUser, patch, now);
    this.cache.delete(systemUser);
    return updated;
  }

  list(): Promise<Provider[]> {
    return this.inner.list();
  }

  async delete(systemUser: string): Promise<boolean> {
    this.cache.delete(systemUser);
    const deleted = await this.inner.delete(systemUser);
    this.cache.delete(systemUser);
    return deleted;
  }
}
