/** The InsertarEvento family: ids, negative codes (docs/protocol.md §Result codes), dedupe, stored fields. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbeddedBackends } from '../../shared/backends/embedded/index.js';
import { foldId } from '../../gateway/service/ingest.js';
import { credentials, event, TestApp, xmlParams } from '../helpers/harness.js';
import { faultstring } from '../helpers/client-errors.js';

const codeOf = (text: string): number => Number(/Result>(-?\d+)</.exec(text)?.[1] ?? NaN);

describe('event codes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start({ RATE_LIMIT_EVENTS_PER_SECOND: '3' });
    await t.provider('acme', 'secret-1');
    await t.provider('strict', 'secret-1', { requireRegisteredVehicles: true });
  });
  afterAll(() => t.stop());

  const insert = async (overrides: Record<string, string>, user = 'acme') => {
    t.advance(1000); // keep clear of the rate limit unless a test wants it
    return codeOf((await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials(user), ...event(overrides) }))).text);
  };

  it('ids are positive and increasing', async () => {
    const a = await insert({ Codigo: 'a' });
    const b = await insert({ Codigo: 'b' });
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(a);
  });

  it.each([
    ['missing FechaHoraEvento', { FechaHoraEvento: '' }],
    ['unparseable date', { FechaHoraEvento: '22/11/2026 10:00' }],
    ['impossible date', { FechaHoraEvento: '2026-02-30T10:00:00Z' }],
    ['unparseable number', { Latitud: 'abc' }],
    ['non-finite number', { Velocidad: 'INF' }],
    ['NaN', { Altitud: 'NaN' }],
    ['Dominio too long', { Dominio: 'X'.repeat(33) }],
    ['empty Dominio', { Dominio: '' }],
    ['Codigo too long', { Codigo: 'C'.repeat(33) }],
  ])('-3 for %s', async (_name, overrides) => {
    expect(await insert(overrides)).toBe(-3);
  });

  it('-3 when an element is missing altogether (SOAP default: no date)', async () => {
    const params = xmlParams({ ...credentials(), ...event() }).replace(/<FechaHoraRecepcion>.*<\/FechaHoraRecepcion>/, '');
    t.advance(1000);
    expect(codeOf((await t.soap11('LoginYInsertarEvento', params)).text)).toBe(-3);
  });

  it('-1 for wrong credentials, unknown users and missing credentials', async () => {
    expect(await insert({}, 'nobody')).toBe(-1);
    expect(codeOf((await t.soap11('LoginYInsertarEvento', xmlParams(event()))).text)).toBe(-1);
  });

  it('-4 only for providers that require registered vehicles', async () => {
    expect(await insert({ Dominio: 'NOTREG' }, 'strict')).toBe(-4);
    await t.app.backends.trips.addVehicle('strict', 'REG1', 'S', t.now);
    expect(await insert({ Dominio: 'REG1' }, 'strict')).toBeGreaterThan(0);
    expect(await insert({ Dominio: 'NOTREG', Codigo: 'free' })).toBeGreaterThan(0);
  });

  it('-6 past the per-provider rate, then accepted again a second later', async () => {
    t.advance(5000);
    const burst = async (i: number) =>
      codeOf((await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event({ Codigo: `burst${i}` }) }))).text);
    const codes = [await burst(1), await burst(2), await burst(3), await burst(4)];
    expect(codes.slice(0, 3).every((c) => c > 0)).toBe(true);
    expect(codes[3]).toBe(-6);
    t.advance(1000);
    expect(await burst(5)).toBeGreaterThan(0);
  });

  it('out-of-range coordinates are stored, flagged as an invalid position', async () => {
    const id = await insert({ Latitud: '-134.6', Longitud: '-58.38', Codigo: 'swapped' });
    expect(id).toBeGreaterThan(0);
    const stored = (await t.app.backends.events.recent({ provider: 'acme', limit: 1 }))[0]!;
    expect(stored.codigo).toBe('swapped');
    expect(stored.validPosition).toBe(false);
    const good = await insert({ Codigo: 'fine' });
    expect(good).toBeGreaterThan(id);
    expect((await t.app.backends.events.recent({ provider: 'acme', limit: 1 }))[0]!.validPosition).toBe(true);
  });

  it('a resent identical event returns the first id and is stored once', async () => {
    const first = await insert({ Codigo: 'dup', FechaHoraEvento: '2026-11-22T10:00:00Z' });
    const again = await insert({ Codigo: 'dup', FechaHoraEvento: '2026-11-22T07:00:00-03:00' }); // same instant
    expect(again).toBe(first);
    const moved = await insert({ Codigo: 'dup', FechaHoraEvento: '2026-11-22T10:00:00Z', Latitud: '-34.7' });
    expect(moved).not.toBe(first);
    const rows = (await t.app.backends.events.recent({ provider: 'acme', limit: 1000 })).filter((e) => e.codigo === 'dup');
    expect(rows).toHaveLength(2);
  });

  it('LoginYInsertarEvento2 stores Valido and the sensors', async () => {
    t.advance(1000);
    const sensors = '<Sensores><pSensor><Clave>temp</Clave><Valor>21.5</Valor></pSensor><pSensor><Clave>door</Clave><Valor>open</Valor></pSensor></Sensores>';
    const r = await t.soap12('LoginYInsertarEvento2', `${xmlParams({ ...credentials(), ...event({ Codigo: 'sensors' }), Valido: 'false' })}${sensors}`);
    expect(codeOf(r.text)).toBeGreaterThan(0);
    const stored = (await t.app.backends.events.recent({ provider: 'acme', limit: 1 }))[0]!;
    expect(stored.valido).toBe(false);
    expect(stored.validPosition).toBe(false);
    expect(stored.sensors).toEqual([
      { clave: 'temp', valor: '21.5' },
      { clave: 'door', valor: 'open' },
    ]);
    expect(stored.operation).toBe('LoginYInsertarEvento2');
  });

  it('an unparseable boolean is a Client fault (not a code)', async () => {
    const r = await t.soap11('LoginYInsertarEvento2', xmlParams({ ...credentials(), ...event(), Valido: 'maybe' }));
    expect(r.status).toBe(500);
    expect(r.text).toContain(faultstring('unreadableValue', { text: 'maybe', name: 'Valido' }));
  });
});

describe('-5 when the event store cannot commit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start({}, async (config) => {
      const real = await openEmbeddedBackends({ dataDir: config.embedded.dataDir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 60_000 });
      return {
        ...real,
        eventLog: { append: async (events) => events.map(() => ({ ok: false as const, reason: 'unavailable' as const })), close: async () => {} },
      };
    });
    await t.provider('acme', 'secret-1');
  });
  afterAll(() => t.stop());

  it('answers -5 for each event and keeps serving', async () => {
    const r = await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event() }));
    expect(codeOf(r.text)).toBe(-5);
    const batch = await t.soap11('LoginYInsertarEventos', `${xmlParams(credentials())}<Eventos><pEvento>${xmlParams(event())}</pEvento><pEvento>${xmlParams(event({ FechaHoraEvento: 'x' }))}</pEvento></Eventos>`);
    expect(batch.text).toContain('<LoginYInsertarEventosResult><int>-5</int><int>-3</int></LoginYInsertarEventosResult>');
    expect((await t.soap11('Login', xmlParams(credentials()))).text).toContain('>true<');
  });
});

describe('id folding', () => {
  it('folds 64-bit ids into 1..2147483647, never 0', () => {
    expect(foldId(1n)).toBe(1);
    expect(foldId(2147483647n)).toBe(2147483647);
    expect(foldId(2147483648n)).toBe(1);
    expect(foldId(2n * 2147483647n)).toBe(2147483647);
    expect(foldId(2n * 2147483647n + 1n)).toBe(1);
    for (const id of [1n, 2147483647n, 2147483648n, 4294967294n, 9007199254740993n]) {
      const f = foldId(id);
      expect(f).toBeGreaterThanOrEqual(1);
      expect(f).toBeLessThanOrEqual(2147483647);
    }
  });
});
