/**
 * Byte-exact responses for every result type in every binding (docs/protocol.md §Writing responses). Clients parse these
 * with string search and regexes, so the expected bodies are written out in full.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backends } from '../../shared/backends/types.js';
import { openEmbeddedBackends } from '../../shared/backends/embedded/index.js';
import {
  credentials,
  DECL,
  event,
  NS,
  sessionCookie,
  soapResponse,
  T0,
  TestApp,
  XSD,
  XSI,
  xmlParams,
} from '../helpers/harness.js';

const CRLF = '\r\n';
const TEXT_XML = 'text/xml; charset=utf-8';
const SOAP12_XML = 'application/soap+xml; charset=utf-8';

describe('golden responses', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start();
    await t.provider('acme', 'secret-1');
  });
  afterAll(() => t.stop());

  describe('boolean', () => {
    it('SOAP 1.1 Login true, with the session cookie', async () => {
      const r = await t.soap11('Login', xmlParams(credentials()));
      expect(r.status).toBe(200);
      expect(r.contentType).toBe(TEXT_XML);
      expect(r.text).toBe(soapResponse('1.1', `<LoginResponse xmlns="${NS}"><LoginResult>true</LoginResult></LoginResponse>`));
      expect(r.setCookie).toMatch(/^ASP\.NET_SessionId=[a-z0-5]{24}; path=\/; HttpOnly$/);
    });

    it('SOAP 1.2 Login false, no cookie', async () => {
      const r = await t.soap12('Login', xmlParams(credentials('acme', 'wrong')));
      expect(r.status).toBe(200);
      expect(r.contentType).toBe(SOAP12_XML);
      expect(r.text).toBe(soapResponse('1.2', `<LoginResponse xmlns="${NS}"><LoginResult>false</LoginResult></LoginResponse>`));
      expect(r.setCookie).toBeNull();
    });

    it('HTTP GET and POST Login', async () => {
      const get = await t.get('Login', credentials());
      expect(get.status).toBe(200);
      expect(get.contentType).toBe(TEXT_XML);
      expect(get.text).toBe(`${DECL}${CRLF}<boolean xmlns="${NS}">true</boolean>`);
      const post = await t.post('Login', credentials('acme', 'nope'));
      expect(post.text).toBe(`${DECL}${CRLF}<boolean xmlns="${NS}">false</boolean>`);
    });
  });

  describe('int, Comando, null Comando', () => {
    it('LoginYInsertarEvento returns the id in every binding', async () => {
      const s11 = await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event() }));
      expect(s11.text).toBe(
        soapResponse('1.1', `<LoginYInsertarEventoResponse xmlns="${NS}"><LoginYInsertarEventoResult>1</LoginYInsertarEventoResult></LoginYInsertarEventoResponse>`),
      );
      const s12 = await t.soap12('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event({ Codigo: '2' }) }));
      expect(s12.text).toBe(
        soapResponse('1.2', `<LoginYInsertarEventoResponse xmlns="${NS}"><LoginYInsertarEventoResult>2</LoginYInsertarEventoResult></LoginYInsertarEventoResponse>`),
      );
      const get = await t.get('LoginYInsertarEvento', { ...credentials(), ...event({ Codigo: '3' }) });
      expect(get.text).toBe(`${DECL}${CRLF}<int xmlns="${NS}">3</int>`);
      const post = await t.post('LoginYInsertarEvento', { ...credentials(), ...event({ Codigo: '4' }) });
      expect(post.text).toBe(`${DECL}${CRLF}<int xmlns="${NS}">4</int>`);
      const bad = await t.post('LoginYInsertarEvento', { ...credentials('acme', 'bad'), ...event() });
      expect(bad.text).toBe(`${DECL}${CRLF}<int xmlns="${NS}">-1</int>`);
    });

    it('a queued command as Comando, then null once finished', async () => {
      const queued = await t.app.backends.commands.enqueue({ systemUser: 'acme', cmd: 'CC', unidad: 'AB123CD', equipo: '42', now: t.now, expiresAt: t.now + 3_600_000 });
      const n = queued.numero;
      const s11 = await t.soap11('LoginYObtenerComando', xmlParams(credentials()));
      expect(s11.text).toBe(
        soapResponse(
          '1.1',
          `<LoginYObtenerComandoResponse xmlns="${NS}"><LoginYObtenerComandoResult><CMD>CC</CMD><UNIDAD>AB123CD</UNIDAD><EQUIPO>42</EQUIPO><NUMERO>${n}</NUMERO></LoginYObtenerComandoResult></LoginYObtenerComandoResponse>`,
        ),
      );
      const post = await t.post('LoginYObtenerComando', credentials());
      expect(post.contentType).toBe(TEXT_XML);
      expect(post.text).toBe(
        `${DECL}${CRLF}<Comando xmlns:xsi="${XSI}" xmlns:xsd="${XSD}" xmlns="${NS}">${CRLF}  <CMD>CC</CMD>${CRLF}  <UNIDAD>AB123CD</UNIDAD>${CRLF}  <EQUIPO>42</EQUIPO>${CRLF}  <NUMERO>${n}</NUMERO>${CRLF}</Comando>`,
      );
      const done = await t.get('LoginYComandoProcesado', { ...credentials(), NUMERO: String(n), correcto: 'true' });
      expect(done.text).toBe(`${DECL}${CRLF}<boolean xmlns="${NS}">true</boolean>`);

      const none11 = await t.soap11('LoginYObtenerComando', xmlParams(credentials()));
      expect(none11.text).toBe(soapResponse('1.1', `<LoginYObtenerComandoResponse xmlns="${NS}" />`));
      const none12 = await t.soap12('LoginYObtenerComando', xmlParams(credentials()));
      expect(none12.text).toBe(soapResponse('1.2', `<LoginYObtenerComandoResponse xmlns="${NS}" />`));
      const noneGet = await t.get('LoginYObtenerComando', credentials());
      expect(noneGet.text).toBe(`${DECL}${CRLF}<Comando xmlns:xsi="${XSI}" xmlns:xsd="${XSD}" xsi:nil="true" xmlns="${NS}" />`);
    });

    it('ObtenerComando with a session uses the same shapes', async () => {
      const login = await t.soap11('Login', xmlParams(credentials()));
      const cookie = sessionCookie(login);
      const none = await t.soap11('ObtenerComando', '', undefined, cookie);
      expect(none.text).toBe(soapResponse('1.1', `<ObtenerComandoResponse xmlns="${NS}" />`));
      const noneGet = await t.get('ObtenerComando', {}, cookie);
      expect(noneGet.text).toBe(`${DECL}${CRLF}<Comando xmlns:xsi="${XSI}" xmlns:xsd="${XSD}" xsi:nil="true" xmlns="${NS}" />`);
    });
  });

  describe('ArrayOfVehiculo and ArrayOfInt', () => {
    it('an empty list', async () => {
      const s11 = await t.soap11('ConsultarVehiculosEnViaje', xmlParams(credentials()));
      expect(s11.text).toBe(
        soapResponse('1.1', `<ConsultarVehiculosEnViajeResponse xmlns="${NS}"><ConsultarVehiculosEnViajeResult /></ConsultarVehiculosEnViajeResponse>`),
      );
      const get = await t.get('ConsultarVehiculosEnViaje', credentials());
      expect(get.text).toBe(`${DECL}${CRLF}<ArrayOfVehiculo xmlns:xsi="${XSI}" xmlns:xsd="${XSD}" xmlns="${NS}" />`);
    });

    it('vehicles sorted by Dominio, a nil FechaUltimoReporte for one never reported', async () => {
      await t.app.backends.trips.addVehicle('acme', 'ZZ999ZZ', 'SN-2', T0);
      await t.app.backends.trips.addVehicle('acme', 'AB123CD', 'SN-1', T0);
      const vehicle = (dominio: string, serie: string, last: string | null, indent: string | null): string => {
        const nl = indent === null ? '' : `${CRLF}${indent}  `;
        const end = indent === null ? '' : `${CRLF}${indent}`;
        const lastEl = last === null ? '<FechaUltimoReporte xsi:nil="true" />' : `<FechaUltimoReporte>${last}</FechaUltimoReporte>`;
        return `<Vehiculo>${nl}<Dominio>${dominio}</Dominio>${nl}<NroSerie>${serie}</NroSerie>${nl}${lastEl}${nl}<FechaRegistracion>2026-11-22T12:00:00Z</FechaRegistracion>${end}</Vehiculo>`;
      };
      // The latest event of AB123CD above was sent as 2026-11-22T08:59:30-03:00.
      const s12 = await t.soap12('ConsultarVehiculosEnViaje', xmlParams(credentials()));
      expect(s12.text).toBe(
        soapResponse(
          '1.2',
          `<ConsultarVehiculosEnViajeResponse xmlns="${NS}"><ConsultarVehiculosEnViajeResult>${vehicle('AB123CD', 'SN-1', '2026-11-22T11:59:30Z', null)}${vehicle('ZZ999ZZ', 'SN-2', null, null)}</ConsultarVehiculosEnViajeResult></ConsultarVehiculosEnViajeResponse>`,
        ),
      );
      const post = await t.post('ConsultarVehiculosEnViaje', credentials());
      expect(post.text).toBe(
        `${DECL}${CRLF}<ArrayOfVehiculo xmlns:xsi="${XSI}" xmlns:xsd="${XSD}" xmlns="${NS}">${CRLF}  ${vehicle('AB123CD', 'SN-1', '2026-11-22T11:59:30Z', '  ')}${CRLF}  ${vehicle('ZZ999ZZ', 'SN-2', null, '  ')}${CRLF}</ArrayOfVehiculo>`,
      );
    });

    it('LoginYInsertarEventos answers one code per event, in order', async () => {
      const ev = (o: Record<string, string>): string => `<pEvento>${xmlParams(event(o))}</pEvento>`;
      const body = `${xmlParams(credentials())}<Eventos>${ev({ Codigo: '10' })}${ev({ FechaHoraEvento: 'yesterday' })}${ev({ Codigo: '11' })}</Eventos>`;
      const s11 = await t.soap11('LoginYInsertarEventos', body);
      expect(s11.text).toBe(
        soapResponse(
          '1.1',
          `<LoginYInsertarEventosResponse xmlns="${NS}"><LoginYInsertarEventosResult><int>5</int><int>-3</int><int>6</int></LoginYInsertarEventosResult></LoginYInsertarEventosResponse>`,
        ),
      );
      const empty = await t.soap12('LoginYInsertarEventos', `${xmlParams(credentials())}<Eventos />`);
      expect(empty.text).toBe(
        soapResponse('1.2', `<LoginYInsertarEventosResponse xmlns="${NS}"><LoginYInsertarEventosResult /></LoginYInsertarEventosResponse>`),
      );
    });
  });

  describe('faults and HTTP errors', () => {
    it('SOAP 1.1 Client fault', async () => {
      const r = await t.soap11('Login', xmlParams(credentials()), { SOAPAction: `"${NS}Nope"` });
      expect(r.status).toBe(500);
      expect(r.contentType).toBe(TEXT_XML);
      expect(r.text).toBe(
        soapResponse(
          '1.1',
          `<soap:Fault><faultcode>soap:Client</faultcode><faultstring>Server did not recognize the value of HTTP Header SOAPAction: ${NS}Nope.</faultstring><detail /></soap:Fault>`,
        ),
      );
    });

    it('SOAP 1.2 Sender fault', async () => {
      const r = await t.soap12('LoginYObtenerComando', xmlParams(credentials('acme', 'wrong')));
      expect(r.status).toBe(500);
      expect(r.contentType).toBe(SOAP12_XML);
      expect(r.text).toBe(
        soapResponse(
          '1.2',
          '<soap:Fault><soap:Code><soap:Value>soap:Sender</soap:Value></soap:Code><soap:Reason><soap:Text xml:lang="en">Invalid credentials: the SystemUser or Password is wrong, or the provider is disabled or locked out.</soap:Text></soap:Reason><soap:Detail /></soap:Fault>',
        ),
      );
    });

    it('malformed XML: 400 with a Client fault saying where it broke', async () => {
      const r = await t.request('POST', '/service.asmx', `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><Login></soap:Body></soap:Envelope>`, {
        'Content-Type': 'text/xml; charset=utf-8',
      });
      expect(r.status).toBe(400);
      expect(r.text).toBe(
        soapResponse(
          '1.1',
          '<soap:Fault><faultcode>soap:Client</faultcode><faultstring>Server was unable to read request. ---&gt; There is an error in the XML document: 1:100: unexpected close tag.</faultstring><detail /></soap:Fault>',
        ),
      );
    });

    it('HTTP GET/POST errors are one text line, except the two-line conversion error of ASMX', async () => {
      const missing = await t.get('LoginYInsertarEvento', { ...credentials(), Dominio: 'X' });
      expect(missing.status).toBe(500);
      expect(missing.contentType).toBe('text/plain; charset=utf-8');
      expect(missing.text).toBe(`Missing parameter: Latitud.${CRLF}`);
      const unknown = await t.post('Foo', {});
      expect(unknown.status).toBe(500);
      expect(unknown.text).toBe(`Foo Web Service method name is not valid.${CRLF}`);
      const soapOnly = await t.get('LoginYInsertarEventos', credentials());
      expect(soapOnly.text).toBe(`LoginYInsertarEventos Web Service method name is not valid.${CRLF}`);
      const badInt = await t.get('LoginYComandoProcesado', { ...credentials(), NUMERO: 'abc', correcto: 'true' });
      expect(badInt.text).toBe(`Cannot convert abc to System.Int32.${CRLF}Parameter name: type ---> Input string was not in a correct format.${CRLF}`);
      const fault = await t.get('LoginYObtenerComando', credentials('acme', 'wrong'));
      expect(fault.status).toBe(500);
      expect(fault.text).toBe(`Invalid credentials: the SystemUser or Password is wrong, or the provider is disabled or locked out.${CRLF}`);
    });
  });
});

describe('Server faults', () => {
  let t: TestApp;
  beforeAll(async () => {
    // A command store whose database is gone: a backend failure the service must report, not crash on.
    t = await TestApp.start({}, async (config) => {
      const real: Backends = await openEmbeddedBackends({ dataDir: config.embedded.dataDir, sqliteSynchronous: 'NORMAL', dedupeWindowMs: 60_000 });
      const broken = (): Promise<never> => Promise.reject(new Error('disk I/O error'));
      return { ...real, commands: { ...real.commands, deliverNext: broken } };
    });
    await t.provider('acme', 'secret-1');
  });
  afterAll(() => t.stop());

  it('SOAP 1.1 soap:Server and SOAP 1.2 soap:Receiver, HTTP 500 text, and the process keeps serving', async () => {
    const s11 = await t.soap11('LoginYObtenerComando', xmlParams(credentials()));
    expect(s11.status).toBe(500);
    expect(s11.text).toBe(
      soapResponse(
        '1.1',
        '<soap:Fault><faultcode>soap:Server</faultcode><faultstring>Server was unable to process request. ---&gt; An internal error occurred.</faultstring><detail /></soap:Fault>',
      ),
    );
    const s12 = await t.soap12('LoginYObtenerComando', xmlParams(credentials()));
    expect(s12.text).toBe(
      soapResponse(
        '1.2',
        '<soap:Fault><soap:Code><soap:Value>soap:Receiver</soap:Value></soap:Code><soap:Reason><soap:Text xml:lang="en">Server was unable to process request. ---&gt; An internal error occurred.</soap:Text></soap:Reason><soap:Detail /></soap:Fault>',
      ),
    );
    const get = await t.get('LoginYObtenerComando', credentials());
    expect(get.status).toBe(500);
    expect(get.text).toBe('Server was unable to process request. ---> An internal error occurred.\r\n');
    const ok = await t.soap11('Login', xmlParams(credentials()));
    expect(ok.text).toContain('<LoginResult>true</LoginResult>');
  });
});
