/** The fuzzer's oracle on hand-made answers: it passes documented ones and names each undocumented one. */
import { describe, expect, it } from 'vitest';
import type { Answer } from './client.js';
import { buildCorpus, cloneDraft, renderBody, serialize, type Draft } from './corpus.js';
import { check } from './oracle.js';
import { UWS_REFUSALS } from '../helpers/uws-refusals.js';

const DECL = '<?xml version="1.0" encoding="utf-8"?>';
const ENV11 = (body: string): string =>
  `${DECL}<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema"><soap:Body>${body}</soap:Body></soap:Envelope>`;
const TEXT_XML = 'text/xml; charset=utf-8';
const PLAIN = 'text/plain; charset=utf-8';

function seed(name: string): Draft {
  const d = cloneDraft(buildCorpus().find((s) => s.seed === name)!);
  renderBody(d);
  return d;
}

function answer(status: number, contentType: string | null, body: string | Buffer, extra: Partial<Answer> = {}): Answer {
  const b = typeof body === 'string' ? Buffer.from(body) : body;
  return { outcome: 'answered', status, headers: contentType === null ? [] : [['content-type', contentType]], body: b, ms: 1, extraBytes: 0, received: b.length, ...extra };
}

const kinds = (d: Draft, a: Answer): string[] => check(d, a, serialize(cloneDraft(d), { host: 'h', session: 's', spare: 's' })).map((v) => v.kind);
const insertResult = (n: string): string => ENV11(`<LoginYInsertarEventoResponse xmlns="http://tempuri.org/"><LoginYInsertarEventoResult>${n}</LoginYInsertarEventoResult></LoginYInsertarEventoResponse>`);

