/**
 * Two generated clients, unchanged, over HTTPS with the private CA: zeep (Python) on every binding
 * of our WSDL (SOAP 1.1, SOAP 1.2, HTTP GET, HTTP POST) and node-soap on both SOAP ones. They load
 * the WSDL over HTTPS, find https:// addresses in it, and call them.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import * as soap from 'soap';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientEvent, TestApp } from '../helpers/harness.js';
import { secure } from '../helpers/secure.js';

const s = secure();
/** tools.sh python installs zeep (python-requirements.txt) into the services' state dir. */
const ZEEP_PYTHON = path.join(s.env.SERVICES_DIR!, 'python-venv', 'bin', 'python');
const ZEEP_CALL = path.resolve(import.meta.dirname, '..', 'helpers', 'zeep-call.py');
const creds = { SystemUser: 'acme', Password: 'secret-1' };
const event = clientEvent;

let t: TestApp;
let wsdl: string;
beforeAll(async () => {
  t = await TestApp.start({ TLS_CERT_FILE: s.certs.server, TLS_KEY_FILE: s.certs.serverKey });
  await t.provider('acme', 'secret-1');
  wsdl = `https://localhost:${t.app.gateway.port}/service.asmx?wsdl`;
});
afterAll(() => t.stop());

function zeep(port: string, calls: [string, Record<string, unknown>][]): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(ZEEP_PYTHON, [ZEEP_CALL, wsdl, s.certs.ca, port], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`zeep failed: ${stderr || err.message}`));
      else resolve(JSON.parse(stdout) as unknown[]);
    });
    child.stdin?.end(JSON.stringify(calls));
  });
}

describe('zeep over HTTPS', () => {
  it.each(['ServiceSoap', 'ServiceSoap12', 'ServiceHttpGet', 'ServiceHttpPost'])('%s: Login and a Login-prefixed insert', async (port) => {
    const [login, id, command] = await zeep(port, [
      ['Login', creds],
      ['LoginYInsertarEvento', { ...creds, ...event(`z-${port}`) }],
      ['LoginYObtenerComando', creds],
    ]);
    expect(login === true || login === 'true').toBe(true);
    expect(Number(id)).toBeGreaterThan(0);
    expect(command === null || typeof command === 'object').toBe(true);
  });

  it('refuses a server its CA did not sign (the system store does not know the private CA)', async () => {
    await expect(
      new Promise((resolve, reject) => {
        execFile(ZEEP_PYTHON, [ZEEP_CALL, wsdl, s.certs.otherCa, 'ServiceSoap'], { timeout: 60_000 }, (err, stdout, stderr) =>
          err ? reject(new Error(stderr)) : resolve(stdout),
        ).stdin?.end('[]');
      }),
    ).rejects.toThrow(/CERTIFICATE_VERIFY_FAILED|certificate verify failed/);
  });
});

describe('node-soap over HTTPS', () => {
  const agent = new https.Agent({ ca: readFileSync(s.certs.ca) });
  it.each([
    ['ServiceSoap', false],
    ['ServiceSoap12', true],
  ] as const)('%s: Login and a Login-prefixed insert', async (port, soap12) => {
    const client = await soap.createClientAsync(wsdl, { forceSoap12Headers: soap12, wsdl_options: { httpsAgent: agent } });
    const service = client as unknown as Record<string, Record<string, Record<string, (a: unknown, cb: (err: unknown, res: unknown) => void, opts?: unknown) => void>>>;
    const call = (op: string, args: Record<string, unknown>) =>
      new Promise<unknown>((resolve, reject) => {
        service.Service![port]![op]!(args, (err, res) => (err ? reject(err instanceof Error ? err : new Error('node-soap failed', { cause: err })) : resolve((res as Record<string, unknown> | null)?.[`${op}Result`])), { httpsAgent: agent });
      });
    expect(await call('Login', creds)).toBe(true);
    expect(await call('LoginYInsertarEvento', { ...creds, ...event(`n-${port}`) })).toBeGreaterThan(0);
    expect(client.lastRequest).toContain(soap12 ? 'http://www.w3.org/2003/05/soap-envelope' : 'http://schemas.xmlsoap.org/soap/envelope/');
    expect(client.lastEndpoint).toMatch(/^https:\/\//);
  });
});
