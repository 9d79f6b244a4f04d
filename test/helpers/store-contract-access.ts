/**
 * The behaviour the admin API's access control relies on (shared/backends/operators.ts): operator
 * tokens, the audit trail and token-guess lockouts. Part of the store contract (store-contract.ts
 * calls it), so the embedded and Redis implementations both run it.
 */
import { describe, expect, it } from 'vitest';
import {
  AUDIT_SCAN_MAX,
  auditTarget,
  LAST_USED_RESOLUTION_MS,
  type AuditEntry,
  type AuditRecord,
  type OperatorStores,
  type OperatorToken,
} from '../../shared/backends/operators.js';
import type { StoreFactory } from './store-contract.js';

const MINUTE = 60_000;
const DAY = 24 * 3_600_000;
const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);

const token = (name: string, extra: Partial<OperatorToken> = {}): OperatorToken => ({
  name,
  role: 'viewer',
  tokenHash: `${name}-hash`.padEnd(64, '0'),
  createdAt: T0,
  createdBy: 'bootstrap',
  expiresAt: null,
  lastUsedAt: null,
  ...extra,
});

export const auditRecord = (at: number, extra: Partial<AuditRecord> = {}): AuditRecord => ({
  at,
  identity: 'ana',
  role: 'admin',
  address: '127.0.0.1',
  method: 'PATCH',
  route: 'PATCH /admin/providers/:systemUser',
  target: auditTarget('provider', 'acme'),
  status: 200,
  outcome: 'ok',
  changes: ['password'],
  detail: null,
  requestId: `req-${at}`,
  ...extra,
});

/** Every entry a query selects, page after page (and how many pages it took). */
async function everything(stores: OperatorStores, query: Omit<Parameters<OperatorStores['audit']['page']>[0], 'before'>): Promise<{ ids: number[]; pages: number }> {
  const ids: number[] = [];
  let before: number | undefined;
  for (let pages = 1; pages < 1000; pages++) {
    const page = await stores.audit.page({ ...query, ...(before === undefined ? {} : { before }) });
    ids.push(...page.entries.map((e) => e.id));
    if (page.nextBefore === null) return { ids, pages };
    before = page.nextBefore;
  }
  throw new Error('paging did not end');
}