describe('fuzz oracle', () => {
  const soap = seed('soap11:LoginYInsertarEvento');
  const get = seed('get:LoginYInsertarEvento');

  it('passes documented answers', () => {
    expect(kinds(soap, answer(200, TEXT_XML, insertResult('42')))).toEqual([]);
    expect(kinds(soap, answer(200, TEXT_XML, insertResult('-3')))).toEqual([]);
    expect(kinds(soap, answer(500, TEXT_XML, ENV11('<soap:Fault><faultcode>soap:Client</faultcode><faultstring>x</faultstring><detail /></soap:Fault>')))).toEqual([]);
    expect(kinds(soap, answer(415, null, ''))).toEqual([]);
    expect(kinds(get, answer(500, PLAIN, 'Missing parameter: Latitud.\r\n'))).toEqual([]);
    expect(kinds(get, answer(200, TEXT_XML, `${DECL}\r\n<int xmlns="http://tempuri.org/">7</int>`))).toEqual([]);
  });

  it('names -5, undocumented codes and Server faults', () => {
    expect(kinds(soap, answer(200, TEXT_XML, insertResult('-5')))).toEqual(['soap LoginYInsertarEvento: -5 on a healthy backend']);
    expect(kinds(soap, answer(200, TEXT_XML, insertResult('0')))).toEqual(['soap LoginYInsertarEvento: undocumented result code']);
    expect(kinds(get, answer(200, TEXT_XML, `${DECL}\r\n<int xmlns="http://tempuri.org/">-5</int>`))).toEqual(['http LoginYInsertarEvento: -5 on a healthy backend']);
    const server = ENV11('<soap:Fault><faultcode>soap:Server</faultcode><faultstring>Server was unable to process request. ---&gt; An internal error occurred.</faultstring></soap:Fault>');
    expect(kinds(soap, answer(500, TEXT_XML, server))).toEqual(['soap 500: fault code soap:Server', 'soap 500: internal error']);
  });

  it('names characters XML 1.0 cannot carry and malformed XML', () => {
    const raw = ENV11('<LoginYObtenerComandoResponse xmlns="http://tempuri.org/"><LoginYObtenerComandoResult><CMD>C\u0001</CMD></LoginYObtenerComandoResult></LoginYObtenerComandoResponse>');
    expect(kinds(soap, answer(200, TEXT_XML, raw))).toEqual(['soap 200: character not allowed in XML 1.0', 'soap 200: not well-formed XML']);
    expect(kinds(soap, answer(200, TEXT_XML, Buffer.from([0x3c, 0x61, 0xff, 0x3e])))).toEqual(['soap 200: body is not valid UTF-8']);
  });

  it('names a SOAP body accepted although it is not the UTF-8 it declares', () => {
    const bad = cloneDraft(soap);
    bad.body = Buffer.concat([bad.body!.subarray(0, 300), Buffer.from([0xc0, 0xbc]), bad.body!.subarray(300)]);
    expect(kinds(bad, answer(200, TEXT_XML, insertResult('42')))).toEqual(['soap 200: a body invalid in its declared UTF-8 was accepted (documented: 400 Client fault)']);
    const latin1 = cloneDraft(bad);
    latin1.headers = latin1.headers.map(([k, v]) => [k, k === 'Content-Type' ? 'text/xml; charset=iso-8859-1' : v]);
    expect(kinds(latin1, answer(200, TEXT_XML, insertResult('42')))).toEqual([]);
  });

  it('names plain-text errors that are not one CRLF line, internal errors, a 415 with a body, a HEAD with a body, no answer, conflicting framing', () => {
    expect(kinds(get, answer(500, PLAIN, 'two\r\nlines\r\n'))).toEqual([]);
    expect(kinds(get, answer(500, PLAIN, 'bare\nline feed\r\n'))).toEqual(['http 500: not lines ending in CRLF']);
    expect(kinds(get, answer(500, PLAIN, 'no line end'))).toEqual(['http 500: not lines ending in CRLF']);
    expect(kinds(get, answer(500, PLAIN, 'Server was unable to process request. ---> An internal error occurred.\r\n'))).toEqual(['http 500: internal error']);
    expect(kinds(soap, answer(415, 'text/plain', 'no'))).toEqual(['soap 415: body not empty']);
    const head = seed('meta:head-wsdl');
    expect(kinds(head, answer(200, TEXT_XML, '', { extraBytes: 66_000 }))).toEqual(['metadata HEAD: answer carries a body']);
    expect(kinds(head, answer(200, TEXT_XML, ''))).toEqual([]);
    expect(kinds(soap, { ...answer(0, null, ''), outcome: 'timeout' })).toEqual(['no answer (timeout)']);
    const conflicting = cloneDraft(soap);
    conflicting.contentLength = [String(soap.body!.length), '10'];
    expect(kinds(conflicting, answer(200, TEXT_XML, insertResult('42')))).toEqual(['conflicting Content-Length: not a 400 text/plain']);
    expect(kinds(conflicting, answer(400, PLAIN, 'Bad request.\r\n'))).toEqual([]);
  });

  it("takes uWebSockets.js's own refusals only where docs/running.md says it refuses, with the status it says", () => {
    const uws = (status: 400 | 431 | 505): Answer => ({ ...answer(status, null, UWS_REFUSALS[status].body), headers: [['connection', 'close']] });
    const nonNumeric = cloneDraft(soap);
    nonNumeric.contentLength = ['abc'];
    expect(kinds(nonNumeric, uws(400))).toEqual([]);
    expect(kinds(nonNumeric, uws(505))).toEqual(["a lone Content-Length that is not a number: not uWS's 400"]);
    expect(kinds(nonNumeric, { ...answer(0, null, ''), outcome: 'closed' })).toEqual(['no answer (closed)']);
    const http10 = cloneDraft(soap);
    http10.version = 'HTTP/1.0';
    expect(kinds(http10, uws(505))).toEqual([]);
    const withTe = cloneDraft(soap);
    withTe.contentLength = [String(soap.body!.length)];
    withTe.chunked = true;
    expect(kinds(withTe, uws(400))).toEqual([]);
    expect(kinds(withTe, answer(400, PLAIN, 'Bad request.\r\n'))).toEqual(["Content-Length with Transfer-Encoding: not uWS's 400"]);
    // Read whole (under one read), so its 400 arrives: a reset is a violation. The same head in
    // front of a 3 MB body is refused while the body still arrives: a reset may overtake the 400.
    expect(kinds(withTe, { ...answer(0, null, ''), outcome: 'reset' })).toEqual(['no answer (reset)']);
    const withTeHugeBody = cloneDraft(withTe);
    withTeHugeBody.body = Buffer.alloc(3 * 1024 * 1024, 0x77);
    expect(kinds(withTeHugeBody, { ...answer(0, null, ''), outcome: 'reset' })).toEqual([]);
    expect(kinds(withTeHugeBody, { ...answer(0, null, ''), outcome: 'timeout' })).toEqual(['no answer (timeout)']);
    // Bytes after the declared body are a next request to uWS: the first may be answered, then uWS refuses the rest.
    const trailing = cloneDraft(soap);
    trailing.contentLength = ['0'];
    expect(kinds(trailing, uws(505))).toEqual([]);
    expect(kinds(trailing, answer(500, TEXT_XML, 'not xml'))).not.toEqual([]);
    // A head far over uWS's limit, still being sent when uWS answers and closes: a reset may
    // overtake the 431. A short one is read whole, so its answer arrives.
    const hugeHead = cloneDraft(get);
    hugeHead.path = `${get.path}&pad=${'w'.repeat(600 * 1024)}`;
    expect(kinds(hugeHead, { ...answer(0, null, ''), outcome: 'reset' })).toEqual([]);
    expect(kinds(hugeHead, { ...answer(0, null, ''), outcome: 'timeout' })).toEqual(['no answer (timeout)']);
    const longHead = cloneDraft(get);
    longHead.path = `${get.path}&pad=${'w'.repeat(5000)}`;
    expect(kinds(longHead, uws(431))).toEqual([]);
    expect(kinds(longHead, { ...answer(0, null, ''), outcome: 'reset' })).toEqual(['no answer (reset)']);
    // A request uWS parses gets the gateway's answer, never uWS's.
    expect(kinds(soap, uws(400))).toEqual(["uWS 400 to a request it documentedly parses"]);
    // The same status with another body is the gateway's, judged by the route's rules.
    expect(kinds(get, answer(400, PLAIN, 'Bad Request.\r\n'))).toEqual([]);
  });
});
