/** The embedded token-guess lockouts stay bounded whatever the number of addresses guessing. */
import { describe, expect, it } from 'vitest';
import { MemoryAdminLockoutStore } from '../../../../../shared/backends/embedded/admin-lockouts.js';

const policy = { maxFailures: 3, windowMs: 60_000, lockMs: 300_000 };

describe('MemoryAdminLockoutStore', () => {
  it('tracks at most its cap of addresses, forgetting the least recently failing first', async () => {
    const store = new MemoryAdminLockoutStore(100);
    for (let i = 0; i < 10_000; i++) await store.recordFailure(`10.0.${i >> 8}.${i & 255}`, 1000 + i, policy);
    expect(store.size).toBe(100);
    // The newest are the ones kept: three more failures lock the most recent address.
    await store.recordFailure('10.0.39.15', 20_000, policy);
    expect(await store.recordFailure('10.0.39.15', 20_001, policy)).toBe(320_001);
  });

  it('drops entries whose window and lock are over as new failures come in', async () => {
    const store = new MemoryAdminLockoutStore(1000);
    for (let i = 0; i < 50; i++) await store.recordFailure(`192.0.2.${i}`, 0, policy);
    expect(store.size).toBe(50);
    await store.recordFailure('198.51.100.1', policy.windowMs + 1, policy);
    expect(store.size).toBe(1);
  });
});
