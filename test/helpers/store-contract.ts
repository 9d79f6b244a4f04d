/**
 * The behaviour every implementation of the state stores shares (shared/backends/types.ts):
 * embedded (test/unit/shared/backends/embedded/stores.unit.test.ts) and Redis (test/scale-out/redis-backends.scale-out.test.ts) both run it.
 * What only one implementation has (persistence across a reopen, Redis key layout and expiry,
 * several gateways sharing one Redis, sweeping) stays in that implementation's file.
 */
import { describe, expect, it } from 'vitest';
import type { Backends, Provider } from '../../shared/backends/types.js';
import { CachedProviderStore } from '../../gateway/service/provider-cache.js';
import { newSessionId } from '../../shared/domain/session-ids.js';
import { accessContract } from './store-contract-access.js';
import { operatorContract } from './store-contract-operators.js';

export type ContractStores = Pick<Backends, 'providers' | 'lockouts' | 'sessions' | 'commands' | 'trips' | 'operators' | 'close'>;

/** Where stores live (a data directory, a Redis key prefix) and how to open them there. */
export interface StoreFactory {
  /** A new, empty place. */
  place(): string;
  /** Stores at `place`; the caller's cleanup closes them (closing twice is harmless). */
  open(place: string): Promise<ContractStores>;
}

const MINUTE = 60_000;
const DAY = 24 * 3_600_000;
const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);

/** A provider record as the stores keep it (the hash is a placeholder, never verified here). */
export function provider(systemUser: string, at = T0): Provider {
  return {
    systemUser,
    passwordHash: 'scrypt$16384$8$1$c2FsdA==$aGFzaA==',
    enabled: true,
    timeZone: null,
    requireRegisteredVehicles: false,
    createdAt: at,
    updatedAt: at,
  };
}

