/**
 * WSDL_FILE: a deployment's captured WSDL served verbatim but for the port addresses, the disco
 * document to match; an older release's file (less declared) starts and says what is served beyond
 * it; a file declaring what the gateway does not serve refuses the start (the check itself, case by
 * case: test/unit/gateway/metadata/captured-wsdl.unit.test.ts). The fixture is in the deployed
 * shape with its own class name, prefixes (xs:, gps:), Spanish documentation, LF line ends, a byte
 * order mark and one single-quoted address.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApplication } from '../../gateway/app.js';
import { parseCapturedWsdl } from '../../gateway/metadata/captured-wsdl.js';
import { ConfigError, loadConfig } from '../../shared/config/index.js';
import {
  BEYOND_OLDER_RELEASE,
  CAPTURED,
  CAPTURED_FILE as FIXTURE,
  CAPTURED_NAMESPACE as NAMESPACE,
  CAPTURED_TEXT,
  olderRelease,
  SERVED_SINCE_CAPTURE,
} from '../helpers/captured-wsdl.js';
import { credentials, TestApp, xmlParams } from '../helpers/harness.js';
import { RawConnection } from '../helpers/raw-connection.js';

const ORIGINAL_URL = 'http://legacy.example.com/ws/Service.asmx';

/** The fixture with its four port addresses replaced, every other byte (BOM included) untouched. */
function expectedWsdl(url: string): Buffer {
  const text = CAPTURED_TEXT.replaceAll(`location="${ORIGINAL_URL}"`, `location="${url}"`).replaceAll(`location='${ORIGINAL_URL}'`, `location='${url}'`);
  return Buffer.from(text, 'utf8');
}

describe('WSDL_FILE served verbatim', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start({ WSDL_FILE: FIXTURE, SERVICE_NAMESPACE: NAMESPACE });
    await t.provider('acme', 'secret-1');
  });
  afterAll(() => t.stop());

  it('the fixture is the kind of file the feature is for', () => {
    expect(CAPTURED.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(CAPTURED_TEXT).not.toContain('\r\n');
    expect(CAPTURED_TEXT.split(ORIGINAL_URL)).toHaveLength(5);
    expect(CAPTURED_TEXT).toContain('<http:operation location="/Login" />');
  });

  it('starts naming nothing beyond the file but what the gateway gained since its capture (captured-service.beyond.txt)', () => {
    const lines = t.logs.filter((l) => l.includes('"wsdlFile"')).map((l) => JSON.parse(l) as { beyond: string[] });
    expect(lines.length).toBeLessThanOrEqual(1);
    expect(lines.flatMap((l) => l.beyond)).toEqual(SERVED_SINCE_CAPTURE);
  });

  it('?wsdl is the file byte for byte, with each port address set to the request URL', async () => {
    const res = await fetch(`${t.url}?wsdl`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/xml; charset=utf-8');
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.equals(expectedWsdl(t.url))).toBe(true);
    // Relative HTTP operation locations are not addresses and stay as they are.
    expect(body.toString('utf8')).toContain('<http:operation location="/Login" />');
  });

  it('?disco points at the request URL and lists the captured SOAP bindings', async () => {
    const r = await t.request('GET', `${t.config.service.path}?disco`);
    expect(r.text).toBe(
      '<?xml version="1.0" encoding="utf-8"?>\r\n' +
        '<discovery xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="http://schemas.xmlsoap.org/disco/">\r\n' +
        `  <contractRef ref="${t.url}?wsdl" docRef="${t.url}" xmlns="http://schemas.xmlsoap.org/disco/scl/" />\r\n` +
        `  <soap address="${t.url}" xmlns:q1="${NAMESPACE}" binding="q1:WSPrestadoresSoap" xmlns="http://schemas.xmlsoap.org/disco/soap/" />\r\n` +
        `  <soap address="${t.url}" xmlns:q2="${NAMESPACE}" binding="q2:WSPrestadoresSoap12" xmlns="http://schemas.xmlsoap.org/disco/soap/" />\r\n` +
        '</discovery>',
    );
  });

  it('HEAD ?wsdl reports the byte length of the served file', async () => {
    const c = await RawConnection.open(t.app.gateway.port);
    try {
      c.write(`HEAD ${t.config.service.path}?wsdl HTTP/1.1\r\nHost: 127.0.0.1:${t.app.gateway.port}\r\n\r\n`);
      const head = await c.read(true);
      expect(head.headers.get('content-length')).toBe(String(expectedWsdl(t.url).length));
    } finally {
      c.close();
    }
  });

  it('calls are served as usual', async () => {
    const r = await t.request(
      'POST',
      t.config.service.path,
      `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><Login xmlns="${NAMESPACE}">${xmlParams(credentials())}</Login></soap:Body></soap:Envelope>`,
      { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NAMESPACE}Login"` },
    );
    expect(r.text).toContain(`<LoginResponse xmlns="${NAMESPACE}"><LoginResult>true</LoginResult></LoginResponse>`);
  });
});

describe('WSDL_FILE behind a proxy', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start({ WSDL_FILE: FIXTURE, SERVICE_NAMESPACE: NAMESPACE, PUBLIC_URL: 'https://gps.example.com', SERVICE_PATH: '/ws/Service.asmx' });
  });
  afterAll(() => t.stop());

  it('writes PUBLIC_URL and the service path into the addresses', async () => {
    const res = await fetch(`${t.base}/ws/Service.asmx?wsdl`);
    expect(Buffer.from(await res.arrayBuffer()).equals(expectedWsdl('https://gps.example.com/ws/Service.asmx'))).toBe(true);
  });
});

