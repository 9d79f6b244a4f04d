/**
 * The scale-out mode end to end, on the real Redis, Kafka and ClickHouse: SOAP in, rows out;
 * state shared by two gateways; ids unique across them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../helpers/scale-out.js';
import { credentials, event, sessionCookie, xmlParams } from '../helpers/harness.js';

const idOf = (text: string): number => Number(/Result>(-?\d+)</.exec(text)?.[1] ?? NaN);

describe('scale-out mode', () => {
  let c: Cluster;
  beforeAll(async () => {
    c = await startCluster();
    await c.gw1.provider('acme', 'secret-1');
  }, 120_000);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  afterAll(() => c?.stop());

  it('runs on the scale-out backends', () => {
    expect(c.gw1.app.mode).toBe('scale-out');
    expect(c.gw2.app.mode).toBe('scale-out');
  });

  it('a SOAP insert answers id N; ClickHouse then has exactly one row N with the same fields', async () => {
    const r = await c.gw1.soap11('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event({ Codigo: 'e2e-1', Velocidad: '88.5' }) }));
    const id = idOf(r.text);
    expect(id).toBeGreaterThan(0);
    const rows = await c.waitForRows([id]);
    const row = rows.get(id)!;
    expect(row).toMatchObject({ system_user: 'acme', dominio: 'AB123CD', nro_serie: 'SN-1', codigo: 'e2e-1', operation: 'LoginYInsertarEvento' });
    expect(row.velocidad).toBe(88.5);
    expect(row.latitud).toBe(-34.6037221);
    expect(row.event_time_text).toBe('2026-11-22T08:59:30-03:00');
    const count = await c.backends(c.gw1).clickhouse!.query({
      query: `SELECT count() AS n FROM ${c.env.CLICKHOUSE_DATABASE}.events FINAL WHERE id = ${id}`,
      format: 'JSONEachRow',
    });
    expect(Number((await count.json<{ n: string }>())[0]!.n)).toBe(1);
    // The admin API of the other gateway reads it back from ClickHouse.
    const admin = await c.gw2.admin('GET', '/admin/events?provider=acme&limit=10');
    expect((admin.json as { events: { id: string }[] }).events.map((e) => e.id)).toContain(String(id));
  });

  it('the batch operation and LoginYInsertarEvento2 with sensors, those without a Clave included', async () => {
    const ev = (o: Record<string, string>) => `<pEvento>${xmlParams(event(o))}</pEvento>`;
    const batch = await c.gw2.soap11('LoginYInsertarEventos', `${xmlParams(credentials())}<Eventos>${ev({ Codigo: 'b1' })}${ev({ Codigo: 'b2', FechaHoraEvento: 'nope' })}${ev({ Codigo: 'b3' })}</Eventos>`);
    const codes = [...batch.text.matchAll(/<int>(-?\d+)<\/int>/g)].map((m) => Number(m[1]));
    expect(codes).toHaveLength(3);
    expect(codes[1]).toBe(-3);
    // Every reading as sent, those without a Clave too (docs/protocol.md §Events).
    const sensors = '<Sensores><pSensor><Clave>temp</Clave><Valor>21.5</Valor></pSensor><pSensor><Clave></Clave><Valor>x</Valor></pSensor><pSensor><Valor>y</Valor></pSensor></Sensores>';
    const withSensors = await c.gw1.soap12('LoginYInsertarEvento2', `${xmlParams({ ...credentials(), ...event({ Codigo: 's1' }), Valido: 'true' })}${sensors}`);
    const sid = idOf(withSensors.text);
    const rows = await c.waitForRows([codes[0]!, codes[2]!, sid]);
    expect(rows.get(codes[0]!)?.codigo).toBe('b1');
    expect(rows.get(codes[2]!)?.codigo).toBe('b3');
    expect(rows.get(sid)).toMatchObject({ sensor_keys: ['temp', '', ''], sensor_values: ['21.5', 'x', 'y'], valido: 1 });
  });

  it('limits and unstorable values: -3 for that event only, the others reach ClickHouse', async () => {
    const ev = (o: Record<string, string>) => `<pEvento>${xmlParams(event(o))}</pEvento>`;
    const batch = await c.gw1.soap11(
      'LoginYInsertarEventos',
      `${xmlParams(credentials())}<Eventos>${ev({ Codigo: 'lim-1' })}${ev({ Codigo: 'lim-2', Dominio: 'D'.repeat(33) })}${ev({ Codigo: 'lim-3', FechaHoraEvento: '0001-01-01T00:00:00+05:00' })}${ev({ Codigo: 'lim-4' })}</Eventos>`,
    );
    const codes = [...batch.text.matchAll(/<int>(-?\d+)<\/int>/g)].map((m) => Number(m[1]));
    expect(codes.map((code) => (code > 0 ? 'id' : code))).toEqual(['id', -3, -3, 'id']);
    const rows = await c.waitForRows([codes[0]!, codes[3]!]);
    expect([rows.get(codes[0]!)?.codigo, rows.get(codes[3]!)?.codigo]).toEqual(['lim-1', 'lim-4']);
    const status = await c.gw2.post('LoginYEstadoComando', { ...credentials(), NUMERO: '1', MSG: 'm'.repeat(5000) });
    expect(status.text).toContain('>false</boolean>');
  });

  it('a lockout is per SystemUser and client address, shared by the gateways through Redis', async () => {
    await c.gw1.provider('locky', 'secret-1');
    const from = (address: string) => ({ 'X-Forwarded-For': address, 'Content-Type': 'application/x-www-form-urlencoded' });
    const login = (gw: typeof c.gw1, password: string, address: string) =>
      gw.request('POST', '/service.asmx/Login', `SystemUser=locky&Password=${password}`, from(address));
    for (let i = 0; i < 10; i++) expect((await login(i % 2 === 0 ? c.gw1 : c.gw2, `bad-${i}`, '203.0.113.7')).text).toContain('>false<');
    // Locked for that address on both gateways, even with the right password ...
    expect((await login(c.gw2, 'secret-1', '203.0.113.7')).text).toContain('>false<');
    // ... but the provider's own servers elsewhere still get in.
    expect((await login(c.gw1, 'secret-1', '198.51.100.20')).text).toContain('>true<');
    const locks = await c.gw2.admin('GET', '/admin/lockouts');
    expect(locks.json).toMatchObject({ lockouts: [{ systemUser: 'locky', address: '203.0.113.7' }] });
  });

  it('a session made on one gateway works on the other', async () => {
    const cookie = sessionCookie(await c.gw1.soap11('Login', xmlParams(credentials())));
    expect((await c.gw2.soap11('InSession', '', undefined, cookie)).text).toContain('<InSessionResult>true</InSessionResult>');
    const id = idOf((await c.gw2.soap11('InsertarEvento', xmlParams({ ...event({ Codigo: 'sess' }), Rumbo: '10', Crudo: 'x' }), undefined, cookie)).text);
    expect(id).toBeGreaterThan(0);
    expect((await c.gw2.soap11('Logout', '', undefined, cookie)).text).toContain('>true<');
    expect((await c.gw1.soap11('InSession', '', undefined, cookie)).text).toContain('>false<');
  });

  it('a command queued through one admin API is fetched, updated and finished through the other gateway', async () => {
    const queued = (await c.gw1.admin('POST', '/admin/providers/acme/commands', { cmd: 'CC', unidad: 'AB123CD', equipo: '7' })).json as { numero: number };
    const got = await c.gw2.soap11('LoginYObtenerComando', xmlParams(credentials()));
    expect(got.text).toContain(`<NUMERO>${queued.numero}</NUMERO>`);
    const cookie = sessionCookie(await c.gw1.soap11('Login', xmlParams(credentials())));
    expect((await c.gw2.post('EstadoComando', { NUMERO: String(queued.numero), MSG: 'sent' }, cookie)).text).toContain('>true<');
    expect((await c.gw1.get('ComandoProcesado', { NUMERO: String(queued.numero), correcto: 'true' }, cookie)).text).toContain('>true<');
    const listed = (await c.gw2.admin('GET', '/admin/providers/acme/commands')).json as { commands: { numero: number; state: string }[] };
    expect(listed.commands.find((x) => x.numero === queued.numero)?.state).toBe('succeeded');
  });

  it('ids never collide across gateways', async () => {
    const sends = Array.from({ length: 200 }, (_, i) =>
      (i % 2 === 0 ? c.gw1 : c.gw2).soap11('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event({ Codigo: `par${i}` }) })),
    );
    const ids = (await Promise.all(sends)).map((r) => idOf(r.text));
    expect(ids.every((id) => id > 0)).toBe(true);
    expect(new Set(ids).size).toBe(200);
    const rows = await c.waitForRows(ids);
    expect(rows.size).toBe(200);
  });

  it('a resend through the other gateway returns the first id and stays one row', async () => {
    const params = xmlParams({ ...credentials(), ...event({ Codigo: 'resend', FechaHoraEvento: '2026-11-22T07:00:00Z' }) });
    const first = idOf((await c.gw1.soap11('LoginYInsertarEvento', params)).text);
    const again = idOf((await c.gw2.soap11('LoginYInsertarEvento', params)).text);
    expect(again).toBe(first);
    await c.waitForRows([first]);
    const n = await c.backends(c.gw1).clickhouse!.query({
      query: `SELECT count() AS n FROM ${c.env.CLICKHOUSE_DATABASE}.events FINAL WHERE codigo = 'resend'`,
      format: 'JSONEachRow',
    });
    expect(Number((await n.json<{ n: string }>())[0]!.n)).toBe(1);
  });

  it('metrics: Kafka sends and batch sizes on the gateway, batches and lag on the worker', async () => {
    const gateway = await c.gw1.app.metricsText();
    const count = (text: string, name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
    expect(count(gateway, 'gateway_kafka_send_seconds_count')).toBeGreaterThan(0);
    expect(count(gateway, 'gateway_event_publish_batch_size_count')).toBeGreaterThan(0);
    expect(count(gateway, 'gateway_event_publish_seconds_count')).toBeGreaterThan(0);
    const worker = await c.workerMetrics.text();
    expect(count(worker, 'worker_batch_rows_count')).toBeGreaterThan(0);
    expect(count(worker, 'worker_insert_duration_seconds_count')).toBeGreaterThan(0);
  });

  it('vehicles on a trip get their last report time from the worker', async () => {
    await c.gw2.admin('PUT', '/admin/providers/acme/trip/vehicles/TR1', { nroSerie: 'S-TR1' });
    const id = idOf((await c.gw1.soap11('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event({ Dominio: 'TR1', FechaHoraEvento: '2026-11-22T10:00:00Z' }) }))).text);
    await c.waitForRows([id]);
    let text = '';
    for (let i = 0; i < 50 && !text.includes('<FechaUltimoReporte>2026-11-22T10:00:00Z'); i++) {
      text = (await c.gw2.soap11('ConsultarVehiculosEnViaje', xmlParams(credentials()))).text;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(text).toContain('<Dominio>TR1</Dominio><NroSerie>S-TR1</NroSerie><FechaUltimoReporte>2026-11-22T10:00:00Z</FechaUltimoReporte>');
  });
});
