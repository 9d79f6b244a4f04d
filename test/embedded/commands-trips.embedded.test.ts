/** The command lifecycle (docs/protocol.md §Commands) and vehicles on a trip (§Vehicles on a trip), through the protocol. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, event, sessionCookie, TestApp, xmlParams } from '../helpers/harness.js';

describe('commands', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start();
    await t.provider('acme', 'secret-1');
    await t.provider('other', 'secret-1');
  });
  afterAll(() => t.stop());

  const queue = async (cmd: string, provider = 'acme') =>
    (await t.admin('POST', `/admin/providers/${provider}/commands`, { cmd, unidad: 'AB123CD', equipo: '42' })).json as { numero: number };
  const fetchNumero = async (): Promise<number | null> => {
    const r = await t.soap11('LoginYObtenerComando', xmlParams(credentials()));
    const m = /<NUMERO>(\d+)<\/NUMERO>/.exec(r.text);
    return m ? Number(m[1]) : null;
  };

  it('the oldest unfinished command, the same on every poll until finished, deliveries counted', async () => {
    const first = await queue('C1');
    const second = await queue('C2');
    expect(await fetchNumero()).toBe(first.numero);
    expect(await fetchNumero()).toBe(first.numero);

    const est = await t.soap11('LoginYEstadoComando', xmlParams({ ...credentials(), NUMERO: String(first.numero), MSG: 'sent to device' }));
    expect(est.text).toContain('<LoginYEstadoComandoResult>true</LoginYEstadoComandoResult>');
    expect(await fetchNumero()).toBe(first.numero);

    const done = await t.soap11('LoginYComandoProcesado', xmlParams({ ...credentials(), NUMERO: String(first.numero), correcto: 'true' }));
    expect(done.text).toContain('<LoginYComandoProcesadoResult>true</LoginYComandoProcesadoResult>');
    // A retried call with the same outcome is still true; a different outcome is false.
    expect((await t.soap11('LoginYComandoProcesado', xmlParams({ ...credentials(), NUMERO: String(first.numero), correcto: '1' }))).text).toContain('>true<');
    expect((await t.soap11('LoginYComandoProcesado', xmlParams({ ...credentials(), NUMERO: String(first.numero), correcto: 'false' }))).text).toContain('>false<');
    // Status on a finished command is refused.
    expect((await t.soap11('LoginYEstadoComando', xmlParams({ ...credentials(), NUMERO: String(first.numero), MSG: 'late' }))).text).toContain('>false<');

    expect(await fetchNumero()).toBe(second.numero);
    const listed = (await t.admin('GET', '/admin/providers/acme/commands')).json as {
      commands: { numero: number; state: string; deliveries: number; history: { kind: string; message: string }[] }[];
    };
    const c1 = listed.commands.find((c) => c.numero === first.numero)!;
    expect(c1.state).toBe('succeeded');
    expect(c1.deliveries).toBe(3);
    expect(c1.history.map((h) => h.kind)).toEqual(['queued', 'delivered', 'status', 'finished']);
    expect(c1.history.find((h) => h.kind === 'status')?.message).toBe('sent to device');
  });

  it('another provider cannot see or finish them', async () => {
    const mine = await queue('C3', 'other');
    expect((await t.soap11('LoginYComandoProcesado', xmlParams({ ...credentials(), NUMERO: String(mine.numero), correcto: 'true' }))).text).toContain('>false<');
    const r = await t.soap11('LoginYObtenerComando', xmlParams(credentials('other', 'secret-1')));
    expect(r.text).toContain(`<NUMERO>${mine.numero}</NUMERO>`);
  });

  it('session variants, failed outcome, and expiry after the TTL', async () => {
    const cookie = sessionCookie(await t.soap11('Login', xmlParams(credentials('other', 'secret-1'))));
    const got = await t.soap11('ObtenerComando', '', undefined, cookie);
    const numero = Number(/<NUMERO>(\d+)</.exec(got.text)?.[1]);
    expect((await t.post('EstadoComando', { NUMERO: String(numero), MSG: 'trying' }, cookie)).text).toContain('>true<');
    expect((await t.get('ComandoProcesado', { NUMERO: String(numero), correcto: 'false' }, cookie)).text).toContain('>true<');
    const list = (await t.admin('GET', '/admin/providers/other/commands')).json as { commands: { numero: number; state: string }[] };
    expect(list.commands.find((c) => c.numero === numero)?.state).toBe('failed');

    const stale = await queue('OLD', 'other');
    t.advance(24 * 3_600_000 + 1);
    const none = await t.soap11('ObtenerComando', '', undefined, sessionCookie(await t.soap11('Login', xmlParams(credentials('other', 'secret-1')))));
    expect(none.text).not.toContain(`<NUMERO>${stale.numero}</NUMERO>`);
  });
});

describe('vehicles on a trip', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start();
    await t.provider('acme', 'secret-1', { timeZone: 'America/Argentina/Buenos_Aires' });
  });
  afterAll(() => t.stop());

  it('registered vehicles with their last report time, in the provider zone; removal', async () => {
    expect((await t.admin('PUT', '/admin/providers/acme/trip/vehicles/BB222BB', { nroSerie: 'S2' })).status).toBeLessThan(300);
    expect((await t.admin('PUT', '/admin/providers/acme/trip/vehicles/AA111AA', { nroSerie: 'S1' })).status).toBeLessThan(300);
    for (const time of ['2026-11-22T10:00:00Z', '2026-11-22T11:30:00.5Z', '2026-11-22T09:00:00Z']) {
      const r = await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event({ Dominio: 'AA111AA', FechaHoraEvento: time, Codigo: time }) }));
      expect(r.text).toMatch(/Result>[1-9]\d*</);
    }
    const r = await t.soap11('ConsultarVehiculosEnViaje', xmlParams(credentials()));
    // Latest event time (not the latest received), shown at -03:00; registration at T0 local.
    expect(r.text).toContain(
      '<Vehiculo><Dominio>AA111AA</Dominio><NroSerie>S1</NroSerie><FechaUltimoReporte>2026-11-22T08:30:00.5-03:00</FechaUltimoReporte><FechaRegistracion>2026-11-22T09:00:00-03:00</FechaRegistracion></Vehiculo><Vehiculo><Dominio>BB222BB</Dominio><NroSerie>S2</NroSerie><FechaUltimoReporte xsi:nil="true" />',
    );
    expect((await t.admin('DELETE', '/admin/providers/acme/trip/vehicles/AA111AA')).status).toBe(204);
    const after = await t.soap11('ConsultarVehiculosEnViaje', xmlParams(credentials()));
    expect(after.text).not.toContain('AA111AA');
    expect(after.text).toContain('BB222BB');
  });

  it('wrong credentials are a Client fault', async () => {
    const r = await t.soap11('ConsultarVehiculosEnViaje', xmlParams(credentials('acme', 'x')));
    expect(r.status).toBe(500);
    expect(r.text).toContain('<faultcode>soap:Client</faultcode>');
  });
});
