/** The provider cache: reads are reused for the TTL, own writes invalidate at once. */
import { describe, expect, it } from 'vitest';
import { CachedProviderStore } from '../../../../gateway/service/provider-cache.js';
import type { Provider, ProviderPatch, ProviderStore } from '../../../../shared/backends/types.js';

/** A counting in-memory store standing in for "another gateway's" shared store. */
class CountingStore implements ProviderStore {
  gets = 0;
  readonly rows = new Map<string, Provider>();
  async get(u: string) {
    this.gets++;
    return this.rows.get(u) ?? null;
  }
  async create(p: Provider) {
    if (this.rows.has(p.systemUser)) return null;
    this.rows.set(p.systemUser, p);
    return p;
  }
  async update(u: string, patch: ProviderPatch, now: number) {
    const p = this.rows.get(u);
    if (!p) return null;
    const next = { ...p, ...patch, updatedAt: now };
    this.rows.set(u, next);
    return next;
  }
  async list() {
    return [...this.rows.values()];
  }
  async delete(u: string) {
    return this.rows.delete(u);
  }
}

const acme: Provider = { systemUser: 'acme', passwordHash: 'h1', enabled: true, timeZone: null, requireRegisteredVehicles: false, createdAt: 0, updatedAt: 0 };

describe('CachedProviderStore', () => {
  it('reuses a read for the TTL, then reads again', async () => {
    let now = 0;
    const inner = new CountingStore();
    await inner.create(acme);
    const cached = new CachedProviderStore(inner, 1000, () => now);
    await cached.get('acme');
    await cached.get('acme');
    expect(inner.gets).toBe(1);
    // A change made elsewhere (another gateway) shows once the TTL passed.
    await inner.update('acme', { enabled: false }, 1);
    expect((await cached.get('acme'))?.enabled).toBe(true);
    now = 1001;
    expect((await cached.get('acme'))?.enabled).toBe(false);
    expect(inner.gets).toBe(2);
  });

  it('its own writes invalidate at once; unknown users are cached too', async () => {
    const inner = new CountingStore();
    const cached = new CachedProviderStore(inner, 60_000, () => 0);
    expect(await cached.get('acme')).toBeNull();
    expect(await cached.get('acme')).toBeNull();
    expect(inner.gets).toBe(1);
    await cached.create(acme);
    expect((await cached.get('acme'))?.passwordHash).toBe('h1');
    await cached.update('acme', { passwordHash: 'h2' }, 5);
    expect((await cached.get('acme'))?.passwordHash).toBe('h2');
    expect(await cached.delete('acme')).toBe(true);
    expect(await cached.get('acme')).toBeNull();
  });

  it('a lookup in flight across its own create does not leave "unknown" cached', async () => {
    const inner = new CountingStore();
    const cached = new CachedProviderStore(inner, 60_000, () => 0);
    // The lookup reads the store before the create lands and finishes after it (Redis restarted empty, an operator recreating the provider).
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const read = inner.get.bind(inner);
    inner.get = async (u: string) => {
      const found = await read(u);
      await gate;
      return found;
    };
    const lookup = cached.get('acme');
    await cached.create(acme);
    release();
    expect(await lookup).toBeNull();
    inner.get = read;
    expect((await cached.get('acme'))?.passwordHash).toBe('h1');
  });

  it('a TTL of 0 disables it', async () => {
    const inner = new CountingStore();
    await inner.create(acme);
    const cached = new CachedProviderStore(inner, 0);
    await cached.get('acme');
    await cached.get('acme');
    expect(inner.gets).toBe(2);
  });
});
