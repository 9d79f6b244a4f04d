/**
 * The last byte differences with ASMX (docs/protocol.md §Routing, §Errors): HEAD on the GET routes,
 * the 415 answer, the routing fault texts and the HTTP method-name errors. Expected texts are those
 * of the .NET Framework reference source (System.Web.Services resources and protocol classes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, DECL, NS, SOAP11, SOAP12, soapResponse, TestApp, xmlParams } from '../helpers/harness.js';
import { RawConnection } from '../helpers/raw-connection.js';

const TEXT_XML = 'text/xml; charset=utf-8';
const SOAP12_XML = 'application/soap+xml; charset=utf-8';

function fault11(message: string): string {
  return soapResponse('1.1', `<soap:Fault><faultcode>soap:Client</faultcode><faultstring>${message}</faultstring><detail /></soap:Fault>`);
}

function fault12(message: string): string {
  return soapResponse(
    '1.2',
    `<soap:Fault><soap:Code><soap:Value>soap:Sender</soap:Value></soap:Code><soap:Reason><soap:Text xml:lang="en">${message}</soap:Text></soap:Reason><soap:Detail /></soap:Fault>`,
  );
}

describe('ASMX fidelity', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start();
    await t.provider('acme', 'secret-1');
  });
  afterAll(() => t.stop());

  describe('HEAD', () => {
    const getRoutes = ['/service.asmx', '/service.asmx?wsdl', '/service.asmx?WSDL', '/service.asmx?disco', '/service.asmx?op=LoginYInsertarEvento', '/service.asmx?op=Nope'];

    it('answers each GET route with the headers of the GET and no body, and the connection goes on', async () => {
      const c = await RawConnection.open(t.app.gateway.port);
      try {
        for (const route of getRoutes) {
          c.write(`GET ${route} HTTP/1.1\r\nHost: gw.test\r\n\r\n`);
          const get = await c.read();
          c.write(`HEAD ${route} HTTP/1.1\r\nHost: gw.test\r\n\r\n`);
          const head = await c.read(true);
          expect(head.statusLine, route).toBe(get.statusLine);
          expect(head.headers.get('content-type'), route).toBe(get.headers.get('content-type'));
          expect(head.headers.get('content-length'), route).toBe(String(get.body.length));
          expect(get.body.length, route).toBeGreaterThan(0);
          expect(head.body.length).toBe(0);
        }
        // Nothing trails the last HEAD answer, and the next request is answered on the same connection.
        await new Promise((r) => setTimeout(r, 100));
        expect(c.unread()).toBe('');
        c.write('GET /service.asmx/InSession HTTP/1.1\r\nHost: gw.test\r\n\r\n');
        const next = await c.read();
        expect(next.statusLine).toBe('HTTP/1.1 200 OK');
        expect(next.body.toString()).toBe(`${DECL}\r\n<boolean xmlns="${NS}">false</boolean>`);
        expect(c.closed).toBe(false);
      } finally {
        c.close();
      }
    });

    it('pipelined HEAD then GET: the GET answer follows the HEAD headers directly', async () => {
      const c = await RawConnection.open(t.app.gateway.port);
      try {
        c.write('HEAD /service.asmx?wsdl HTTP/1.1\r\nHost: gw.test\r\n\r\nGET /service.asmx?disco HTTP/1.1\r\nHost: gw.test\r\n\r\n');
        const head = await c.read(true);
        expect(head.statusLine).toBe('HTTP/1.1 200 OK');
        const disco = await c.read();
        expect(disco.statusLine).toBe('HTTP/1.1 200 OK');
        expect(disco.body.toString()).toMatch(/^<\?xml version="1\.0" encoding="utf-8"\?>\r\n<discovery /);
      } finally {
        c.close();
      }
    });

    it('HEAD on {path}/Op fails as ASMX does, without running the operation or sending a body', async () => {
      const c = await RawConnection.open(t.app.gateway.port);
      try {
        c.write('HEAD /service.asmx/Login?SystemUser=acme&Password=secret-1 HTTP/1.1\r\nHost: gw.test\r\n\r\n');
        const head = await c.read(true);
        const text = "Request format is unrecognized for URL unexpectedly ending in '/Login'.\r\n";
        expect(head.statusLine).toBe('HTTP/1.1 500 Internal Server Error');
        expect(head.headers.get('content-type')).toBe('text/plain; charset=utf-8');
        expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
        expect(head.headers.has('set-cookie')).toBe(false); // Login did not run
        c.write('GET /service.asmx/Login?SystemUser=acme&Password=secret-1 HTTP/1.1\r\nHost: gw.test\r\n\r\n');
        const get = await c.read();
        expect(get.statusLine).toBe('HTTP/1.1 200 OK');
        expect(get.body.toString()).toBe(`${DECL}\r\n<boolean xmlns="${NS}">true</boolean>`);
      } finally {
        c.close();
      }
    });
  });

  describe('415', () => {
    const envelope = `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><Login xmlns="${NS}">${xmlParams(credentials())}</Login></soap:Body></soap:Envelope>`;

    it('an unsupported media type with a SOAPAction: empty body, the SOAP 1.1 Content-Type', async () => {
      const r = await t.request('POST', '/service.asmx', envelope, { 'Content-Type': 'text/plain', SOAPAction: `"${NS}Login"` });
      expect(r.status).toBe(415);
      expect(r.contentType).toBe(TEXT_XML);
      expect(r.text).toBe('');
    });

    it('without SOAPAction ASMX guesses SOAP 1.2, and its 415 says so', async () => {
      const r = await t.request('POST', '/service.asmx', envelope, { 'Content-Type': 'application/json' });
      expect(r.status).toBe(415);
      expect(r.contentType).toBe(SOAP12_XML);
      expect(r.text).toBe('');
    });

    it('a charset nobody knows is a 415 too', async () => {
      const r = await t.request('POST', '/service.asmx', envelope, { 'Content-Type': 'text/xml; charset=x-klingon', SOAPAction: `"${NS}Login"` });
      expect(r.status).toBe(415);
      expect(r.contentType).toBe(TEXT_XML);
      expect(r.text).toBe('');
    });
  });

  describe('routing faults', () => {
    it('no SOAPAction and a Body naming no operation: ASMX asks for an action', async () => {
      const message = 'Unable to handle request without a valid action parameter. Please supply a valid soap action.';
      const unknown = await t.soap11('Frobnicate', '', {});
      expect(unknown.status).toBe(500);
      expect(unknown.contentType).toBe(TEXT_XML);
      expect(unknown.text).toBe(fault11(message));
      const empty = await t.request('POST', '/service.asmx', `<s:Envelope xmlns:s="${SOAP12}"><s:Body /></s:Envelope>`, {
        'Content-Type': 'application/soap+xml; charset=utf-8',
      });
      expect(empty.status).toBe(500);
      expect(empty.contentType).toBe(SOAP12_XML);
      expect(empty.text).toBe(fault12(message));
    });

    it('an unknown SOAP 1.2 action parameter: the Body element routes, else ASMX names the action', async () => {
      const ct = 'application/soap+xml; charset=utf-8; action="urn:other/Nope"';
      const known = await t.request('POST', '/service.asmx', `<s:Envelope xmlns:s="${SOAP12}"><s:Body><Login xmlns="${NS}">${xmlParams(credentials())}</Login></s:Body></s:Envelope>`, {
        'Content-Type': ct,
      });
      expect(known.status).toBe(200);
      expect(known.text).toBe(soapResponse('1.2', `<LoginResponse xmlns="${NS}"><LoginResult>true</LoginResult></LoginResponse>`));
      const unknown = await t.request('POST', '/service.asmx', `<s:Envelope xmlns:s="${SOAP12}"><s:Body><Nope xmlns="${NS}" /></s:Body></s:Envelope>`, {
        'Content-Type': ct,
      });
      expect(unknown.status).toBe(500);
      expect(unknown.text).toBe(fault12("Unable to handle request. The action 'urn:other/Nope' was not recognized."));
    });
  });

  describe('HTTP GET/POST parameter names', () => {
    it('match in any case, as NameValueCollection does', async () => {
      const r = await t.request('GET', '/service.asmx/Login?systemuser=acme&PASSWORD=secret-1');
      expect(r.text).toBe(`${DECL}\r\n<boolean xmlns="${NS}">true</boolean>`);
      const form = await t.request('POST', '/service.asmx/Login', 'SYSTEMUSER=acme&password=secret-1', { 'Content-Type': 'application/x-www-form-urlencoded' });
      expect(form.text).toContain('>true</boolean>');
    });

    it('join a repeated name with commas, so a repeated int no longer converts', async () => {
      const r = await t.request('GET', '/service.asmx/LoginYComandoProcesado?SystemUser=acme&Password=secret-1&NUMERO=1&numero=2&correcto=true');
      expect(r.status).toBe(500);
      expect(r.text).toMatch(/^Cannot convert 1,2 to System\.Int32\./);
    });
  });

  describe('HTTP GET/POST method names', () => {
    it('a name in the wrong case: ASMX ArgumentException text, HTML-encoded, with its parameter line', async () => {
      const get = await t.request('GET', '/service.asmx/login?SystemUser=acme&Password=secret-1');
      expect(get.status).toBe(500);
      expect(get.contentType).toBe('text/plain; charset=utf-8');
      expect(get.setCookie).toBeNull();
      expect(get.text).toBe(
        'Invalid method name &#39;login&#39;,  method names are case sensitive.   The method name &#39;Login&#39; with the same name but different casing was found.\r\nParameter name: methodName\r\n',
      );
      const post = await t.request('POST', '/service.asmx/OBTENERCOMANDO', '', { 'Content-Type': 'application/x-www-form-urlencoded' });
      expect(post.text).toBe(
        'Invalid method name &#39;OBTENERCOMANDO&#39;,  method names are case sensitive.   The method name &#39;ObtenerComando&#39; with the same name but different casing was found.\r\nParameter name: methodName\r\n',
      );
    });

    it('an unknown name is HTML-encoded like every ASMX HTTP error message', async () => {
      const r = await t.request('GET', `/service.asmx/${encodeURIComponent('Año<x>&"')}`);
      expect(r.status).toBe(500);
      expect(r.text).toBe('A&#241;o&lt;x&gt;&amp;&quot; Web Service method name is not valid.\r\n');
    });

    it('a SOAP-only operation in any case is not an HTTP method', async () => {
      const r = await t.request('GET', '/service.asmx/loginyinsertareventos');
      expect(r.text).toBe('loginyinsertareventos Web Service method name is not valid.\r\n');
    });
  });
});
