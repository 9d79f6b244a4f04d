/**
 * The store behaviour the operators' additions rely on (cancelling commands, deleting a provider,
 * paging): part of the store contract (store-contract.ts calls it), so the embedded and Redis
 * implementations both run it.
 */
import { describe, expect, it } from 'vitest';
import { newSessionId } from '../../shared/domain/session-ids.js';
import type { ContractStores, StoreFactory } from './store-contract.js';
import { provider } from './store-contract.js';

const MINUTE = 60_000;
const DAY = 24 * 3_600_000;
const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);

const queue = (b: ContractStores, systemUser: string, now = T0, expiresAt = T0 + DAY) =>
  b.commands.enqueue({ systemUser, cmd: 'CC', unidad: 'U', equipo: 'E', now, expiresAt });

export function operatorContract(stores: StoreFactory): void {
  const open = (): Promise<ContractStores> => stores.open(stores.place());

  describe('ProviderStore.delete', () => {
    it('removes the record only; deleting again is false; the SystemUser can be created anew', async () => {
      const b = await open();
      await b.providers.create(provider('gone'));
      await b.providers.create(provider('kept'));
      expect(await b.providers.delete('gone')).toBe(true);
      expect(await b.providers.get('gone')).toBeNull();
      expect((await b.providers.list()).map((p) => p.systemUser)).toEqual(['kept']);
      expect(await b.providers.delete('gone')).toBe(false);
      expect(await b.providers.create(provider('gone', T0 + 5))).toEqual(provider('gone', T0 + 5));
    });
  });

  describe('SessionStore.endAll', () => {
    it("ends every session of one SystemUser, counting the live ones, and leaves others' alone", async () => {
      const b = await open();
      const create = async (user: string, ttl: number, at = T0): Promise<string> => (await b.sessions.create(newSessionId(), user, at, ttl)).id;
      const a1 = await create('acme', 20 * MINUTE);
      const a2 = await create('acme', 20 * MINUTE);
      const a3 = await create('acme', MINUTE); // expired by the time of endAll
      const o1 = await create('other', 20 * MINUTE);
      // A touched session is ended too (its slid expiry is what counts).
      expect(await b.sessions.touch(a2, T0 + 10 * MINUTE, 20 * MINUTE)).not.toBeNull();
      expect(await b.sessions.endAll('acme', T0 + 2 * MINUTE)).toBe(2);
      for (const id of [a1, a2, a3]) expect(await b.sessions.touch(id, T0 + 3 * MINUTE, 20 * MINUTE)).toBeNull();
      expect(await b.sessions.touch(o1, T0 + 3 * MINUTE, 20 * MINUTE)).not.toBeNull();
      expect(await b.sessions.endAll('acme', T0 + 3 * MINUTE)).toBe(0);
      // New sessions after that work as usual.
      const a4 = await create('acme', 20 * MINUTE, T0 + 4 * MINUTE);
      expect(await b.sessions.touch(a4, T0 + 5 * MINUTE, 20 * MINUTE)).not.toBeNull();
      expect(await b.sessions.destroy(a4, T0 + 5 * MINUTE)).toBe(true);
      expect(await b.sessions.endAll('acme', T0 + 5 * MINUTE)).toBe(0);
    });
  });

  describe('CommandStore.cancel', () => {
    it('cancels a queued or delivered command: never delivered again, status and finish refused', async () => {
      const b = await open();
      const queued = await queue(b, 'acme');
      const delivered = await queue(b, 'acme', T0 + 1);
      const next = await queue(b, 'acme', T0 + 2);
      expect((await b.commands.deliverNext('acme', T0 + 10))?.numero).toBe(queued.numero);
      expect(await b.commands.appendStatus('acme', queued.numero, 'sent', T0 + 11)).toBe(true);

      const first = await b.commands.cancel('acme', queued.numero, T0 + 20);
      expect(first?.outcome).toBe('cancelled');
      expect(first?.command).toMatchObject({ numero: queued.numero, state: 'cancelled', finishedAt: T0 + 20, deliveries: 1 });
      expect(first?.command.history.at(-1)).toEqual({ at: T0 + 20, kind: 'finished', message: 'cancelled' });
      expect(await b.commands.appendStatus('acme', queued.numero, 'late', T0 + 21)).toBe(false);
      expect(await b.commands.finish('acme', queued.numero, true, T0 + 21)).toBe('rejected');
      expect(await b.commands.finish('acme', queued.numero, false, T0 + 21)).toBe('rejected');
      // The queue moves on to the next one.
      expect((await b.commands.deliverNext('acme', T0 + 30))?.numero).toBe(delivered.numero);
      expect((await b.commands.cancel('acme', delivered.numero, T0 + 31))?.outcome).toBe('cancelled');
      expect((await b.commands.deliverNext('acme', T0 + 40))?.numero).toBe(next.numero);

      // Already cancelled, finished or expired: not open, unchanged.
      const again = await b.commands.cancel('acme', queued.numero, T0 + 50);
      expect(again).toMatchObject({ outcome: 'not-open', command: { state: 'cancelled', finishedAt: T0 + 20 } });
      expect(await b.commands.finish('acme', next.numero, true, T0 + 51)).toBe('finished');
      expect((await b.commands.cancel('acme', next.numero, T0 + 52))?.command.state).toBe('succeeded');
      const old = await queue(b, 'acme', T0, T0 + 100);
      expect(await b.commands.cancel('acme', old.numero, T0 + 100)).toMatchObject({ outcome: 'not-open', command: { state: 'expired' } });
      // Unknown, or another provider's: null, and nothing changes.
      const theirs = await queue(b, 'other');
      expect(await b.commands.cancel('acme', theirs.numero, T0 + 60)).toBeNull();
      expect(await b.commands.cancel('acme', 999_999, T0 + 60)).toBeNull();
      expect(await b.commands.cancel('acme', 0, T0 + 60)).toBeNull();
      expect((await b.commands.get('other', theirs.numero, T0 + 60))?.state).toBe('pending');
      expect(await b.commands.get('acme', theirs.numero, T0 + 60)).toBeNull();
      expect((await b.commands.list('acme', T0 + 200)).map((c) => c.state)).toEqual(['cancelled', 'cancelled', 'succeeded', 'expired']);
    });

    it('holds against concurrent polls: every delivery happened before the cancel, none after', async () => {
      const b = await open();
      const c = await queue(b, 'acme');
      const polls = Array.from({ length: 40 }, (_, i) => b.commands.deliverNext('acme', T0 + i));
      const cancelled = b.commands.cancel('acme', c.numero, T0 + 20);
      const more = Array.from({ length: 40 }, (_, i) => b.commands.deliverNext('acme', T0 + 40 + i));
      const delivered = [...(await Promise.all(polls)), ...(await Promise.all(more))].filter((d) => d !== null);
      const result = await cancelled;
      expect(result?.outcome).toBe('cancelled');
      // The cancel saw exactly the deliveries made before it; any made after it would be extra.
      expect(delivered.length).toBe(result?.command.deliveries);
      expect((await b.commands.get('acme', c.numero, T0 + 100))?.deliveries).toBe(result?.command.deliveries);
      expect(await b.commands.deliverNext('acme', T0 + 100)).toBeNull();
    });

    it('cancelAll empties the queue of one provider only, counting what it cancelled', async () => {
      const b = await open();
      const done = await queue(b, 'acme');
      await b.commands.finish('acme', done.numero, true, T0 + 1);
      const pending = await queue(b, 'acme');
      const inProcess = await queue(b, 'acme');
      await b.commands.appendStatus('acme', inProcess.numero, 'x', T0 + 2);
      const overdue = await queue(b, 'acme', T0, T0 + 5);
      const theirs = await queue(b, 'other');
      expect(await b.commands.cancelAll('acme', T0 + 10)).toBe(2);
      expect(await b.commands.deliverNext('acme', T0 + 11)).toBeNull();
      const states = new Map((await b.commands.list('acme', T0 + 11)).map((c) => [c.numero, c.state]));
      expect([states.get(done.numero), states.get(pending.numero), states.get(inProcess.numero), states.get(overdue.numero)]).toEqual([
        'succeeded',
        'cancelled',
        'cancelled',
        'expired',
      ]);
      expect((await b.commands.deliverNext('other', T0 + 11))?.numero).toBe(theirs.numero);
      expect(await b.commands.cancelAll('acme', T0 + 12)).toBe(0);
    });
  });

  describe('CommandStore.page', () => {
    it('pages newest first across providers or for one, by reported state, until nothing is left', async () => {
      const b = await open();
      const n: number[] = [];
      for (const [i, who] of ['acme', 'other', 'acme', 'acme', 'other'].entries()) n.push((await queue(b, who, T0 + i)).numero);
      await b.commands.cancel('acme', n[2]!, T0 + 10);
      await b.commands.cancel('other', n[4]!, T0 + 10);
      const all = async (query: Parameters<ContractStores['commands']['page']>[0]): Promise<number[][]> => {
        const pages: number[][] = [];
        let before: number | undefined;
        for (let guard = 0; guard < 20; guard++) {
          const page = await b.commands.page({ ...query, ...(before === undefined ? {} : { beforeNumero: before }) }, T0 + 20);
          pages.push(page.commands.map((c) => c.numero));
          if (page.nextBeforeNumero === null) return pages;
          before = page.nextBeforeNumero;
        }
        throw new Error('paging did not end');
      };
      const everything = await all({ limit: 2 });
      expect(everything.flat()).toEqual([...n].reverse());
      expect(everything[0]).toEqual([n[4], n[3]]);
      expect((await all({ limit: 2, systemUser: 'acme' })).flat()).toEqual([n[3], n[2], n[0]]);
      expect((await all({ limit: 10, state: 'cancelled' })).flat()).toEqual([n[4], n[2]]);
      expect((await all({ limit: 10, state: 'pending', systemUser: 'other' })).flat()).toEqual([n[1]]);
      const first = await b.commands.page({ limit: 1 }, T0 + 20);
      expect(first.commands[0]).toMatchObject({ systemUser: 'other', state: 'cancelled', history: [{ kind: 'queued' }, { kind: 'finished', message: 'cancelled' }] });
      // An unfinished command past its expiry is reported, and found, as expired.
      expect((await b.commands.page({ limit: 10, state: 'expired' }, T0 + 2 * DAY)).commands.map((c) => c.numero)).toEqual([n[3], n[1], n[0]]);
      expect((await b.commands.page({ limit: 10, state: 'pending' }, T0 + 2 * DAY)).commands).toEqual([]);
      expect(await b.commands.page({ limit: 5, beforeNumero: n[0] }, T0)).toEqual({ commands: [], nextBeforeNumero: null });
    });
  });

  describe('TripStore.clear', () => {
    it("removes every vehicle of one provider's trip", async () => {
      const b = await open();
      await b.trips.addVehicle('acme', 'AA1', 'S1', T0);
      await b.trips.addVehicle('acme', 'BB2', 'S2', T0);
      await b.trips.addVehicle('other', 'CC3', 'S3', T0);
      expect(await b.trips.clear('acme')).toBe(2);
      expect(await b.trips.listVehicles('acme')).toEqual([]);
      expect(await b.trips.isRegistered('acme', 'AA1')).toBe(false);
      expect((await b.trips.listVehicles('other')).map((v) => v.dominio)).toEqual(['CC3']);
      expect(await b.trips.clear('acme')).toBe(0);
    });
  });
}
