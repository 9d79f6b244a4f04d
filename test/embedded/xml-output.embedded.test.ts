/**
 * Every response is well-formed XML (docs/protocol.md §Writing responses): characters XML 1.0
 * forbids never reach an answer, whatever their source, and the admin API refuses them at the door.
 */
import { SaxesParser } from 'saxes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, TestApp, xmlParams } from '../helpers/harness.js';

function wellFormed(xml: string): void {
  const parser = new SaxesParser();
  let error: Error | null = null;
  parser.on('error', (err) => {
    error ??= err;
  });
  parser.write(xml).close();
  expect(error).toBeNull();
}

let t: TestApp;
beforeAll(async () => {
  t = await TestApp.start();
  await t.provider('acme', 'secret-1');
});
afterAll(() => t.stop());

describe('characters XML 1.0 cannot carry', () => {
  it('the admin API refuses them in command, trip and provider fields, naming the field', async () => {
    const cases: [string, string, Record<string, unknown>, string][] = [
      ['POST', '/admin/providers/acme/commands', { cmd: 'C\u0001C', unidad: 'AB123CD', equipo: '1' }, 'cmd'],
      ['POST', '/admin/providers/acme/commands', { cmd: 'CC', unidad: 'U\u0000', equipo: '1' }, 'unidad'],
      ['POST', '/admin/providers/acme/commands', { cmd: 'CC', unidad: 'AB', equipo: '\ud800' }, 'equipo'],
      ['PUT', '/admin/providers/acme/trip/vehicles/AB123CD', { nroSerie: 'SN\u001b1' }, 'nroSerie'],
      ['PUT', `/admin/providers/acme/trip/vehicles/${encodeURIComponent('AB\u00071')}`, { nroSerie: 'SN-1' }, 'dominio'],
      ['POST', '/admin/providers', { systemUser: 'bad\u0002user', password: 'secret-1' }, 'systemUser'],
      ['POST', '/admin/providers', { systemUser: 'gooduser', password: 'secret\u0000-1' }, 'password'],
    ];
    for (const [method, path, body, field] of cases) {
      const r = await t.admin(method, path, body);
      expect(r.status, `${method} ${path}`).toBe(400);
      expect((r.json as { field: string }).field).toBe(field);
    }
    expect((await t.admin('GET', '/admin/providers/acme/commands')).json).toEqual({ commands: [], nextBeforeNumero: null });
  });

  it('a stored value holding them is answered without them, in SOAP and in HTTP', async () => {
    // Written past the admin API, as an older build or a hand-edited database could have.
    await t.app.backends.commands.enqueue({ systemUser: 'acme', cmd: 'C\u0001C\uffff', unidad: 'U\u0000', equipo: 'E\ufffe', now: t.now, expiresAt: t.now + 3_600_000 });
    await t.app.backends.trips.addVehicle('acme', 'AB\u00081', 'SN\u001f', t.now);
    const soap = await t.soap11('LoginYObtenerComando', xmlParams(credentials()));
    expect(soap.status).toBe(200);
    wellFormed(soap.text);
    expect(soap.text).toContain('<CMD>CC</CMD><UNIDAD>U</UNIDAD><EQUIPO>E</EQUIPO>');
    const http = await t.get('LoginYObtenerComando', credentials());
    wellFormed(http.text);
    expect(http.text).toContain('<CMD>CC</CMD>');
    const vehicles = await t.post('ConsultarVehiculosEnViaje', credentials());
    wellFormed(vehicles.text);
    expect(vehicles.text).toContain('<Dominio>AB1</Dominio>');
  });

  it('a fault quoting what the client sent stays well-formed', async () => {
    // %01 is URL-decoded into U+0001 before the SOAPAction is quoted back.
    const r = await t.soap11('Login', xmlParams(credentials()), { SOAPAction: '"http://tempuri.org/Lo%01gin"' });
    expect(r.text).toContain('SOAPAction: http://tempuri.org/Login.');
    expect(r.status).toBe(500);
    wellFormed(r.text);
  });
});
