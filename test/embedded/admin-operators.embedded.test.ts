/**
 * The operators' additions to the admin API (ADMIN-API-CONTRACT.md) on the real server in the
 * embedded mode: each checked through what a provider then sees over SOAP/HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEventFeed } from '../../shared/backends/embedded/live-feed.js';
import { credentials, event, sessionCookie, TestApp, xmlParams } from '../helpers/harness.js';
import { openSse } from '../helpers/sse.js';

const idOf = (text: string): number => Number(/Result>(-?\d+)</.exec(text)?.[1] ?? NaN);
type Json = Record<string, unknown>;

describe('operators: embedded mode', () => {
  let t: TestApp;
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await t.admin(method, path, body);
    return { status: r.status, json: r.json as Json };
  };
  const insert = async (user: string, codigo: string, dominio = 'AB123CD') =>
    idOf((await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials(user), ...event({ Codigo: codigo, Dominio: dominio }) }))).text);

  beforeAll(async () => {
    t = await TestApp.start({ LOCKOUT_MAX_FAILURES: '2', LOCKOUT_USER_MAX_FAILURES: '50' });
    for (const u of ['acme', 'bravo', 'gone']) await t.provider(u, 'secret-1');
  });
  afterAll(() => t.stop());

  describe('cancelling a command', () => {
    it('a queued command is never handed out once cancelled; EstadoComando and ComandoProcesado answer false', async () => {
      const queued = (await api('POST', '/admin/providers/acme/commands', { cmd: 'CC', unidad: 'AB1', equipo: 'E1' })).json;
      const numero = queued.numero as number;
      const cancelled = await api('POST', `/admin/providers/acme/commands/${numero}/cancel`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.json).toMatchObject({ numero, state: 'cancelled', deliveries: 0 });
      expect(cancelled.json.finishedAt).toBe(new Date(t.now).toISOString());
      const got = await t.post('LoginYObtenerComando', credentials());
      expect(got.text).not.toContain(`<NUMERO>${numero}</NUMERO>`);
      expect((await t.post('LoginYEstadoComando', { ...credentials(), NUMERO: String(numero), MSG: 'x' })).text).toContain('>false<');
      expect((await t.post('LoginYComandoProcesado', { ...credentials(), NUMERO: String(numero), correcto: 'true' })).text).toContain('>false<');
    });

    it('a delivered command too; then 409 (already cancelled or finished), 404 (unknown or another provider), 400 (not a NUMERO)', async () => {
      const numero = (await api('POST', '/admin/providers/acme/commands', { cmd: 'CD', unidad: 'AB1', equipo: 'E1' })).json.numero as number;
      expect((await t.post('LoginYObtenerComando', credentials())).text).toContain(`<NUMERO>${numero}</NUMERO>`);
      expect((await api('POST', `/admin/providers/acme/commands/${numero}/cancel`)).json).toMatchObject({ state: 'cancelled', deliveries: 1 });
      expect((await t.post('LoginYObtenerComando', credentials())).text).not.toContain(`<NUMERO>${numero}</NUMERO>`);
      const again = await api('POST', `/admin/providers/acme/commands/${numero}/cancel`);
      expect(again.status).toBe(409);
      expect(again.json.error).toContain('cancelled');
      expect((await api('POST', `/admin/providers/bravo/commands/${numero}/cancel`)).status).toBe(404);
      expect((await api('POST', '/admin/providers/acme/commands/999999/cancel')).status).toBe(404);
      expect((await api('POST', '/admin/providers/nobody/commands/1/cancel')).status).toBe(404);
      const bad = await api('POST', '/admin/providers/acme/commands/1.5/cancel');
      expect(bad).toMatchObject({ status: 400, json: { field: 'numero' } });
      expect((await api('GET', '/admin/commands?state=cancelled&provider=acme')).json.commands).toHaveLength(2);
    });
  });

  describe('commands across providers', () => {
    it('pages newest first with nextBeforeNumero, filtered by provider and state', async () => {
      for (const u of ['acme', 'bravo', 'bravo']) await api('POST', `/admin/providers/${u}/commands`, { cmd: 'Z', unidad: 'U', equipo: 'E' });
      const seen: Json[] = [];
      let path = '/admin/commands?limit=2';
      for (let i = 0; i < 10; i++) {
        const page = await api('GET', path);
        expect(page.status).toBe(200);
        const { commands, nextBeforeNumero } = page.json as { commands: Json[]; nextBeforeNumero: number | null };
        seen.push(...commands);
        if (nextBeforeNumero === null) break;
        path = `/admin/commands?limit=2&beforeNumero=${nextBeforeNumero}`;
      }
      const numeros = seen.map((c) => c.numero as number);
      expect(numeros).toEqual([...numeros].sort((a, b) => b - a));
      expect(new Set(numeros).size).toBe(numeros.length);
      expect(seen[0]).toMatchObject({ systemUser: 'bravo', state: 'pending', cmd: 'Z' });
      const bravo = (await api('GET', '/admin/commands?provider=bravo&state=pending')).json.commands as Json[];
      expect(bravo.map((c) => c.systemUser)).toEqual(['bravo', 'bravo']);
      expect((await api('GET', '/admin/commands?state=bogus')).json.field).toBe('state');
      expect((await api('GET', '/admin/commands?beforeNumero=0')).json.field).toBe('beforeNumero');
      expect((await api('GET', '/admin/commands?nope=1')).status).toBe(400);
    });
  });

  describe('lockouts', () => {
    it('lists locks set by failed logins and lifts them without a password change', async () => {
      for (let i = 0; i < 2; i++) await t.soap11('Login', xmlParams(credentials('bravo', 'wrong!')));
      expect((await t.soap11('Login', xmlParams(credentials('bravo')))).text).toContain('>false<');
      const list = (await api('GET', '/admin/lockouts')).json.lockouts as Json[];
      expect(list).toHaveLength(1);
      expect(list[0]).toMatchObject({ systemUser: 'bravo' });
      expect(typeof list[0]?.address).toBe('string');
      expect(Date.parse(list[0]?.until as string)).toBeGreaterThan(t.now);
      expect((await t.admin('DELETE', '/admin/providers/bravo/lockouts')).status).toBe(204);
      expect((await api('GET', '/admin/lockouts')).json.lockouts).toEqual([]);
      expect((await t.soap11('Login', xmlParams(credentials('bravo')))).text).toContain('>true<');
      expect((await api('DELETE', '/admin/providers/nobody/lockouts')).status).toBe(404);
    });
  });

  describe('events paging', () => {
    it('walks every event with beforeId, newest first, without gaps or repeats, per filter too', async () => {
      const ids: number[] = [];
      for (let i = 0; i < 7; i++) ids.push(await insert('acme', `page-${i}`, i % 2 === 0 ? 'PG0' : 'PG1'));
      const walk = async (query: string): Promise<string[]> => {
        const out: string[] = [];
        let before = '';
        for (let n = 0; n < 20; n++) {
          const page = (await api('GET', `/admin/events?${query}&limit=3${before}`)).json as { events: Json[]; nextBeforeId: string | null };
          out.push(...page.events.map((e) => e.id as string));
          if (page.nextBeforeId === null) return out;
          before = `&beforeId=${page.nextBeforeId}`;
        }
        throw new Error('paging did not end');
      };
      const all = await walk('provider=acme');
      expect(all.slice(0, 7)).toEqual(ids.map(String).reverse());
      expect(await walk('provider=acme&dominio=PG1')).toEqual([ids[5], ids[3], ids[1]].map(String));
      const below = await api('GET', `/admin/events?provider=acme&beforeId=${ids[2]}&limit=2`);
      expect((below.json.events as Json[]).map((e) => e.id)).toEqual([String(ids[1]), String(ids[0])]);
      for (const bad of ['0', '-1', 'x', '18446744073709551616']) {
        expect((await api('GET', `/admin/events?beforeId=${bad}`)).json.field).toBe('beforeId');
      }
    });
  });

  describe('event stream (SSE)', () => {
    it('an event inserted over SOAP arrives, filters apply, and a client that leaves frees its subscription', async () => {
      const feed = t.app.backends.feed;
      if (!(feed instanceof LocalEventFeed)) throw new Error('expected the local event feed');
      const base = `${t.app.admin.url}/admin/events/stream`;
      const all = await openSse(base, t.app.adminToken);
      const onlyBravo = await openSse(`${base}?provider=bravo`, t.app.adminToken);
      const onlyPG9 = await openSse(`${base}?provider=acme&dominio=PG9`, t.app.adminToken);
      expect(all.status).toBe(200);
      // One feed subscription carries every stream.
      expect(t.app.admin.liveStreams).toBe(3);
      expect(feed.size).toBe(1);
      const id = await insert('acme', 'live-1', 'PG9');
      await insert('bravo', 'live-2');
      const got = await all.waitFor((e) => e.codigo === 'live-1');
      expect(got).toMatchObject({ id: String(id), systemUser: 'acme', dominio: 'PG9', operation: 'LoginYInsertarEvento' });
      await all.waitFor((e) => e.codigo === 'live-2');
      await onlyBravo.waitFor((e) => e.codigo === 'live-2');
      await onlyPG9.waitFor((e) => e.codigo === 'live-1');
      expect(onlyBravo.events.map((e) => e.codigo)).toEqual(['live-2']);
      expect(onlyPG9.events.map((e) => e.codigo)).toEqual(['live-1']);
      expect(all.comments).toContain('stream open');
      for (const s of [all, onlyBravo, onlyPG9]) s.close();
      for (let i = 0; i < 50 && feed.size > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(feed.size).toBe(0);
      expect(t.app.admin.liveStreams).toBe(0);
      // Bad filters are refused before any stream starts; the token is required.
      expect((await api('GET', '/admin/events/stream?provider=acme&x=1')).status).toBe(400);
      expect((await fetch(base)).status).toBe(401);
    });

    it('a stream open when the server stops ends, so the stop does not hang', async () => {
      const other = await TestApp.start();
      const stream = await openSse(`${other.app.admin.url}/admin/events/stream`, other.app.adminToken);
      await other.stop();
      await stream.ended;
      expect(stream.status).toBe(200);
    });
  });

  describe('deleting a provider', () => {
    it('needs ?confirm=, ends its sessions, cancels its commands, empties its trip, lifts its lockouts, keeps its events', async () => {
      const cookie = sessionCookie(await t.soap11('Login', xmlParams(credentials('gone'))));
      const eventId = await insert('gone', 'history');
      const open = (await api('POST', '/admin/providers/gone/commands', { cmd: 'A', unidad: 'U', equipo: 'E' })).json.numero as number;
      await api('POST', '/admin/providers/gone/commands', { cmd: 'B', unidad: 'U', equipo: 'E' });
      await api('PUT', '/admin/providers/gone/trip/vehicles/AA1', { nroSerie: 'S1' });
      for (let i = 0; i < 2; i++) await t.soap11('Login', xmlParams(credentials('gone', 'wrong!')));
      expect(((await api('GET', '/admin/lockouts')).json.lockouts as Json[]).some((l) => l.systemUser === 'gone')).toBe(true);

      expect((await api('DELETE', '/admin/providers/gone')).json).toMatchObject({ field: 'confirm' });
      expect((await api('DELETE', '/admin/providers/gone?confirm=acme')).status).toBe(400);
      expect((await api('GET', '/admin/providers/gone')).status).toBe(200);
      const deleted = await api('DELETE', '/admin/providers/gone?confirm=gone');
      expect(deleted).toEqual({ status: 200, json: { deleted: 'gone', sessionsEnded: 1, commandsCancelled: 2, tripVehiclesRemoved: 1 } });

      expect((await api('GET', '/admin/providers/gone')).status).toBe(404);
      expect((await t.soap11('InSession', '', undefined, cookie)).text).toContain('>false<');
      expect((await t.soap11('Login', xmlParams(credentials('gone')))).text).toContain('>false<');
      expect(((await api('GET', '/admin/lockouts')).json.lockouts as Json[]).some((l) => l.systemUser === 'gone')).toBe(false);
      const states = ((await api('GET', '/admin/commands?provider=gone')).json.commands as Json[]).map((c) => c.state);
      expect(states).toEqual(['cancelled', 'cancelled']);
      expect((await api('GET', '/admin/events?provider=gone')).json.events).toMatchObject([{ id: String(eventId), codigo: 'history' }]);
      expect((await api('DELETE', '/admin/providers/gone?confirm=gone')).status).toBe(404);

      // Created again under the same SystemUser: a fresh provider, no old session, trip or queue.
      await api('POST', '/admin/providers', { systemUser: 'gone', password: 'secret-2' });
      expect((await t.soap11('InSession', '', undefined, cookie)).text).toContain('>false<');
      expect((await api('GET', '/admin/providers/gone/trip/vehicles')).json.vehicles).toEqual([]);
      expect((await t.post('LoginYObtenerComando', credentials('gone', 'secret-2'))).text).not.toContain(`<NUMERO>${open}</NUMERO>`);
    });
  });

  describe('overview and poison messages', () => {
    it('reports the mode, readiness, arrivals of the last 15 minutes per 10 s, providers and lockouts', async () => {
      t.advance(20_000);
      await insert('acme', 'ov-1');
      await insert('acme', 'ov-2');
      const o = (await api('GET', '/admin/overview')).json;
      expect(o).toMatchObject({ mode: 'embedded', ready: true, workerLag: null, poisonMessages: null, lockouts: 0 });
      expect(o.backends).toEqual([{ name: 'sqlite', ok: true }]);
      const points = o.eventsPerSecond as { at: string; events: number }[];
      expect(points).toHaveLength(90);
      expect(Date.parse(points[89]!.at)).toBe(t.now - (t.now % 10_000));
      expect(points[89]!.events).toBeCloseTo(0.2);
      const acme = (o.providers as Json[]).find((p) => p.systemUser === 'acme');
      expect(acme?.events15m).toBeGreaterThanOrEqual(2);
      expect(acme?.lastEventAt).toBe(new Date(t.now).toISOString());
      expect((o.providers as Json[]).find((p) => p.systemUser === 'bravo')).toMatchObject({ events15m: 1 });
    });

    it('has no poison messages in the embedded mode', async () => {
      expect((await api('GET', '/admin/poison')).json).toEqual({ messages: [] });
      expect((await api('POST', '/admin/poison/0-1/redrive')).status).toBe(404);
      expect((await api('DELETE', '/admin/poison/0-1')).status).toBe(404);
    });
  });
});