describe('location rewriting', () => {
  const doc = parseCapturedWsdl(CAPTURED, NAMESPACE, 'fixture');

  it('escapes the URL for the quote the file uses', () => {
    const hostile = `http://h/x.asmx?a=1&b="2"'3'<x>`;
    const out = doc.render(hostile);
    expect(out).toContain(`<soap:address location="http://h/x.asmx?a=1&amp;b=&quot;2&quot;'3'&lt;x&gt;" />`);
    expect(out).toContain(`<soap12:address location='http://h/x.asmx?a=1&amp;b=&quot;2&quot;&apos;3&apos;&lt;x&gt;' />`);
  });

  it('lists the SOAP bindings in document order for the disco', () => {
    expect(doc.soapBindings).toEqual(['WSPrestadoresSoap', 'WSPrestadoresSoap12']);
  });
});

describe("WSDL_FILE of an older release: less declared than the gateway serves", () => {
  let dir = '';
  let file = '';
  let t: TestApp;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'wsdl-older-'));
    file = path.join(dir, 'older.wsdl');
    writeFileSync(file, olderRelease());
    t = await TestApp.start({ WSDL_FILE: file, SERVICE_NAMESPACE: NAMESPACE });
    await t.provider('acme', 'secret-1');
  });
  afterAll(async () => {
    await t.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts, and says in one log line what it serves beyond the file', () => {
    const lines = t.logs.map((l) => JSON.parse(l) as { level: number; msg: string; wsdlFile?: string; beyond?: string[] }).filter((l) => l.wsdlFile !== undefined);
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line?.level).toBe(30);
    expect(line?.wsdlFile).toBe(file);
    expect(line?.beyond).toEqual(BEYOND_OLDER_RELEASE);
    expect(line?.msg).toBe(
      `WSDL_FILE ${file} declares less than this gateway serves; served all the same, not described to its clients: ${BEYOND_OLDER_RELEASE.join('; ')}`,
    );
  });

  it('serves that file as it is, and what is beyond it all the same', async () => {
    const wsdl = await (await fetch(`${t.url}?wsdl`)).text();
    expect(wsdl).not.toContain('ConsultarVehiculosEnViaje');
    expect(wsdl).toContain('<wsdl:operation name="InsertarEvento">');
    const r = await t.request(
      'POST',
      t.config.service.path,
      `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><ConsultarVehiculosEnViaje xmlns="${NAMESPACE}">${xmlParams(credentials())}</ConsultarVehiculosEnViaje></soap:Body></soap:Envelope>`,
      { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NAMESPACE}ConsultarVehiculosEnViaje"` },
    );
    expect(r.status).toBe(200);
    expect(r.text).toContain(`<ConsultarVehiculosEnViajeResponse xmlns="${NAMESPACE}"><ConsultarVehiculosEnViajeResult /></ConsultarVehiculosEnViajeResponse>`);
  });
});

describe('WSDL_FILE declaring what the gateway does not serve, or unreadable', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'wsdl-file-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Starts the real application on `wsdl` and returns why it refused; nothing is opened under DATA_DIR first. */
  async function refusal(name: string, wsdl: string, namespace = NAMESPACE): Promise<Error> {
    const file = path.join(dir, name);
    writeFileSync(file, wsdl);
    const dataDir = mkdtempSync(path.join(dir, 'data-'));
    const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: 't', HOST: '127.0.0.1', WSDL_FILE: file, SERVICE_NAMESPACE: namespace });
    try {
      const app = await startApplication({ config, logger: pino({ level: 'silent' }), port: 0, adminPort: 0 });
      await app.close();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect(readdirSync(dataDir)).toEqual([]);
      return err as Error;
    }
    throw new Error('the gateway started');
  }

  it('an operation and a type member the gateway does not serve: one line naming each, the file and the setting', async () => {
    const more = CAPTURED_TEXT.replaceAll('<wsdl:operation name="Logout">', '<wsdl:operation name="Reiniciar">').replace(
      /(<xs:complexType name="Comando">[^]*?name=")EQUIPO(")/,
      '$1Equipo$2',
    );
    const err = await refusal('more.wsdl', more);
    expect(err.message).toBe(
      `WSDL_FILE ${path.join(dir, 'more.wsdl')} declares what this gateway does not serve: operation Reiniciar; type Comando: element Equipo (a captured WSDL may declare less than the gateway serves, never more).`,
    );
  });

  it('a member of another type', async () => {
    const typed = CAPTURED_TEXT.replace(/(<xs:complexType name="pEvento">[^]*?name="Latitud" type=")xs:double/, '$1xs:string');
    expect((await refusal('typed.wsdl', typed)).message).toContain(
      'declares what this gateway does not serve: type pEvento: element Latitud is xs:string in the file, xs:double in the gateway',
    );
  });

  it('another namespace, another encoding, broken XML, no file', async () => {
    expect((await refusal('ns.wsdl', CAPTURED_TEXT, 'http://tempuri.org/')).message).toContain(
      `has targetNamespace "${NAMESPACE}" but SERVICE_NAMESPACE is "http://tempuri.org/"`,
    );
    expect((await refusal('latin1.wsdl', CAPTURED_TEXT.replace('encoding="utf-8"', 'encoding="iso-8859-1"'))).message).toContain(
      'declares encoding="iso-8859-1"',
    );
    expect((await refusal('broken.wsdl', CAPTURED_TEXT.replace('</wsdl:types>', ''))).message).toContain('is not well-formed XML');
    const config = loadConfig({ DATA_DIR: dir, WSDL_FILE: path.join(dir, 'absent.wsdl') });
    await expect(startApplication({ config, logger: pino({ level: 'silent' }), port: 0, adminPort: 0 })).rejects.toThrow(/absent\.wsdl cannot be read/);
  });
});
