/** How real clients actually call (docs/protocol.md §Routing, §Reading requests): all of these must be understood. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, event, NS, SOAP11, SOAP12, TestApp, xmlParams } from '../helpers/harness.js';
import { faultstring } from '../helpers/client-errors.js';

const loginParams = xmlParams(credentials());
const ok11 = `<LoginResponse xmlns="${NS}"><LoginResult>true</LoginResult></LoginResponse>`;

describe('wire variations', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start();
    await t.provider('acme', 'secret-1');
    await t.provider('baires', 'secret-1', { timeZone: 'America/Argentina/Buenos_Aires' });
  });
  afterAll(() => t.stop());

  const raw = (body: string | Buffer, headers: Record<string, string>, path = '/service.asmx') =>
    t.request('POST', path, body, headers);
  const latest = async (provider = 'acme') => (await t.app.backends.events.recent({ provider, limit: 1 }))[0]!;

  it('no SOAPAction: routed by the Body element, answered in SOAP 1.1', async () => {
    const r = await t.soap11('Login', loginParams, {});
    expect(r.status).toBe(200);
    expect(r.contentType).toBe('text/xml; charset=utf-8');
    expect(r.text).toContain(ok11);
  });

  it('unquoted and empty SOAPAction', async () => {
    expect((await t.soap11('Login', loginParams, { SOAPAction: `${NS}Login` })).text).toContain(ok11);
    expect((await t.soap11('Login', loginParams, { SOAPAction: '""' })).text).toContain(ok11);
  });

  it('SOAPAction that disagrees with the Body element is a Client fault', async () => {
    const r = await t.soap11('Login', loginParams, { SOAPAction: `"${NS}Logout"` });
    expect(r.status).toBe(500);
    expect(r.text).toContain(`<faultcode>soap:Client</faultcode>${faultstring('soapActionNotRecognized', { action: `${NS}Logout` })}`);
  });

  it('SOAP 1.2 action= parameter of the Content-Type', async () => {
    const body = `<s:Envelope xmlns:s="${SOAP12}"><s:Body><Login xmlns="${NS}">${loginParams}</Login></s:Body></s:Envelope>`;
    const good = await raw(body, { 'Content-Type': `application/soap+xml; charset=utf-8; action="${NS}Login"` });
    expect(good.status).toBe(200);
    expect(good.text).toContain('<LoginResult>true</LoginResult>');
    const bad = await raw(body, { 'Content-Type': `application/soap+xml; charset=utf-8; action="${NS}InSession"` });
    expect(bad.status).toBe(500);
    expect(bad.text).toContain('<soap:Value>soap:Sender</soap:Value>');
  });

  it.each([
    ['SOAP-ENV', SOAP11],
    ['soapenv', SOAP11],
    ['S', SOAP12],
    ['ns0', SOAP11],
  ])('envelope prefix %s', async (prefix, ns) => {
    const body = `<${prefix}:Envelope xmlns:${prefix}="${ns}" xmlns:tns="${NS}"><${prefix}:Header><tns:Trace>x</tns:Trace></${prefix}:Header><${prefix}:Body><tns:Login><tns:SystemUser>acme</tns:SystemUser><tns:Password>secret-1</tns:Password></tns:Login></${prefix}:Body></${prefix}:Envelope>`;
    const r = await raw(body, { 'Content-Type': ns === SOAP12 ? 'application/soap+xml' : 'text/xml' });
    expect(r.status).toBe(200);
    expect(r.contentType).toBe(ns === SOAP12 ? 'application/soap+xml; charset=utf-8' : 'text/xml; charset=utf-8');
    expect(r.text).toContain('<LoginResult>true</LoginResult>');
  });

  it('two prefixes bound to one namespace, no XML declaration, single quotes, tabs and newlines', async () => {
    const body = `<a:Envelope xmlns:a='${SOAP11}' xmlns:b='${SOAP11}'>\n\t<b:Body>\n\t\t<Login xmlns='${NS}'>\n\t\t\t<Password>secret-1</Password>\n\t\t\t<SystemUser>acme</SystemUser>\n\t\t</Login>\n\t</b:Body>\n</a:Envelope>`;
    const r = await raw(body, { 'Content-Type': 'text/xml' });
    expect(r.text).toContain('<LoginResult>true</LoginResult>');
  });

  it('parameters out of order, unknown elements ignored, missing ones defaulted', async () => {
    const body = `<Password>secret-1</Password><Extra>1</Extra><SystemUser>acme</SystemUser>`;
    expect((await t.soap11('Login', body)).text).toContain('<LoginResult>true</LoginResult>');
    // A missing Password is null: the business rule answers false, not a fault.
    const missing = await t.soap11('Login', '<SystemUser>acme</SystemUser>');
    expect(missing.status).toBe(200);
    expect(missing.text).toContain('<LoginResult>false</LoginResult>');
  });

  it('integers for doubles, application/xml content type', async () => {
    const r = await raw(
      `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><LoginYInsertarEvento xmlns="${NS}">${xmlParams({ ...credentials(), ...event({ Latitud: '-34', Longitud: '-58', Altitud: '0', Velocidad: '60' }) })}</LoginYInsertarEvento></soap:Body></soap:Envelope>`,
      { 'Content-Type': 'application/xml' },
    );
    expect(r.status).toBe(200);
    const id = Number(/<LoginYInsertarEventoResult>(\d+)</.exec(r.text)?.[1]);
    expect(id).toBeGreaterThan(0);
    const stored = await latest();
    expect(stored.latitud).toBe(-34);
    expect(stored.velocidad).toBe(60);
  });

  it.each([
    ['2026-11-22T12:00:00Z', Date.UTC(2026, 10, 22, 12, 0, 0), 0],
    ['2026-11-22T09:00:00-03:00', Date.UTC(2026, 10, 22, 12, 0, 0), 0],
    ['2026-11-22T12:00:00.123', Date.UTC(2026, 10, 22, 12, 0, 0, 123), 0],
    ['2026-11-22T12:00:00.1234567+00:00', Date.UTC(2026, 10, 22, 12, 0, 0, 123), 4567],
    ['2026-11-22 12:00:00', Date.UTC(2026, 10, 22, 12, 0, 0), 0],
  ])('dateTime %s', async (text, epochMs, subMsTicks) => {
    const r = await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event({ FechaHoraEvento: text, Codigo: `dt${epochMs}.${subMsTicks}.${text.length}` }) }));
    expect(r.text).toMatch(/<LoginYInsertarEventoResult>[1-9]\d*</);
    const stored = await latest();
    expect(stored.eventTimeText).toBe(text);
    expect(stored.eventTime).toEqual({ epochMs, subMsTicks });
  });

  it('a dateTime without offset is local time of the provider zone', async () => {
    const r = await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials('baires'), ...event({ FechaHoraEvento: '2026-11-22T09:00:00' }) }));
    expect(r.text).toMatch(/<LoginYInsertarEventoResult>[1-9]\d*</);
    expect((await latest('baires')).eventTime.epochMs).toBe(Date.UTC(2026, 10, 22, 12, 0, 0));
  });

  it('POST to ?wsdl is a SOAP call; the path is case-insensitive', async () => {
    const headers = { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NS}Login"` };
    const body = `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><Login xmlns="${NS}">${loginParams}</Login></soap:Body></soap:Envelope>`;
    expect((await raw(body, headers, '/service.asmx?wsdl')).text).toContain('<LoginResult>true</LoginResult>');
    expect((await raw(body, headers, '/SERVICE.ASMX')).text).toContain('<LoginResult>true</LoginResult>');
    expect((await t.get('Login', credentials())).status).toBe(200);
    const upperGet = await t.request('GET', '/Service.Asmx/Login?SystemUser=acme&Password=secret-1');
    expect(upperGet.text).toContain('>true</boolean>');
  });

  it('a body in ISO-8859-1, declared in the Content-Type or in the XML declaration', async () => {
    const xml = (decl: string) =>
      `${decl}<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><LoginYInsertarEvento xmlns="${NS}">${xmlParams({ ...credentials(), ...event({ Codigo: 'Señal', Dominio: 'ÑANDÚ1' }) })}</LoginYInsertarEvento></soap:Body></soap:Envelope>`;
    const viaHeader = await raw(Buffer.from(xml(''), 'latin1'), { 'Content-Type': 'text/xml; charset=ISO-8859-1' });
    expect(viaHeader.text).toMatch(/<LoginYInsertarEventoResult>[1-9]\d*</);
    let stored = await latest();
    expect(stored.codigo).toBe('Señal');
    expect(stored.dominio).toBe('ÑANDÚ1');
    const viaDecl = await raw(Buffer.from(xml('<?xml version="1.0" encoding="ISO-8859-1"?>'), 'latin1'), { 'Content-Type': 'text/xml' });
    expect(viaDecl.text).toMatch(/<LoginYInsertarEventoResult>[1-9]\d*</);
    stored = await latest();
    expect(stored.codigo).toBe('Señal');
  });

  it('a UTF-8 BOM', async () => {
    const body = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from(`<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><Login xmlns="${NS}">${loginParams}</Login></soap:Body></soap:Envelope>`),
    ]);
    const r = await raw(body, { 'Content-Type': 'text/xml; charset=utf-8' });
    expect(r.status).toBe(200);
    expect(r.text).toContain('<LoginResult>true</LoginResult>');
  });

  it('a form POST with an extra Rumbo and no NroSerie keeps Rumbo with the event', async () => {
    const { NroSerie: _omitted, ...withoutSerie } = event({ Codigo: 'form-rumbo' });
    const form = { ...credentials(), ...withoutSerie, Rumbo: '271.5' };
    const r = await t.post('LoginYInsertarEvento', form);
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/<int xmlns="http:\/\/tempuri.org\/">[1-9]\d*<\/int>/);
    const stored = await latest();
    expect(stored.codigo).toBe('form-rumbo');
    expect(stored.rumbo).toBe(271.5);
    expect(stored.nroSerie).toBe('');
  });

  it('an unsupported Content-Type is 415 with an empty body', async () => {
    const r = await raw('<x/>', { 'Content-Type': 'application/json' });
    expect(r.status).toBe(415);
    expect(r.text).toBe('');
  });

  it('an unknown Body element without SOAPAction is a Client fault', async () => {
    const r = await t.soap11('Frobnicate', '', {});
    expect(r.status).toBe(500);
    expect(r.text).toContain(faultstring('noAction'));
  });

  it('an Envelope in an unknown namespace is a VersionMismatch fault', async () => {
    const r = await raw(`<e:Envelope xmlns:e="urn:nope"><e:Body/></e:Envelope>`, { 'Content-Type': 'text/xml' });
    expect(r.status).toBe(500);
    expect(r.text).toContain('<faultcode>soap:VersionMismatch</faultcode>');
  });
});