export function accessContract(stores: StoreFactory): void {
  const open = async (): Promise<OperatorStores> => (await stores.open(stores.place())).operators;

  describe('OperatorTokenStore', () => {
    it('creates once per name, finds a token by its hash, lists by name and revokes', async () => {
      const s = await open();
      expect(await s.tokens.create(token('ana', { role: 'admin', expiresAt: T0 + DAY }))).toBe('created');
      expect(await s.tokens.create(token('ana', { tokenHash: 'f'.repeat(64) }))).toBe('exists');
      expect(await s.tokens.create(token('bob'))).toBe('created');
      // Another name with a hash already stored is refused too (a hash finds one token).
      expect(await s.tokens.create(token('carl', { tokenHash: token('bob').tokenHash }))).toBe('exists');
      expect(await s.tokens.use(token('ana').tokenHash, T0 + 5)).toEqual(token('ana', { role: 'admin', expiresAt: T0 + DAY, lastUsedAt: T0 + 5 }));
      expect(await s.tokens.use('0'.repeat(64), T0 + 5)).toBeNull();
      expect((await s.tokens.list()).map((t) => [t.name, t.role, t.lastUsedAt])).toEqual([
        ['ana', 'admin', T0 + 5],
        ['bob', 'viewer', null],
      ]);
      expect(await s.tokens.revoke('ana')).toBe(true);
      expect(await s.tokens.use(token('ana').tokenHash, T0 + 6)).toBeNull();
      expect(await s.tokens.revoke('ana')).toBe(false);
      expect((await s.tokens.list()).map((t) => t.name)).toEqual(['bob']);
      // The name is free again, with a new token.
      expect(await s.tokens.create(token('ana', { tokenHash: 'e'.repeat(64) }))).toBe('created');
      expect((await s.tokens.use('e'.repeat(64), T0 + 7))?.name).toBe('ana');
    });

    it('moves lastUsedAt once per resolution, and never on an expired token', async () => {
      const s = await open();
      await s.tokens.create(token('ana', { expiresAt: T0 + 10 * MINUTE }));
      const hash = token('ana').tokenHash;
      expect((await s.tokens.use(hash, T0))?.lastUsedAt).toBe(T0);
      expect((await s.tokens.use(hash, T0 + LAST_USED_RESOLUTION_MS - 1))?.lastUsedAt).toBe(T0);
      expect((await s.tokens.use(hash, T0 + LAST_USED_RESOLUTION_MS))?.lastUsedAt).toBe(T0 + LAST_USED_RESOLUTION_MS);
      // Expired: found (so the caller can say so) but not touched.
      expect(await s.tokens.use(hash, T0 + 20 * MINUTE)).toMatchObject({ name: 'ana', expiresAt: T0 + 10 * MINUTE, lastUsedAt: T0 + LAST_USED_RESOLUTION_MS });
    });
  });

  describe('AuditStore', () => {
    it('appends with increasing ids and pages newest first by identity, target (and what is under it) and time', async () => {
      const s = await open();
      const added: AuditEntry[] = [];
      const plan: Partial<AuditRecord>[] = [
        {},
        { identity: 'bob', target: auditTarget('provider', 'acme', 'command', '17'), changes: ['cmd', 'unidad', 'equipo'] },
        { target: auditTarget('provider', 'acme/b'), detail: { sessionsEnded: 2 } },
        { identity: null, role: null, status: 401, outcome: 'refused', target: null, changes: [] },
        { identity: 'bob', target: auditTarget('provider', 'other') },
        { target: auditTarget('token', 'bob') },
      ];
      for (const [i, extra] of plan.entries()) added.push(await s.audit.append(auditRecord(T0 + i * MINUTE, extra)));
      for (let i = 1; i < added.length; i++) expect(added[i]!.id).toBeGreaterThan(added[i - 1]!.id);
      const ids = added.map((e) => e.id);

      const all = await s.audit.page({ limit: 100 });
      expect(all).toEqual({ entries: [...added].reverse(), nextBefore: null });
      expect(all.entries[3]).toMatchObject({ detail: { sessionsEnded: 2 }, target: 'provider/acme%2Fb' });

      expect((await everything(s, { limit: 2 })).ids).toEqual([...ids].reverse());
      expect((await everything(s, { limit: 10, identity: 'bob' })).ids).toEqual([ids[4], ids[1]]);
      // A provider's history holds its commands, not a provider whose name only starts like it.
      expect((await everything(s, { limit: 10, target: 'provider/acme' })).ids).toEqual([ids[1], ids[0]]);
      expect((await everything(s, { limit: 10, target: 'provider/acme/command/17' })).ids).toEqual([ids[1]]);
      expect((await everything(s, { limit: 10, target: 'provider/acme%2Fb' })).ids).toEqual([ids[2]]);
      expect((await everything(s, { limit: 10, target: 'provider/acme', identity: 'ana' })).ids).toEqual([ids[0]]);
      expect((await everything(s, { limit: 10, since: T0 + 4 * MINUTE })).ids).toEqual([ids[5], ids[4]]);
      expect((await everything(s, { limit: 10, identity: 'nobody' })).ids).toEqual([]);
      const below = await s.audit.page({ limit: 10, before: ids[2]! });
      expect(below.entries.map((e) => e.id)).toEqual([ids[1], ids[0]]);
    });

    it('examines a bounded number of entries per page and says where to go on', async () => {
      const s = await open();
      const total = AUDIT_SCAN_MAX + 50;
      const first = await s.audit.append(auditRecord(T0, { identity: 'rare' }));
      // Appended in parallel batches: the contract is about paging, not append speed.
      for (let i = 0; i < total; i += 100) {
        await Promise.all(Array.from({ length: Math.min(100, total - i) }, (_, k) => s.audit.append(auditRecord(T0 + 1 + i + k, { target: auditTarget('provider', 'busy') }))));
      }
      // 'rare' has its own index: one page finds it at once.
      expect((await s.audit.page({ limit: 5, identity: 'rare' })).entries.map((e) => e.id)).toEqual([first.id]);
      // A target under the busy scope that matches nothing: the first page stops at the scan bound.
      const page = await s.audit.page({ limit: 5, target: 'provider/busy/command/1' });
      expect(page.entries).toEqual([]);
      expect(page.nextBefore).not.toBeNull();
      expect(await everything(s, { limit: 5, target: 'provider/busy/command/1' })).toEqual({ ids: [], pages: 2 });
    });

    it('expires entries older than the retention, at most `max` a call, and keeps the rest', async () => {
      const s = await open();
      const added: AuditEntry[] = [];
      for (let i = 0; i < 7; i++) added.push(await s.audit.append(auditRecord(T0 + i * DAY, { identity: i % 2 === 0 ? 'ana' : 'bob' })));
      expect(await s.audit.expire(T0 + 3 * DAY, 2)).toBe(2);
      expect(await s.audit.expire(T0 + 3 * DAY, 100)).toBe(1);
      expect(await s.audit.expire(T0 + 3 * DAY, 100)).toBe(0);
      const left = added.slice(3).map((e) => e.id).reverse();
      expect((await s.audit.page({ limit: 100 })).entries.map((e) => e.id)).toEqual(left);
      expect((await s.audit.page({ limit: 100, identity: 'ana' })).entries.map((e) => e.id)).toEqual([added[6]!.id, added[4]!.id]);
      expect((await s.audit.page({ limit: 100, target: 'provider/acme' })).entries.map((e) => e.id)).toEqual(left);
      // Ids keep growing after the oldest were dropped.
      expect((await s.audit.append(auditRecord(T0 + 8 * DAY))).id).toBeGreaterThan(added[6]!.id);
    });
  });

  describe('AdminLockoutStore', () => {
    const policy = { maxFailures: 3, windowMs: 10 * MINUTE, lockMs: 15 * MINUTE };

    it('locks an address after maxFailures inside the window, for lockMs, and no other address', async () => {
      const s = await open();
      expect(await s.lockouts.recordFailure('10.0.0.1', T0, policy)).toBeNull();
      expect(await s.lockouts.recordFailure('10.0.0.1', T0 + MINUTE, policy)).toBeNull();
      expect(await s.lockouts.lockedUntil('10.0.0.1', T0 + MINUTE)).toBeNull();
      expect(await s.lockouts.recordFailure('::1', T0 + MINUTE, policy)).toBeNull();
      expect(await s.lockouts.recordFailure('10.0.0.1', T0 + 2 * MINUTE, policy)).toBe(T0 + 17 * MINUTE);
      expect(await s.lockouts.lockedUntil('10.0.0.1', T0 + 3 * MINUTE)).toBe(T0 + 17 * MINUTE);
      expect(await s.lockouts.recordFailure('10.0.0.1', T0 + 4 * MINUTE, policy)).toBe(T0 + 17 * MINUTE);
      expect(await s.lockouts.lockedUntil('::1', T0 + 3 * MINUTE)).toBeNull();
      expect(await s.lockouts.lockedUntil('10.0.0.1', T0 + 17 * MINUTE)).toBeNull();
      // After the lock a new window starts from nothing.
      expect(await s.lockouts.recordFailure('10.0.0.1', T0 + 18 * MINUTE, policy)).toBeNull();
    });

    it('forgets failures older than the window', async () => {
      const s = await open();
      await s.lockouts.recordFailure('10.0.0.2', T0, policy);
      await s.lockouts.recordFailure('10.0.0.2', T0 + MINUTE, policy);
      expect(await s.lockouts.recordFailure('10.0.0.2', T0 + 11 * MINUTE, policy)).toBeNull();
      expect(await s.lockouts.lockedUntil('10.0.0.2', T0 + 11 * MINUTE)).toBeNull();
    });
  });
}
