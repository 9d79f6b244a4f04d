/**
 * The envelope scanner (gateway/bindings/soap/scanner) against the saxes-based EnvelopeReader it
 * replaced: each XML feature and each error class on its own, chunking, reuse and charsets. The
 * fixed-seed differential campaigns are in scanner-campaign.embedded.test.ts.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidEncodingError } from '../../../../../../gateway/transport/body-decoder.js';
import { EnvelopeError, XmlSyntaxError, type SoapEnvelope } from '../../../../../../gateway/bindings/soap/envelope.js';
import { ScannerPool, SoapBodyReader } from '../../../../../../gateway/bindings/soap/scanner/body-reader.js';
import { isUtf8Label } from '../../../../../../gateway/bindings/soap/scanner/scanner.js';
import { EnvelopeScanner } from '../../../../../differential/reference/envelope-builder.js';
import { runReference } from '../../../../../differential/oracle.js';
import { REPO } from '../../../../../helpers/paths.js';

const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const NS = 'http://tempuri.org/';

/** An envelope around `body` (the Body's content), with optional prolog. */
function env(body: string, prolog = '', ns = SOAP11): string {
  return `${prolog}<soap:Envelope xmlns:soap="${ns}"><soap:Body>${body}</soap:Body></soap:Envelope>`;
}

function scanChunks(chunks: readonly Uint8Array[]): SoapEnvelope {
  const s = new EnvelopeScanner();
  s.reset({ bom: true, stopOnForeignEncoding: false });
  for (const c of chunks) s.write(c);
  return s.end();
}

function scan(xml: string | Uint8Array): SoapEnvelope {
  return scanChunks([typeof xml === 'string' ? Buffer.from(xml, 'utf8') : xml]);
}

/** Every byte its own chunk. */
function scanBytewise(xml: string | Uint8Array): SoapEnvelope {
  const b = typeof xml === 'string' ? Buffer.from(xml, 'utf8') : xml;
  return scanChunks([...b].map((x) => Uint8Array.of(x)));
}

function reference(xml: string | Uint8Array): SoapEnvelope | Error {
  const outcome = runReference(typeof xml === 'string' ? Buffer.from(xml, 'utf8') : xml, []);
  return outcome.accepted ? outcome.envelope : new Error(`${outcome.error}: ${outcome.message}`);
}

/** The reference's refusal as text (as `String` makes it of the Error); fails the test when the reference accepted. */
function referenceRefusal(xml: string | Uint8Array): string {
  const outcome = reference(xml);
  if (!(outcome instanceof Error)) throw new Error('expected the reference to refuse the document');
  return String(outcome);
}

