/**
 * Encodings refused clearly (docs/protocol.md §Encodings): an unknown charset is 415, bytes that
 * are invalid in the declared encoding are a 400 Client fault, a bad %-escape in the URL is a 400
 * text/plain; none stores anything, none logs a stack trace, each is counted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, event, NS, soap11Envelope, TestApp, xmlParams } from '../helpers/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await TestApp.start();
  await t.provider('acme', 'secret-1');
});
afterAll(() => t.stop());

const insertBody = (codigo: string): string => soap11Envelope('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event({ Codigo: codigo }) }));
const soapHeaders = (contentType = 'text/xml; charset=utf-8') => ({ 'Content-Type': contentType, SOAPAction: `"${NS}LoginYInsertarEvento"` });

async function storedCodes(): Promise<string[]> {
  return (await t.app.backends.events.recent({ provider: 'acme', limit: 100 })).map((e) => e.codigo);
}

function rejected(metrics: string, reason: string): number {
  const m = new RegExp(`^gateway_rejected_requests_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(metrics);
  return Number(m?.[1] ?? 0);
}

describe('charsets', () => {
  it('an unknown charset in the Content-Type or in the XML declaration is 415 with an empty body', async () => {
    const header = await t.request('POST', t.config.service.path, insertBody('cs-header'), soapHeaders('text/xml; charset=x-unknown'));
    expect(header.status).toBe(415);
    expect(header.text).toBe('');
    const declared = insertBody('cs-decl').replace('encoding="utf-8"', 'encoding="x-unknown"');
    const decl = await t.request('POST', t.config.service.path, declared, soapHeaders('text/xml'));
    expect(decl.status).toBe(415);
    expect(decl.text).toBe('');
    expect(rejected(await t.metrics(), 'unknown_charset')).toBe(2);
    expect(await storedCodes()).not.toContain('cs-decl');
  });

  it('a declared ISO-8859-1 body is read as such', async () => {
    const latin1 = Buffer.from(insertBody('ca\u00f1a').replace('encoding="utf-8"', 'encoding="iso-8859-1"'), 'latin1');
    const r = await t.request('POST', t.config.service.path, latin1, soapHeaders('text/xml'));
    expect(r.status).toBe(200);
    expect(await storedCodes()).toContain('ca\u00f1a');
  });
});

describe('bytes invalid in the declared encoding', () => {
  const invalidUtf8: [string, number[]][] = [
    ['0xFF', [0xff]],
    ['an overlong "<" (C0 BC)', [0xc0, 0xbc]],
    ['a CESU-8 surrogate (ED A0 80)', [0xed, 0xa0, 0x80]],
    ['a truncated sequence at the end of a value', [0xe2, 0x82]],
  ];

  it.each(invalidUtf8)('%s is a 400 Client fault, and nothing is stored', async (name, bytes) => {
    const codigo = `bad-${name.length}`;
    const [head, tail] = insertBody(codigo).split(codigo) as [string, string];
    const body = Buffer.concat([Buffer.from(head), Buffer.from(codigo), Buffer.from(bytes), Buffer.from(tail)]);
    const r = await t.request('POST', t.config.service.path, body, soapHeaders());
    expect(r.status).toBe(400);
    expect(r.text).toContain('<faultcode>soap:Client</faultcode>');
    expect(r.text).toContain('Invalid character in the given encoding');
    expect((await storedCodes()).some((c) => c.startsWith(codigo))).toBe(false);
  });

  it('is counted, and no error (no stack trace) is logged for any of them', async () => {
    expect(rejected(await t.metrics(), 'invalid_encoding')).toBe(invalidUtf8.length);
    const errors = t.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
    expect(errors).toEqual([]);
  });
});

describe('bad %-escapes in the URL', () => {
  it.each([
    ['an operation path', '/service.asmx/Log%zzin?SystemUser=acme&Password=secret-1'],
    ['an invalid UTF-8 escape in the path', '/service.asmx/Login%C0%BC'],
    ['the help page ?op=', '/service.asmx?op=%E0%A4%A'],
  ])('%s is a 400 text/plain, and the server keeps serving', async (_name, url) => {
    const r = await t.request('GET', url);
    expect(r.status).toBe(400);
    expect(r.contentType).toBe('text/plain; charset=utf-8');
    expect(r.text).toMatch(/%-escape\.\r\n$/);
    expect((await t.get('Login', credentials())).text).toContain('>true</boolean>');
  });

  it('is counted without an error log', async () => {
    expect(rejected(await t.metrics(), 'bad_escape')).toBe(3);
    expect(t.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 50)).toEqual([]);
  });
});