/** Declares the shared tests against one implementation. */
export function storeContract(stores: StoreFactory): void {
  const open = (): Promise<ContractStores> => stores.open(stores.place());

  describe('synchronous twins (shared/backends/types.ts): where a store offers one, it answers what its async form answers', () => {
    it('lockedUntilNow agrees with lockedUntil before, during and after a lock', async (ctx) => {
      const b = await open();
      const { lockouts } = b;
      if (lockouts.lockedUntilNow === undefined) {
        await b.close();
        ctx.skip('this store offers no lockedUntilNow');
        return;
      }
      const lockedUntilNow = lockouts.lockedUntilNow.bind(lockouts);
      const policy = { maxFailures: 2, userMaxFailures: 100, windowMs: 10 * MINUTE, lockMs: 5 * MINUTE };
      const addr = () => '10.0.0.1';
      const other = () => '10.0.0.2';
      const agree = async (at: number): Promise<void> => {
        for (const a of [addr, other]) expect(lockedUntilNow('Acme', a, at)).toEqual(await lockouts.lockedUntil('Acme', a, at));
      };
      await agree(T0);
      await lockouts.recordFailure('Acme', '10.0.0.1', T0, policy);
      await agree(T0 + 1);
      await lockouts.recordFailure('Acme', '10.0.0.1', T0 + 2, policy);
      await agree(T0 + 3);
      expect(lockedUntilNow('Acme', addr, T0 + 3)).not.toBeNull();
      await agree(T0 + 6 * MINUTE);
      await lockouts.clear('Acme');
      await agree(T0 + 7 * MINUTE);
      await b.close();
    });

    it('touchNow agrees with touch, sliding the expiry the same way', async (ctx) => {
      const b = await open();
      const { sessions } = b;
      if (sessions.touchNow === undefined) {
        await b.close();
        ctx.skip('this store offers no touchNow');
        return;
      }
      const touchNow = sessions.touchNow.bind(sessions);
      const ttl = 20 * MINUTE;
      const { id: s1 } = await sessions.create(newSessionId(), 'Acme', T0, ttl);
      const now = touchNow(s1, T0 + MINUTE, ttl);
      expect(now).toEqual(await sessions.touch(s1, T0 + MINUTE, ttl));
      expect(now?.expiresAt).toBe(T0 + MINUTE + ttl);
      // Slid by touchNow: still live past the first expiry.
      expect(touchNow(s1, T0 + ttl + 30_000, ttl)).toEqual(await sessions.touch(s1, T0 + ttl + 30_000, ttl));
      const unknown = newSessionId();
      expect(touchNow(unknown, T0, ttl)).toEqual(await sessions.touch(unknown, T0, ttl));
      expect(touchNow(s1, T0 + 10 * DAY, ttl)).toBeNull();
      expect(await sessions.touch(s1, T0 + 10 * DAY, ttl)).toBeNull();
      await b.close();
    });

    it('peek of the provider cache over this store agrees with get, and misses rather than answer stale', async () => {
      const b = await open();
      let now = T0;
      const providers = new CachedProviderStore(b.providers, 1_000, () => now);
      await providers.create(provider('Acme'));
      expect(providers.peek('Acme')).toBeUndefined(); // not read yet: ask get
      expect(await providers.get('Acme')).toEqual(provider('Acme'));
      expect(providers.peek('Acme')).toEqual(await b.providers.get('Acme'));
      await providers.get('Nobody');
      expect(providers.peek('Nobody')).toBeNull();
      await providers.update('Acme', { enabled: false }, T0 + 1);
      expect(providers.peek('Acme')).toBeUndefined(); // its own write dropped the copy
      await providers.get('Acme');
      expect(providers.peek('Acme')).toEqual(await b.providers.get('Acme'));
      now += 1_001;
      expect(providers.peek('Acme')).toBeUndefined(); // past PROVIDER_CACHE_MS
      await b.close();
    });
  });

  describe('ProviderStore', () => {
    it('creates, refuses duplicates (case-sensitively), gets, updates and lists', async () => {
      const b = await open();
      const acme = provider('Acme');
      expect(await b.providers.create(acme)).toEqual(acme);
      expect(await b.providers.create({ ...acme, passwordHash: 'other' })).toBeNull();
      // SystemUser is case-sensitive: a different user.
      expect(await b.providers.create(provider('acme'))).not.toBeNull();
      expect(await b.providers.get('Acme')).toEqual(acme);
      expect(await b.providers.get('ACME')).toBeNull();

      const updated = await b.providers.update(
        'Acme',
        { enabled: false, timeZone: 'America/Argentina/Buenos_Aires', requireRegisteredVehicles: true },
        T0 + 5,
      );
      expect(updated).toEqual({
        ...acme,
        enabled: false,
        timeZone: 'America/Argentina/Buenos_Aires',
        requireRegisteredVehicles: true,
        updatedAt: T0 + 5,
      });
      expect(await b.providers.get('Acme')).toEqual(updated);

      // Fields left out (or undefined) stay; a null time zone goes back to the service's.
      const again = await b.providers.update('Acme', { passwordHash: 'new', timeZone: null, enabled: undefined }, T0 + 9);
      expect(again).toMatchObject({ passwordHash: 'new', timeZone: null, enabled: false, updatedAt: T0 + 9, createdAt: T0 });
      expect(await b.providers.update('nobody', { enabled: true }, T0)).toBeNull();
      expect(await b.providers.get('nobody')).toBeNull();

      expect((await b.providers.list()).map((p) => p.systemUser)).toEqual(['Acme', 'acme']);
    });

  });

    describe('ProviderStore after a reopen', () => {
    it('survives a reopen', async () => {
      const place = stores.place();
      const b = await stores.open(place);
      await b.providers.create(provider('durable'));
      await b.close();
      const again = await stores.open(place);
      expect(await again.providers.get('durable')).toEqual(provider('durable'));
    });
  });

  describe('LockoutStore', () => {
    const policy = { maxFailures: 3, userMaxFailures: 6, windowMs: 15 * MINUTE, lockMs: 10 * MINUTE };

    it('locks one SystemUser+address after maxFailures inside the sliding window, and only that address', async () => {
      const b = await open();
      expect(await b.lockouts.recordFailure('u', '10.0.0.1', T0, policy)).toBeNull();
      expect(await b.lockouts.recordFailure('u', '10.0.0.1', T0 + MINUTE, policy)).toBeNull();
      // The first failure is exactly 15 minutes old at the third: out of the window, no lock.
      expect(await b.lockouts.recordFailure('u', '10.0.0.1', T0 + 15 * MINUTE, policy)).toBeNull();
      const third = T0 + 16 * MINUTE - 1;
      expect(await b.lockouts.recordFailure('u', '10.0.0.1', third, policy)).toEqual({ systemUser: 'u', address: '10.0.0.1', until: third + 10 * MINUTE });
      expect(await b.lockouts.lockedUntil('u', () => '10.0.0.1', third + MINUTE)).toBe(third + 10 * MINUTE);
      // The provider's own servers elsewhere, and other SystemUsers, are not locked.
      expect(await b.lockouts.lockedUntil('u', () => '10.0.0.2', third + MINUTE)).toBeNull();
      expect(await b.lockouts.lockedUntil('v', () => '10.0.0.1', third + MINUTE)).toBeNull();
      // Over at its end.
      expect(await b.lockouts.lockedUntil('u', () => '10.0.0.1', third + 10 * MINUTE)).toBeNull();
      expect(await b.lockouts.list(third + MINUTE)).toEqual([{ systemUser: 'u', address: '10.0.0.1', until: third + 10 * MINUTE }]);
    });

    it('counts two failures in the same millisecond twice', async () => {
      const b = await open();
      await b.lockouts.recordFailure('u', 'a', T0, policy);
      await b.lockouts.recordFailure('u', 'a', T0, policy);
      expect(await b.lockouts.recordFailure('u', 'a', T0, policy)).not.toBeNull();
    });

    it('locks the SystemUser everywhere past userMaxFailures from all addresses together', async () => {
      const b = await open();
      for (let i = 0; i < 5; i++) expect(await b.lockouts.recordFailure('u', `198.51.100.${i}`, T0 + i, policy)).toBeNull();
      const lock = await b.lockouts.recordFailure('u', '198.51.100.99', T0 + 5, policy);
      expect(lock).toEqual({ systemUser: 'u', address: null, until: T0 + 5 + 10 * MINUTE });
      expect(await b.lockouts.lockedUntil('u', () => '10.9.9.9', T0 + MINUTE)).toBe(T0 + 5 + 10 * MINUTE);
      expect(await b.lockouts.list(T0 + MINUTE)).toEqual([{ systemUser: 'u', address: null, until: T0 + 5 + 10 * MINUTE }]);
      // The SystemUser-wide count starts over in the next window.
      expect(await b.lockouts.recordFailure('v', 'x', T0, policy)).toBeNull();
    });

    it('clear lifts every lock of the SystemUser and forgets its failures', async () => {
      const b = await open();
      for (let i = 0; i < 3; i++) await b.lockouts.recordFailure('u', 'a', T0 + i, policy);
      await b.lockouts.recordFailure('u', 'b', T0, policy);
      for (let i = 0; i < 3; i++) await b.lockouts.recordFailure('w', 'a', T0 + i, policy);
      await b.lockouts.clear('u');
      expect(await b.lockouts.lockedUntil('u', () => 'a', T0 + MINUTE)).toBeNull();
      expect(await b.lockouts.list(T0 + MINUTE)).toEqual([{ systemUser: 'w', address: 'a', until: T0 + 2 + 10 * MINUTE }]);
      // Forgotten: two more failures from 'b' do not reach the threshold with the old one.
      await b.lockouts.recordFailure('u', 'b', T0 + 1, policy);
      expect(await b.lockouts.recordFailure('u', 'b', T0 + 2, policy)).toBeNull();
    });
  });

    describe('SessionStore', () => {
    it('slides expiry on touch and drops expired sessions', async () => {
      const b = await open();
      const ttl = 20 * MINUTE;
      const given = newSessionId();
      const created = await b.sessions.create(given, 'acme', T0, ttl);
      const s1 = created.id;
      expect(created).toEqual({ id: s1, systemUser: 'acme', expiresAt: T0 + ttl });
      // The id answered is the one given, or the same with a store's stamp in its last characters.
      expect(s1).toMatch(/^[a-z0-5]{24}$/);
      expect(s1.slice(0, 21)).toBe(given.slice(0, 21));
      expect(await b.sessions.touch(s1, T0 + 19 * MINUTE, ttl)).toEqual({
        id: s1,
        systemUser: 'acme',
        expiresAt: T0 + 39 * MINUTE,
      });
      // Still alive 30 minutes after creation because the touch slid it.
      expect(await b.sessions.touch(s1, T0 + 30 * MINUTE, ttl)).not.toBeNull();
      // Expired exactly at expiresAt.
      expect(await b.sessions.touch(s1, T0 + 50 * MINUTE, ttl)).toBeNull();
      expect(await b.sessions.touch(s1, T0 + 50 * MINUTE - 1, ttl)).toBeNull(); // deleted, not revived
      expect(await b.sessions.touch(newSessionId(), T0, ttl)).toBeNull();
    });

    it('destroy is true only for a live session', async () => {
      const b = await open();
      const { id: live } = await b.sessions.create(newSessionId(), 'acme', T0, MINUTE);
      const { id: dead } = await b.sessions.create(newSessionId(), 'acme', T0, MINUTE);
      expect(await b.sessions.destroy(live, T0 + 1)).toBe(true);
      expect(await b.sessions.destroy(live, T0 + 1)).toBe(false);
      expect(await b.sessions.touch(live, T0 + 2, MINUTE)).toBeNull();
      expect(await b.sessions.destroy(dead, T0 + MINUTE)).toBe(false);
      expect(await b.sessions.destroy(newSessionId(), T0)).toBe(false);
    });

    it('a returned session is a copy', async () => {
      const b = await open();
      const s = await b.sessions.create(newSessionId(), 'acme', T0, MINUTE);
      s.expiresAt = T0 + 100 * MINUTE;
      expect(await b.sessions.touch(s.id, T0 + 2 * MINUTE, MINUTE)).toBeNull();
    });

  });

    describe('CommandStore', () => {
    it('runs the whole lifecycle', async () => {
      const b = await open();
      const c1 = await b.commands.enqueue({ systemUser: 'acme', cmd: 'CC', unidad: 'AB123CD', equipo: 'E1', now: T0, expiresAt: T0 + DAY });
      const c2 = await b.commands.enqueue({ systemUser: 'acme', cmd: 'CD', unidad: 'AB123CD', equipo: 'E1', now: T0 + 1, expiresAt: T0 + DAY });
      const other = await b.commands.enqueue({ systemUser: 'other', cmd: 'CC', unidad: 'ZZ', equipo: 'E9', now: T0 + 2, expiresAt: T0 + DAY });
      expect(c1).toMatchObject({
        systemUser: 'acme',
        cmd: 'CC',
        unidad: 'AB123CD',
        equipo: 'E1',
        state: 'pending',
        createdAt: T0,
        expiresAt: T0 + DAY,
        deliveries: 0,
        lastDeliveredAt: null,
        finishedAt: null,
        history: [{ at: T0, kind: 'queued', message: '' }],
      });
      expect(c1.numero).toBeGreaterThan(0);
      expect(Number.isInteger(c1.numero)).toBe(true);
      expect(c2.numero).toBeGreaterThan(c1.numero);
      expect(other.numero).toBeGreaterThan(c2.numero); // one sequence across providers

      // The same (oldest) command on every poll until finished; each delivery counted and timed.
      const d1 = await b.commands.deliverNext('acme', T0 + 10);
      const d2 = await b.commands.deliverNext('acme', T0 + 20);
      expect(d1?.numero).toBe(c1.numero);
      expect(d2?.numero).toBe(c1.numero);
      expect(d2).toMatchObject({ deliveries: 2, lastDeliveredAt: T0 + 20, state: 'pending' });

      // EstadoComando: in process, MSG in history; not for another provider or an unknown NUMERO.
      expect(await b.commands.appendStatus('acme', c1.numero, 'received by device', T0 + 30)).toBe(true);
      expect(await b.commands.appendStatus('other', c1.numero, 'nope', T0 + 30)).toBe(false);
      expect(await b.commands.appendStatus('acme', 999_999, 'nope', T0 + 30)).toBe(false);
      expect(await b.commands.appendStatus('acme', -1, 'nope', T0 + 30)).toBe(false);
      expect(await b.commands.appendStatus('acme', 1.5, 'nope', T0 + 30)).toBe(false);
      expect((await b.commands.deliverNext('acme', T0 + 40))?.state).toBe('in_process');

      // ComandoProcesado: another provider is rejected and changes nothing.
      expect(await b.commands.finish('other', c1.numero, true, T0 + 45)).toBe('rejected');
      expect(await b.commands.finish('acme', c1.numero, true, T0 + 50)).toBe('finished');
      expect(await b.commands.finish('acme', c1.numero, true, T0 + 60)).toBe('already-same'); // retried
      expect(await b.commands.finish('acme', c1.numero, false, T0 + 60)).toBe('rejected'); // other outcome
      expect(await b.commands.finish('acme', 999_999, true, T0 + 60)).toBe('rejected');
      expect(await b.commands.finish('acme', 0, true, T0 + 60)).toBe('rejected');
      expect(await b.commands.appendStatus('acme', c1.numero, 'late', T0 + 70)).toBe(false); // finished

      // The next poll moves on to the second command.
      expect((await b.commands.deliverNext('acme', T0 + 80))?.numero).toBe(c2.numero);
      expect(await b.commands.finish('acme', c2.numero, false, T0 + 90)).toBe('finished');
      expect(await b.commands.finish('acme', c2.numero, false, T0 + 91)).toBe('already-same');
      expect(await b.commands.finish('acme', c2.numero, true, T0 + 92)).toBe('rejected');
      expect(await b.commands.deliverNext('acme', T0 + 100)).toBeNull();

      const list = await b.commands.list('acme', T0 + 200);
      expect(list.map((c) => [c.numero, c.state])).toEqual([
        [c1.numero, 'succeeded'],
        [c2.numero, 'failed'],
      ]);
      expect(list[0]).toMatchObject({ deliveries: 3, lastDeliveredAt: T0 + 40, finishedAt: T0 + 50 });
      expect(list[0]?.history).toEqual([
        { at: T0, kind: 'queued', message: '' },
        { at: T0 + 10, kind: 'delivered', message: '' },
        { at: T0 + 30, kind: 'status', message: 'received by device' },
        { at: T0 + 50, kind: 'finished', message: 'succeeded' },
      ]);
      expect((await b.commands.list('other', T0)).map((c) => c.numero)).toEqual([other.numero]);
      expect(await b.commands.list('nobody', T0)).toEqual([]);
      // The other provider's command was never touched by acme's calls.
      expect((await b.commands.deliverNext('other', T0 + 300))?.numero).toBe(other.numero);
    });

    it('skips expired commands and refuses to change them', async () => {
      const b = await open();
      const old = await b.commands.enqueue({ systemUser: 'acme', cmd: 'A', unidad: 'U', equipo: 'E', now: T0, expiresAt: T0 + 100 });
      const fresh = await b.commands.enqueue({ systemUser: 'acme', cmd: 'B', unidad: 'U', equipo: 'E', now: T0 + 1, expiresAt: T0 + DAY });
      const stale = await b.commands.enqueue({ systemUser: 'acme', cmd: 'C', unidad: 'U', equipo: 'E', now: T0 + 2, expiresAt: T0 + 200 });

      expect((await b.commands.deliverNext('acme', T0 + 50))?.numero).toBe(old.numero);
      // Listed as expired before anything stored it.
      expect((await b.commands.list('acme', T0 + 100)).map((c) => c.state)).toEqual(['expired', 'pending', 'pending']);
      expect(await b.commands.appendStatus('acme', old.numero, 'too late', T0 + 100)).toBe(false);
      expect(await b.commands.finish('acme', old.numero, true, T0 + 100)).toBe('rejected');

      expect((await b.commands.deliverNext('acme', T0 + 100))?.numero).toBe(fresh.numero);
      expect(await b.commands.finish('acme', fresh.numero, true, T0 + 150)).toBe('finished');
      expect(await b.commands.deliverNext('acme', T0 + 300)).toBeNull(); // `stale` expired at T0 + 200

      const list = await b.commands.list('acme', T0 + 300);
      expect(list.map((c) => c.state)).toEqual(['expired', 'succeeded', 'expired']);
      expect(list[2]?.numero).toBe(stale.numero);
      // Stored as expired: an earlier clock does not revive it.
      expect(await b.commands.finish('acme', stale.numero, true, T0 + 150)).toBe('rejected');
      expect((await b.commands.list('acme', T0)).map((c) => c.state)).toEqual(['expired', 'succeeded', 'expired']);
    });

    it('stores the expiry of every overdue command at a poll, not only those ahead of the delivered one', async () => {
      const b = await open();
      const first = await b.commands.enqueue({ systemUser: 'acme', cmd: 'A', unidad: 'U', equipo: 'E', now: T0, expiresAt: T0 + DAY });
      const later = await b.commands.enqueue({ systemUser: 'acme', cmd: 'B', unidad: 'U', equipo: 'E', now: T0, expiresAt: T0 + 100 });
      expect((await b.commands.deliverNext('acme', T0 + 500))?.numero).toBe(first.numero);
      // `later` was stored expired by that poll, so an earlier clock cannot finish it.
      expect(await b.commands.finish('acme', later.numero, true, T0 + 50)).toBe('rejected');
      expect(await b.commands.appendStatus('acme', later.numero, 'x', T0 + 50)).toBe(false);
    });

  });

    describe('CommandStore after a reopen', () => {
    it('keeps commands across a reopen and never reuses a NUMERO', async () => {
      const place = stores.place();
      const b = await stores.open(place);
      const c1 = await b.commands.enqueue({ systemUser: 'acme', cmd: 'CC', unidad: 'U', equipo: 'E', now: T0, expiresAt: T0 + DAY });
      await b.commands.deliverNext('acme', T0 + 1);
      await b.close();
      const again = await stores.open(place);
      const d = await again.commands.deliverNext('acme', T0 + 2);
      expect(d).toMatchObject({ numero: c1.numero, deliveries: 2 });
      const c2 = await again.commands.enqueue({ systemUser: 'acme', cmd: 'CC', unidad: 'U', equipo: 'E', now: T0 + 3, expiresAt: T0 + DAY });
      expect(c2.numero).toBeGreaterThan(c1.numero);
    });
  });

  describe('TripStore', () => {
    it('lists vehicles in ordinal order, re-registers, removes', async () => {
      const b = await open();
      await b.trips.addVehicle('acme', 'BB222', 'S2', T0);
      await b.trips.addVehicle('acme', 'aa111', 'S3', T0 + 1);
      await b.trips.addVehicle('acme', 'AA111', 'S1', T0 + 2);
      await b.trips.addVehicle('other', 'CC333', 'S9', T0);

      let list = await b.trips.listVehicles('acme');
      // Ordinal: upper case before lower case.
      expect(list.map((v) => v.dominio)).toEqual(['AA111', 'BB222', 'aa111']);
      expect(list[0]).toEqual({ dominio: 'AA111', nroSerie: 'S1', registeredAt: T0 + 2, lastReport: null });

      await b.trips.addVehicle('acme', 'BB222', 'S2-new', T0 + 100);
      list = await b.trips.listVehicles('acme');
      expect(list[1]).toEqual({ dominio: 'BB222', nroSerie: 'S2-new', registeredAt: T0 + 100, lastReport: null });

      expect(await b.trips.isRegistered('acme', 'BB222')).toBe(true);
      expect(await b.trips.isRegistered('acme', 'bb222')).toBe(false);
      expect(await b.trips.isRegistered('acme', 'CC333')).toBe(false);
      expect(await b.trips.removeVehicle('acme', 'BB222')).toBe(true);
      expect(await b.trips.removeVehicle('acme', 'BB222')).toBe(false);
      expect((await b.trips.listVehicles('acme')).map((v) => v.dominio)).toEqual(['AA111', 'aa111']);
      expect(await b.trips.listVehicles('nobody')).toEqual([]);
    });

    it('sorts by UTF-16 code units, not by UTF-8 bytes', async () => {
      const b = await open();
      // U+FFFF is one code unit 0xFFFF; U+1F69A is the surrogate pair 0xD83D 0xDE9A, which sorts first
      // (UTF-8 byte order would put it last).
      for (const d of ['\uFFFF1', '\u{1F69A}2', 'Z3', 'é4']) await b.trips.addVehicle('acme', d, 'S', T0);
      expect((await b.trips.listVehicles('acme')).map((v) => v.dominio)).toEqual(['Z3', 'é4', '\u{1F69A}2', '\uFFFF1']);
    });

    it('pages the trip in code point order, honouring the limit, and reads one vehicle', async () => {
      const b = await open();
      const names = ['\uFFFF1', '\u{1F69A}2', 'Z3', 'é4', 'A0', 'a5'];
      for (const d of names) await b.trips.addVehicle('acme', d, `S-${d}`, T0);
      await b.trips.addVehicle('other', 'B1', 'S', T0);
      // Code point order (UTF-8 bytes): U+1F69A after U+FFFF.
      const all = ['A0', 'Z3', 'a5', 'é4', '\uFFFF1', '\u{1F69A}2'];
      const first = await b.trips.pageVehicles('acme', { limit: 2 });
      expect(first.map((v) => v.dominio)).toEqual(all.slice(0, 2));
      const seen: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await b.trips.pageVehicles('acme', { limit: 4, ...(after === undefined ? {} : { afterDominio: after }) });
        expect(page.length).toBeLessThanOrEqual(4);
        seen.push(...page.map((v) => v.dominio));
        if (page.length < 4) break;
        after = page[page.length - 1]?.dominio;
      }
      expect(seen).toEqual(all);
      expect(await b.trips.pageVehicles('acme', { limit: 10, afterDominio: '\u{1F69A}2' })).toEqual([]);
      expect(await b.trips.pageVehicles('nobody', { limit: 10 })).toEqual([]);

      expect(await b.trips.getVehicle('acme', 'Z3')).toEqual({ dominio: 'Z3', nroSerie: 'S-Z3', registeredAt: T0, lastReport: null });
      expect(await b.trips.getVehicle('acme', 'B1')).toBeNull();
      expect(await b.trips.removeVehicle('acme', 'Z3')).toBe(true);
      expect((await b.trips.pageVehicles('acme', { limit: 10 })).map((v) => v.dominio)).toEqual(all.filter((d) => d !== 'Z3'));
      expect(await b.trips.clear('acme')).toBe(5);
      expect(await b.trips.pageVehicles('acme', { limit: 10 })).toEqual([]);
    });

  });

  operatorContract(stores);
  accessContract(stores);
}