/** The scanner's error, checked to be an XmlSyntaxError that says line:column. */
function syntaxError(xml: string | Uint8Array): string {
  let caught: unknown;
  try {
    scan(xml);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(XmlSyntaxError);
  const message = (caught as Error).message;
  expect(message).toMatch(/^\d+:\d+: /);
  return message;
}

function params(e: SoapEnvelope): Record<string, string | null> {
  return Object.fromEntries((e.operation?.children ?? []).map((n) => [n.name, n.text]));
}

describe('isUtf8Label: the charset and encoding labels read as UTF-8', () => {
  it("takes TextDecoder's UTF-8 labels in any case, trimmed and unquoted, and nothing else", () => {
    for (const label of ['utf-8', 'UTF-8', 'Utf-8', ' utf8 ', '"UTF-8"', 'unicode-1-1-utf-8', 'X-Unicode20UTF8']) expect(isUtf8Label(label)).toBe(true);
    for (const label of ['', 'utf-16', 'UTF-16LE', 'iso-8859-1', 'utf-8x', 'utf_8', '"utf-8']) expect(isUtf8Label(label)).toBe(label === '"utf-8');
  });
});

describe('scanner: XML features', () => {
  const op = (inner: string) => env(`<Login xmlns="${NS}">${inner}</Login>`);

  it('reads the bench fixture like the reference, whole, in two chunks and byte by byte', async () => {
    const { readFileSync } = await import('node:fs');
    const fixture = readFileSync(path.join(REPO, 'bench/fixtures/login-y-insertar-evento.soap11.xml'));
    const expected = reference(fixture);
    expect(scan(fixture)).toEqual(expected);
    expect(scanChunks([fixture.subarray(0, 333), fixture.subarray(333)])).toEqual(expected);
    expect(scanBytewise(fixture)).toEqual(expected);
    expect(params(scan(fixture))['Password']).toBe('s3cr3t&pass');
  });

  it('resolves the predefined entities and character references (decimal, hex, astral)', () => {
    const e = scan(op('<SystemUser>&amp;&lt;&gt;&quot;&apos;|&#65;&#x42;&#x1F600;&#0000233;</SystemUser>'));
    expect(params(e)['SystemUser']).toBe(`&<>"'|AB😀é`);
  });

  it('keeps CDATA as text, comments and PIs out of it, and normalizes CR LF and CR to LF', () => {
    const e = scan(op('<SystemUser>a<![CDATA[<&>]]]]><![CDATA[>]]>b<!-- c --><?p i?>c\r\nd\re</SystemUser>'));
    expect(params(e)['SystemUser']).toBe('a<&>]]>bc\nd\ne');
  });

  it('takes any prefix for the Envelope and Body, and the operation namespace from the op or the Envelope', () => {
    const a = scan(`<e:Envelope xmlns:e="${SOAP12}" xmlns:t="${NS}"><b:Body><t:Login><t:SystemUser>x</t:SystemUser></t:Login></b:Body></e:Envelope>`);
    expect(a).toEqual({ version: '1.2', operation: { name: 'Login', namespace: NS, children: [{ name: 'SystemUser', text: 'x', children: [] }] } });
    const b = scan(`<Envelope xmlns="${SOAP11}"><Body><Login xmlns="urn:own"/></Body></Envelope>`);
    expect(b.operation).toEqual({ name: 'Login', namespace: 'urn:own', children: [] });
  });

  it('xsi:nil under any prefix gives null text; nil="false" does not', () => {
    const e = scan(op('<A i:nil="true"/><B nil=" 1 "/><C q:nil="false">t</C><D a="1" x:y:nil="true">ignored</D>'));
    expect(params(e)).toEqual({ A: null, B: null, C: 't', D: null });
  });

  it('normalizes white space in attribute values (it matters for namespaces and nil)', () => {
    const e = scan(env(`<Login xmlns="urn:a&#x20;b\tc\r\nd"><A nil="&#x20;true"/></Login>`));
    expect(e.operation?.namespace).toBe('urn:a b c d');
    expect(params(e)['A']).toBeNull();
  });

  it('skips headers, keeps only the first Body child, and stops keeping below depth 6', () => {
    const e = scan(
      `<s:Envelope xmlns:s="${SOAP11}"><s:Header><Login><SystemUser>h</SystemUser></Login></s:Header><s:Body>` +
        `<Login><E><i><f>v<g>deep</g></f></i></E></Login><Logout/></s:Body></s:Envelope>`,
    );
    expect(e.operation).toEqual({
      name: 'Login',
      namespace: '',
      children: [{ name: 'E', text: '', children: [{ name: 'i', text: '', children: [{ name: 'f', text: 'v', children: [] }] }] }],
    });
  });

  it('accepts the XML declaration, a BOM, comments, PIs and white space around the root', () => {
    const body = `\uFEFF<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n<!-- a --><?pi x?>\n${op('<SystemUser>x</SystemUser>')}<!-- z -->\n`;
    expect(params(scan(body))).toEqual({ SystemUser: 'x' });
    expect(scanBytewise(body)).toEqual(scan(body));
  });

  it('XML 1.0 keeps NEL and LS as characters; a declared 1.1 makes them line ends and allows &#1;', () => {
    const v10 = scan(op('<SystemUser>a\u0085b\u2028c\r\u0085d</SystemUser>'));
    expect(params(v10)['SystemUser']).toBe('a\u0085b\u2028c\n\u0085d');
    const xml11 = `<?xml version="1.1"?>${op('<SystemUser>a\u0085b\u2028c\r\u0085d&#1;</SystemUser>')}`;
    expect(params(scan(xml11))['SystemUser']).toBe('a\nb\nc\nd\u0001');
    expect(scan(xml11)).toEqual(reference(xml11));
  });

  it('keeps multi-byte characters whole across any chunk split', () => {
    const xml = op('<SystemUser>ñ€😀中</SystemUser>');
    expect(params(scanBytewise(xml))['SystemUser']).toBe('ñ€😀中');
  });

  it('is reusable after an error (pooled scanners are reset)', () => {
    const s = new EnvelopeScanner();
    s.reset({ bom: true, stopOnForeignEncoding: false });
    expect(() => s.write(Buffer.from(`<soap:Envelope xmlns:soap="${SOAP11}"><b></soap:Envelope>`))).toThrow(XmlSyntaxError);
    s.reset({ bom: true, stopOnForeignEncoding: false });
    s.write(Buffer.from(op('<SystemUser>ok</SystemUser>')));
    expect(params(s.end())).toEqual({ SystemUser: 'ok' });
  });

  it('reads a large CDATA value arriving one byte at a time', () => {
    const big = 'x'.repeat(50_000);
    expect(params(scanBytewise(op(`<SystemUser><![CDATA[${big}]]></SystemUser>`)))['SystemUser']).toBe(big);
  });
});

describe('scanner: errors', () => {
  it.each([
    ['mismatched end tag', env('<Login></Logout>'), /unexpected close tag/],
    ['unclosed element', `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body>`, /unclosed tag: soap:Body|unexpected end/],
    ['two roots', `${env('')}<x/>`, /only one root/],
    ['text before the root', `x${env('')}`, /text data outside of root node/],
    ['undefined entity', env('<A>&xxe;</A>'), /undefined entity/],
    ['malformed character reference', env('<A>&#xD800;</A>'), /malformed character entity/],
    ['reference to U+0000', env('<A>&#0;</A>'), /malformed character entity/],
    ['uppercase X in a hex reference', env('<A>&#X41;</A>'), /malformed character entity/],
    ['"]]>" in text', env('<A>a]]>b</A>'), /"]]>" is disallowed/],
    ['"<" in an attribute value', env('<A b="<"/>'), /disallowed character/],
    ['duplicate attribute', env('<A b="1" b="2"/>'), /duplicate attribute: b/],
    ['attribute without value', env('<A b/>'), /attribute without value/],
    ['unquoted attribute value', env('<A b=1/>'), /unquoted attribute value/],
    ['no white space between attributes', env('<A b="1"c="2"/>'), /no whitespace between attributes/],
    ['a name starting with a digit', env('<1A/>'), /disallowed character in tag name/],
    ['"--" inside a comment', env('<!-- a -- b -->'), /malformed comment/],
    ['a control character', env('<A>\u0001</A>'), /disallowed character/],
    ['U+FFFF', env('<A>\uFFFF</A>'), /disallowed character/],
    ['C1 control in XML 1.1', `<?xml version="1.1"?>${env('<A>\u0086</A>')}`, /disallowed character/],
    ['XML declaration not at the start', ` <?xml version="1.0"?>${env('')}`, /XML declaration must be at the start/],
    ['XML declaration without version', `<?xml encoding="utf-8"?>${env('')}`, /expected version/],
    ['bad standalone value', `<?xml version="1.0" standalone="maybe"?>${env('')}`, /standalone value/],
    ['a version other than 1.x', `<?xml version="2.0"?>${env('')}`, /version number must match/],
    ['1.0 with a letter after it', `<?xml version="1.0a"?>${env('')}`, /version number must match/],
    ['an encoding name starting with a digit', `<?xml version="1.0" encoding="8bit"?>${env('')}`, /encoding value must match/],
    ['utf-8 after an underscore', `<?xml version="1.0" encoding="_utf-8"?>${env('')}`, /encoding value must match/],
    ['PI target xml in another case', `${env('')}<?XML x?>`, /reserved/],
    ['CDATA outside the root', `<![CDATA[x]]>${env('')}`, /text data outside of root node/],
    ['a second BOM (content, not a signature)', Buffer.from(`\uFEFF\uFEFF${env('')}`, 'utf8'), /text data outside of root node/],
    ['empty body', '', /document must contain a root element/],
    ['unbound Envelope prefix', `<soap:Envelope><soap:Body/></soap:Envelope>`, /unbound namespace prefix: "soap"/],
  ])('%s: XmlSyntaxError with line:column', (_name, xml, expected) => {
    expect(syntaxError(xml)).toMatch(expected);
    expect(reference(xml)).toBeInstanceOf(Error);
  });

  it('refuses any DOCTYPE with the DTD message, before reading it', () => {
    expect(syntaxError(`<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "v">]>${env('')}`)).toMatch(/^1:30: DTD is prohibited in this XML document\.$/);
    expect(syntaxError(`<!DOCTYPE x SYSTEM "http://127.0.0.1:1/evil.dtd"><x/>`)).toContain('DTD is prohibited in this XML document.');
  });

  it('says where it broke: line and column (in characters) of the offending character', () => {
    expect(syntaxError(`<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><Login></soap:Body></soap:Envelope>`)).toBe('1:100: unexpected close tag.');
    const xml = `<s:Envelope xmlns:s="${SOAP11}">\r\n  <b>é</c>\n</s:Envelope>`;
    expect(syntaxError(xml)).toBe('2:10: unexpected close tag.');
    const split = Buffer.from(xml);
    expect(() => scanChunks([split.subarray(0, 50), split.subarray(50, 55), split.subarray(55)])).toThrow('2:10: unexpected close tag.');
  });

  it.each([
    ['a lone continuation byte', [0x80]],
    ['an overlong encoding', [0xc0, 0xaf]],
    ['a UTF-16 surrogate', [0xed, 0xa0, 0x80]],
    ['beyond U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ['a sequence cut by the end of the body', [0xe2, 0x82]],
  ])('invalid UTF-8 (%s) is the body decoder\'s InvalidEncodingError, saying where, even split byte by byte', (name, bad) => {
    const head = Buffer.from(`<soap:Envelope xmlns:soap="${SOAP11}">\n<soap:Body><A>x`);
    const tail = Buffer.from(name.includes('cut') ? '' : '</A></soap:Body></soap:Envelope>');
    const body = Buffer.concat([head, Uint8Array.from(bad), tail]);
    const where = `Invalid character in the given encoding (utf-8), line 2, column 16 (byte ${head.length + 1} of the body).`;
    expect(() => scan(body)).toThrow(InvalidEncodingError);
    expect(() => scan(body)).toThrow(where);
    expect(() => scanBytewise(body)).toThrow(where);
  });

  it('bytes that are not UTF-8 where markup was expected are an encoding error, not a syntax error', () => {
    for (const xml of [[0x3c, 0xff], [0x3c, 0x61, 0x20, 0xc3, 0x28, 0x3e], [0x3c, 0x3f, 0x78, 0x6d, 0x6c, 0x20, 0xe2, 0x28]]) {
      expect(() => scan(Uint8Array.from(xml))).toThrow(InvalidEncodingError);
    }
  });

  it.each([
    ['a root that is not Envelope', `<Envelop xmlns="${SOAP11}"><Body/></Envelop>`, 'VersionMismatch', `The root element Envelop is not a SOAP Envelope.`],
    ['a foreign Envelope namespace', `<e:Envelope xmlns:e="urn:nope"><e:Body/></e:Envelope>`, 'VersionMismatch', `Possible SOAP version mismatch: Envelope namespace urn:nope was unexpected. Expecting ${SOAP11}.`],
    ['no Body', `<soap:Envelope xmlns:soap="${SOAP11}"><soap:Header/></soap:Envelope>`, 'Client', 'The SOAP message has no Body element.'],
  ])('%s: EnvelopeError %s with the ASMX fault text', (_name, xml, kind, message) => {
    let caught: unknown;
    try {
      scan(xml);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(EnvelopeError);
    expect((caught as EnvelopeError).kind).toBe(kind);
    expect((caught as EnvelopeError).message).toBe(message);
  });

  it('a syntax error in the root start tag wins over the version check (as in saxes)', () => {
    expect(syntaxError(`<e:Envelope xmlns:e="urn:nope" a="1" a="2"><e:Body/></e:Envelope>`)).toMatch(/duplicate attribute/);
  });

  it('documented difference: a PI target followed by "?" but not "?>" is refused (saxes accepts it)', () => {
    const xml = `${env('')}<?pi?x?>`;
    expect(syntaxError(xml)).toMatch(/target must be followed by white space or "\?>"/);
    expect(reference(xml)).not.toBeInstanceOf(Error);
    // Before the root, the same difference shows as a syntax error where saxes goes on to the root.
    expect(syntaxError('<?i??><e e="">')).toMatch(/target must be followed by white space or "\?>"/);
    expect(referenceRefusal('<?i??><e e="">')).toContain('EnvelopeError:VersionMismatch');
  });

  it('documented difference: the first error in the document wins over bad bytes after it (saxes looks ahead)', () => {
    const body = Buffer.concat([Buffer.from(env('<A>&#12x')), Uint8Array.of(0xff), Buffer.from(';</A>')]);
    expect(syntaxError(body)).toMatch(/malformed character entity/);
    expect(referenceRefusal(body)).toContain('InvalidEncodingError');
  });
});

describe('SoapBodyReader: charsets', () => {
  const pool = new ScannerPool(() => new EnvelopeScanner());
  const login = env(`<Login xmlns="${NS}"><SystemUser>Señal</SystemUser></Login>`);
  const read = (charset: string | null, chunks: readonly Uint8Array[]) => {
    const r = new SoapBodyReader(charset, pool);
    chunks.forEach((c, i) => r.push(c, i === chunks.length - 1));
    return params(r.end())['SystemUser'];
  };

  it('UTF-8 by header, by declaration, by BOM, or by default', () => {
    const utf8 = Buffer.from(login, 'utf8');
    expect(read('utf-8', [utf8])).toBe('Señal');
    expect(read('UTF8', [utf8])).toBe('Señal');
    expect(read(null, [Buffer.from(`<?xml version="1.0" encoding="utf-8"?>${login}`, 'utf8')])).toBe('Señal');
    expect(read(null, [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8])])).toBe('Señal');
    expect(read(null, [utf8])).toBe('Señal');
  });

  it('ISO-8859-1 by header, or by declaration (also when the declaration is split across chunks)', () => {
    expect(read('ISO-8859-1', [Buffer.from(login, 'latin1')])).toBe('Señal');
    const declared = Buffer.from(`<?xml version="1.0" encoding="ISO-8859-1"?>${login}`, 'latin1');
    expect(read(null, [declared])).toBe('Señal');
    expect(read(null, [...declared].map((b) => Uint8Array.of(b)))).toBe('Señal');
    expect(read(null, [declared.subarray(0, 30), declared.subarray(30, 200), declared.subarray(200)])).toBe('Señal');
  });

  it('the header charset wins over the declaration; UTF-16 goes through the decoder', () => {
    expect(read('utf-8', [Buffer.from(`<?xml version="1.0" encoding="ISO-8859-1"?>${login}`, 'utf8')])).toBe('Señal');
    expect(read('utf-16le', [Buffer.from(login, 'utf16le')])).toBe('Señal');
  });

  it('latin1 bytes sent as UTF-8 are refused (invalid UTF-8), not decoded with replacement characters', () => {
    expect(() => read('utf-8', [Buffer.from(login, 'latin1')])).toThrow(InvalidEncodingError);
    expect(() => read(null, [Buffer.from(login, 'latin1')])).toThrow(InvalidEncodingError);
  });

  it('an unknown encoding in the XML declaration is refused as by the body decoder (415 in the binding)', () => {
    expect(() => read(null, [Buffer.from(`<?xml version="1.0" encoding="x-klingon"?>${login}`, 'latin1')])).toThrow(/Unsupported charset/);
  });
});
