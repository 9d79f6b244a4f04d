/** Bad input gets a defined answer and the server keeps serving (docs/protocol.md §Reading requests, §Errors). */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeBinaryPath } from '../../gateway/transport/uws.js';
import { RawConnection } from '../helpers/raw-connection.js';
import { credentials, NS, SOAP11, TestApp, xmlParams } from '../helpers/harness.js';
import { errorLine, faultstring } from '../helpers/client-errors.js';

/** Sends raw bytes over one TCP connection and returns everything the server answers until it closes or goes idle. */
function rawHttp(port: number, chunks: (string | Buffer)[], idleMs = 300): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let out = '';
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      socket.destroy();
      resolve(out);
    };
    socket.on('data', (d) => {
      out += d.toString('latin1');
      clearTimeout(timer);
      timer = setTimeout(finish, idleMs);
    });
    socket.on('close', () => resolve(out));
    socket.on('error', (err) => (out ? resolve(out) : reject(err)));
    const send = async (): Promise<void> => {
      for (const c of chunks) {
        if (socket.destroyed) break;
        socket.write(c);
        await new Promise((r) => setTimeout(r, 5));
      }
      timer = setTimeout(finish, idleMs);
    };
    socket.on('connect', () => void send());
  });
}

describe('robustness', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start({ BODY_LIMIT_BYTES: '4096' });
    await t.provider('acme', 'secret-1');
  });
  afterAll(() => t.stop());

  const stillServing = async () => {
    const r = await t.soap11('Login', xmlParams(credentials()));
    expect(r.text).toContain('<LoginResult>true</LoginResult>');
  };

  it('uses the native uWebSockets.js binary, not the JS fallback, on every front-end thread', () => {
    expect(nativeBinaryPath()).toMatch(/uws_linux_x64_\d+\.node$/);
    expect(t.app.gateway.nativeBinaries).toHaveLength(t.config.service.threads);
    for (const binary of t.app.gateway.nativeBinaries) expect(binary).toMatch(/uws_linux_x64_\d+\.node$/);
  });

  it.each([
    ['unclosed tag', `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><Login>`],
    ['garbage', 'this is not xml'],
    ['unbound prefix', `<soap:Envelope><soap:Body/></soap:Envelope>`],
    ['two roots', `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body/></soap:Envelope><x/>`],
    ['undefined entity', `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><Login xmlns="${NS}"><SystemUser>&xxe;</SystemUser></Login></soap:Body></soap:Envelope>`],
    ['empty body', ''],
  ])('malformed XML (%s): 400 Client fault', async (_name, body) => {
    const r = await t.request('POST', '/service.asmx', body, { 'Content-Type': 'text/xml; charset=utf-8' });
    expect(r.status).toBe(400);
    expect(r.text).toContain(`<faultcode>soap:Client</faultcode>${faultstring('notWellFormed', { detail: '' }).replace('</faultstring>', '')}`);
    await stillServing();
  });

  it('a DOCTYPE is refused (no entity expansion, no external fetch)', async () => {
    const body = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><Login xmlns="${NS}"><SystemUser>&lol2;</SystemUser></Login></soap:Body></soap:Envelope>`;
    const r = await t.request('POST', '/service.asmx', body, { 'Content-Type': 'text/xml' });
    expect(r.status).toBe(400);
    expect(r.text).toContain('DTD is prohibited in this XML document.');
    const external = `<!DOCTYPE x SYSTEM "http://127.0.0.1:1/evil.dtd"><x/>`;
    expect((await t.request('POST', '/service.asmx', external, { 'Content-Type': 'text/xml' })).status).toBe(400);
    await stillServing();
  });

  it('a body over the limit: 413, whether declared by Content-Length or only found while streaming', async () => {
    const big = `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><Login xmlns="${NS}"><SystemUser>${'x'.repeat(5000)}</SystemUser></Login></soap:Body></soap:Envelope>`;
    const declared = await t.request('POST', '/service.asmx', big, { 'Content-Type': 'text/xml' });
    expect(declared.status).toBe(413);
    // Chunked transfer: no Content-Length, so the limit must be enforced as bytes arrive.
    const head = `POST /service.asmx HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const chunks = [head];
    for (let i = 0; i < big.length; i += 1000) {
      const part = big.slice(i, i + 1000);
      chunks.push(`${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`);
    }
    chunks.push('0\r\n\r\n');
    const answer = await rawHttp(t.app.gateway.port, chunks);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    const form = await t.post('LoginYInsertarEvento', { ...credentials(), Crudo: 'y'.repeat(5000) });
    expect(form.status).toBe(413);
    await stillServing();
  });

  it('a declared body over the limit sent in full: the client reads the 413 (no reset), and the connection goes on', async () => {
    const conn = await RawConnection.open(t.app.gateway.port);
    try {
      const body = Buffer.alloc(t.config.service.bodyLimitBytes + 300_000, 'x');
      conn.write(`POST /service.asmx HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: ${body.length}\r\n\r\n`);
      conn.write(body);
      const refused = await conn.read(false, 10_000);
      expect(refused.status).toBe(413);
      conn.write(`GET /service.asmx/InSession HTTP/1.1\r\nHost: x\r\n\r\n`);
      const next = await conn.read();
      expect(next.status).toBe(200);
      expect(next.body.toString()).toContain('<boolean');
    } finally {
      conn.close();
    }
  });

  it('a body split in many tiny chunks, with a multi-byte character across a chunk boundary', async () => {
    const body = Buffer.from(
      `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><LoginYInsertarEvento xmlns="${NS}">${xmlParams({ ...credentials(), Dominio: 'ÑÑÑ1', NroSerie: 'x', Codigo: '€', Latitud: '1', Longitud: '1', Altitud: '0', Velocidad: '0', FechaHoraEvento: '2026-11-22T10:00:00Z', FechaHoraRecepcion: '2026-11-22T10:00:00Z' })}</LoginYInsertarEvento></soap:Body></soap:Envelope>`,
    );
    const head = `POST /service.asmx HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml; charset=utf-8\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
    const pieces: Buffer[] = [Buffer.from(head)];
    for (let i = 0; i < body.length; i += 7) pieces.push(body.subarray(i, i + 7));
    // Connection: close ends the exchange as soon as it is answered; the long idle wait only
    // matters on a loaded machine, where an insert can take longer than the default 300 ms.
    const answer = await rawHttp(t.app.gateway.port, pieces, 10_000);
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(answer).toMatch(/<LoginYInsertarEventoResult>[1-9]\d*</);
    const stored = (await t.app.backends.events.recent({ provider: 'acme', limit: 1 }))[0]!;
    expect(stored.dominio).toBe('ÑÑÑ1');
    expect(stored.codigo).toBe('€');
  });

  it('a client that disconnects mid-body does not disturb the server', async () => {
    const head = `POST /service.asmx HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: 1000\r\n\r\n<soap:Envelope xmlns:soap="${SOAP11}"><soap:Bo`;
    await new Promise<void>((resolve) => {
      const s = net.connect(t.app.gateway.port, '127.0.0.1', () => {
        s.write(head, () => {
          s.destroy();
          resolve();
        });
      });
    });
    await stillServing();
  });

  it('unknown paths, wrong methods and an unknown ?op', async () => {
    expect((await t.request('GET', '/nope')).status).toBe(404);
    expect((await t.request('PUT', '/service.asmx', 'x')).status).toBe(405);
    expect((await t.request('DELETE', '/service.asmx/Login')).status).toBe(405);
    expect((await t.request('GET', '/service.asmx?op=Nope')).status).toBe(404);
    const wrongType = await t.request('POST', '/service.asmx/Login', 'SystemUser=a', { 'Content-Type': 'text/plain' });
    expect(wrongType.status).toBe(500);
    expect(wrongType.text).toBe(errorLine('requestFormatInvalid', { contentType: 'text/plain' }));
    await stillServing();
  });

  it('metadata: ?wsdl in any case, ?disco, the help page and an operation page', async () => {
    for (const q of ['wsdl', 'WSDL', 'Wsdl']) {
      const r = await t.request('GET', `/service.asmx?${q}`);
      expect(r.status).toBe(200);
      expect(r.contentType).toBe('text/xml; charset=utf-8');
      expect(r.text).toContain(`<soap:address location="${t.base}/service.asmx" />`);
    }
    const disco = await t.request('GET', '/service.asmx?disco');
    expect(disco.text).toContain(`ref="${t.base}/service.asmx?wsdl"`);
    const help = await t.request('GET', '/service.asmx');
    expect(help.contentType).toBe('text/html; charset=utf-8');
    expect(help.text).toContain('?op=LoginYInsertarEvento');
    const page = await t.request('GET', '/service.asmx?op=LoginYInsertarEvento');
    expect(page.text).toContain(`action="${t.base}/service.asmx/LoginYInsertarEvento"`);
  });
});

describe('configuration of the address', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start({
      SERVICE_PATH: '/hub/x/MAPI/SOAP/gps/service.asmx',
      SERVICE_NAMESPACE: 'http://example.com/gps/',
      PUBLIC_URL: 'https://gps.example.com',
    });
    await t.provider('acme', 'secret-1');
  });
  afterAll(() => t.stop());

  it('a long configured path, its namespace in responses and the public URL in the WSDL', async () => {
    const r = await t.request('POST', '/HUB/x/mapi/soap/GPS/Service.asmx', `<s:Envelope xmlns:s="${SOAP11}"><s:Body><Login xmlns="http://example.com/gps/">${xmlParams(credentials())}</Login></s:Body></s:Envelope>`, {
      'Content-Type': 'text/xml',
      SOAPAction: '"http://example.com/gps/Login"',
    });
    expect(r.text).toContain('<LoginResponse xmlns="http://example.com/gps/"><LoginResult>true</LoginResult></LoginResponse>');
    const wsdl = await t.request('GET', '/hub/x/MAPI/SOAP/gps/service.asmx?wsdl');
    expect(wsdl.text).toContain('targetNamespace="http://example.com/gps/"');
    expect(wsdl.text).toContain('location="https://gps.example.com/hub/x/MAPI/SOAP/gps/service.asmx"');
    expect((await t.request('GET', '/service.asmx?wsdl')).status).toBe(404);
  });
});
