import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSITIONS_SCAN_MAX, READ_PAGE } from '../../gateway/admin/routes/map.js';
import { ConfigError, loadConfig } from '../../shared/config/index.js';
import { credentials, event, TestApp, xmlParams } from '../helpers/harness.js';

/** The map's routes: latest position per vehicle, a vehicle's track for a time range, their bounds and refusals. */
type Json = Record<string, unknown>;
interface EventJson {
  id: string;
  dominio: string;
  codigo: string;
  latitud: number;
  longitud: number;
  receivedAt: string;
}

const idOf = (text: string): string => /Result>(-?\d+)</.exec(text)?.[1] ?? 'none';

describe('map routes (embedded)', () => {
  let t: TestApp;
  const api = async (path: string) => {
    const r = await t.admin('GET', path);
    return { status: r.status, json: r.json as Json };
  };
  let seq = 0;
  /** One event over SOAP, received at the test clock's now; a distinct event time each, so none is a duplicate. */
  const insert = async (dominio: string, latitud: number, longitud: number, user = 'acme'): Promise<string> => {
    seq += 1;
    const fields = event({ Dominio: dominio, Codigo: String(seq), Latitud: String(latitud), Longitud: String(longitud), FechaHoraEvento: new Date(Date.UTC(2026, 10, 1) + seq * 1000).toISOString() });
    return idOf((await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials(user), ...fields }))).text);
  };

  beforeAll(async () => {
    t = await TestApp.start();
    for (const u of ['acme', 'empty', 'busy']) await t.provider(u, 'secret-1');
  });
  afterAll(() => t.stop());

  it('positions: the latest event of each vehicle, newest first, with its coordinates', async () => {
    await insert('AA111AA', -34.6, -58.4);
    t.advance(1000);
    await insert('BB222BB', -34.7, -58.5);
    t.advance(1000);
    const latestA = await insert('AA111AA', -34.61, -58.41);
    const r = await api('/admin/providers/acme/positions');
    expect(r.status).toBe(200);
    const positions = r.json.positions as EventJson[];
    expect(positions.map((p) => [p.dominio, p.latitud, p.longitud])).toEqual([
      ['AA111AA', -34.61, -58.41],
      ['BB222BB', -34.7, -58.5],
    ]);
    expect(positions[0]?.id).toBe(latestA);
    expect(r.json).toMatchObject({ eventsRead: 3, complete: true });
  });

  it('positions: limit caps the vehicles; an empty provider has none; an unknown one is 404', async () => {
    const one = await api('/admin/providers/acme/positions?limit=1');
    expect((one.json.positions as EventJson[]).map((p) => p.dominio)).toEqual(['AA111AA']);
    expect(one.json.complete).toBe(false);
    expect(await api('/admin/providers/empty/positions')).toMatchObject({ status: 200, json: { positions: [], eventsRead: 0, complete: true } });
    expect((await api('/admin/providers/nobody/positions')).status).toBe(404);
  });

  it('positions: bad input is 400 naming the field', async () => {
    for (const q of ['limit=0', 'limit=2001', 'limit=abc', 'limit=-1', 'limit=1.5', 'other=1']) {
      const r = await api(`/admin/providers/acme/positions?${q}`);
      expect(r.status, q).toBe(400);
    }
    expect((await api('/admin/providers/acme/positions?limit=0')).json.field).toBe('limit');
  });

  it(`positions: reads at most ${POSITIONS_SCAN_MAX} events however many the provider has, and says so`, async () => {
    // One chatty vehicle fills the scan window; a quiet one before it is out of reach.
    await insert('QUIET01', 1, 1, 'busy');
    for (let i = 0; i < POSITIONS_SCAN_MAX + READ_PAGE; i += 500) {
      const batch = [];
      for (let j = 0; j < 500; j++) batch.push(insert('CHATTY1', 2 + (i + j) / 1e5, 2, 'busy'));
      await Promise.all(batch);
    }
    const r = await api('/admin/providers/busy/positions');
    expect(r.json).toMatchObject({ eventsRead: POSITIONS_SCAN_MAX, complete: false });
    expect((r.json.positions as EventJson[]).map((p) => p.dominio)).toEqual(['CHATTY1']);
  }, 120_000);

  it('track: one vehicle, oldest first, within [from, to] by reception time; limit keeps the newest', async () => {
    t.advance(60_000);
    const start = t.now;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(await insert('TRK001', -34 - i / 100, -58));
      await insert('OTHER1', 10, 10);
      t.advance(10_000);
    }
    const iso = (ms: number): string => new Date(ms).toISOString();
    const all = await api(`/admin/providers/acme/track/TRK001?from=${iso(start)}`);
    expect(all.status).toBe(200);
    expect((all.json.events as EventJson[]).map((e) => e.id)).toEqual(ids);
    expect(all.json.complete).toBe(true);
    // The 2nd to the 4th, by reception time (10 s apart).
    const middle = await api(`/admin/providers/acme/track/TRK001?from=${iso(start + 10_000)}&to=${iso(start + 30_000)}`);
    expect((middle.json.events as EventJson[]).map((e) => e.id)).toEqual(ids.slice(1, 4));
    const newest = await api(`/admin/providers/acme/track/TRK001?from=${iso(start)}&limit=2`);
    expect((newest.json.events as EventJson[]).map((e) => e.id)).toEqual(ids.slice(3));
    expect(newest.json.complete).toBe(false);
    // No range: the newest, bounded by the default limit.
    expect(((await api('/admin/providers/acme/track/TRK001')).json.events as EventJson[]).map((e) => e.id)).toEqual(ids);
    expect(await api('/admin/providers/acme/track/NOSUCH1')).toMatchObject({ status: 200, json: { events: [], complete: true } });
    expect(await api('/admin/providers/empty/track/TRK001')).toMatchObject({ status: 200, json: { events: [], complete: true } });
    expect((await api('/admin/providers/nobody/track/TRK001')).status).toBe(404);
  });

  it('track: bad input is 400 naming the field', async () => {
    const cases: [string, string][] = [
      ['from=yesterday', 'from'],
      ['from=2026-11-22T12:00:00', 'from'],
      ['to=2026-13-40T00:00:00Z', 'to'],
      ['from=2026-11-22T12:00:00Z&to=2026-11-22T11:00:00Z', 'from'],
      ['limit=0', 'limit'],
      ['limit=5001', 'limit'],
      ['limit=x', 'limit'],
    ];
    for (const [q, field] of cases) {
      const r = await api(`/admin/providers/acme/track/TRK001?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.json.field, q).toBe(field);
    }
    expect((await api('/admin/providers/acme/track/TRK001?since=x')).status).toBe(400);
    expect((await api(`/admin/providers/acme/track/${'X'.repeat(300)}`)).status).toBe(400);
  });

  it('the overview tells the console where map tiles come from', async () => {
    expect((await api('/admin/overview')).json.map).toEqual({ tileUrl: 'https://tile.openstreetmap.org/{z}/{x}/{y}.png', attribution: '© OpenStreetMap contributors' });
  });

  it('CONSOLE_MAP_TILE_URL: an http(s) template with {z}, {x}, {y} and a plain host, else the gateway does not start', () => {
    expect(loadConfig({ CONSOLE_MAP_TILE_URL: 'http://tiles.internal:8080/osm/{z}/{x}/{y}.png' }).admin.mapTileUrl).toBe('http://tiles.internal:8080/osm/{z}/{x}/{y}.png');
    for (const bad of ['tiles/{z}/{x}/{y}.png', 'ftp://h/{z}/{x}/{y}.png', 'https://h/{z}/{x}.png', 'https://{s}.tile.example/{z}/{x}/{y}.png', 'javascript:{z}{x}{y}']) {
      expect(() => loadConfig({ CONSOLE_MAP_TILE_URL: bad }), bad).toThrow(ConfigError);
    }
  });
});
