/**
 * The seed corpus: one valid, realistic request for every operation in every binding it
 * supports (SOAP 1.1, SOAP 1.2, HTTP GET, HTTP POST form), plus the metadata pages. Seeds are
 * built from the operation catalogue, so a new operation joins the fuzzer by itself.
 *
 * A seed is a Draft: a structured request (envelope parameters or form fields, headers, method,
 * path) that the mutators change before `serialize` turns it into bytes.
 */
import { isArrayParam, operationList, type OperationDef, type Param, type ScalarField } from '../../shared/catalogue/index.js';
import { SAMPLE_EVENT } from '../helpers/client-event.js';

export const NS = 'http://tempuri.org/';
export const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
export const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
export const SERVICE_PATH = '/service.asmx';
export const DECLARATION = '<?xml version="1.0" encoding="utf-8"?>';

/** The fuzzed providers (created by the runner with these passwords). */
export const FUZZ_USER = 'acme';
export const FUZZ_PASSWORD = 'secret-1';

export type Binding = 'soap11' | 'soap12' | 'get' | 'post' | 'meta';

/** An element of the SOAP operation element. `text` is escaped when rendered; `raw` is not. */
export interface XmlElement {
  name: string;
  prefix?: string;
  attrs?: string;
  text?: string;
  raw?: string;
  children?: XmlElement[];
}

export interface SoapDraft {
  envelopeNs: string;
  prefix: string;
  declaration: string | null;
  /** Raw markup inside <Header>, or null for no Header element. */
  header: string | null;
  opName: string;
  opNs: string;
  params: XmlElement[];
  /** How the text is encoded into bytes (independent of what is declared: mismatches are a mutation). */
  charset: 'utf8' | 'latin1' | 'utf16le' | 'utf16be';
  bom: boolean;
  /** Raw text after the closing Envelope tag. */
  trailer: string;
}

export interface Draft {
  seed: string;
  binding: Binding;
  op: string | null;
  method: string;
  version: string;
  path: string;
  /** null: no `?` at all. GET binding drafts build it from `form`. */
  query: string | null;
  /** Host first; `{session}` / `{spare}` in values are replaced by live session ids. */
  headers: [string, string][];
  /** Explicit Content-Length header values; null: the real body length. */
  contentLength: string[] | null;
  chunked: boolean;
  soap: SoapDraft | null;
  /** Form fields, name and value already percent-encoded (mutations may break the encoding). */
  form: [string, string][] | null;
  /** Body bytes once rendered; byte mutations act on them. */
  body: Buffer | null;
  /** Framing is unusual: send on a connection of its own and read only the first answer. */
  dedicated: boolean;
}

/** Realistic values by parameter name; anything else by type. */
const VALUES: Record<string, string> = {
  SystemUser: FUZZ_USER,
  Password: FUZZ_PASSWORD,
  AntiguaClave: FUZZ_PASSWORD,
  NuevaClave: FUZZ_PASSWORD,
  ...SAMPLE_EVENT,
  Rumbo: '180',
  Crudo: '$GPRMC,115930,A,3436.2233,S,05822.8942,W,22.9,180.0,221126,,*1C',
  NUMERO: '1',
  correcto: 'true',
  MSG: 'sent to device',
  Valido: 'true',
  Clave: 'temp',
  Valor: '21.5',
};

const BY_TYPE: Record<string, string> = { string: 'x', int: '1', double: '1.5', boolean: 'true', dateTime: '2026-11-22T09:00:00Z' };

export function valueFor(field: Pick<ScalarField, 'name' | 'type'>): string {
  return VALUES[field.name] ?? BY_TYPE[field.type] ?? '';
}

function scalarElements(fields: readonly ScalarField[], variant: number): XmlElement[] {
  return fields.map((f) => {
    let text = valueFor(f);
    if (f.name === 'Codigo') text = String(variant);
    return { name: f.name, text };
  });
}

function paramElements(op: OperationDef): XmlElement[] {
  return op.params.map((p: Param): XmlElement => {
    if (!isArrayParam(p)) return { name: p.name, text: valueFor(p) };
    const item = p.type.item;
    const count = p.name === 'Eventos' ? 3 : 2;
    const children: XmlElement[] = [];
    for (let i = 0; i < count; i++) {
      if (typeof item === 'string') children.push({ name: item, text: BY_TYPE[item] ?? '' });
      else children.push({ name: item.name, children: scalarElements(item.fields, i + 1) });
    }
    return { name: p.name, children };
  });
}

function sessionCookie(op: OperationDef): [string, string][] {
  if (op.authentication === 'session') return [['Cookie', 'ASP.NET_SessionId={session}']];
  // Logout would end the session every session-bound seed shares: it gets a spare one.
  if (op.name === 'Logout' || op.name === 'InSession') return [['Cookie', 'ASP.NET_SessionId={spare}']];
  return [];
}

const HOST: [string, string] = ['Host', '{host}'];

function baseDraft(seed: string, binding: Binding, op: string | null, method: string, path: string): Draft {
  return { seed, binding, op, method, version: 'HTTP/1.1', path, query: null, headers: [HOST], contentLength: null, chunked: false, soap: null, form: null, body: null, dedicated: false };
}

function soapSeed(op: OperationDef, version: '1.1' | '1.2'): Draft {
  const binding = version === '1.1' ? 'soap11' : 'soap12';
  const d = baseDraft(`${binding}:${op.name}`, binding, op.name, 'POST', SERVICE_PATH);
  d.headers.push(
    ...(version === '1.1'
      ? ([
          ['Content-Type', 'text/xml; charset=utf-8'],
          ['SOAPAction', `"${NS}${op.name}"`],
        ] as [string, string][])
      : ([['Content-Type', 'application/soap+xml; charset=utf-8']] as [string, string][])),
    ...sessionCookie(op),
  );
  d.soap = {
    envelopeNs: version === '1.1' ? SOAP11 : SOAP12,
    prefix: version === '1.1' ? 'soap' : 'soap12',
    declaration: DECLARATION,
    header: null,
    opName: op.name,
    opNs: NS,
    params: paramElements(op),
    charset: 'utf8',
    bom: false,
    trailer: '',
  };
  return d;
}

function formFields(op: OperationDef): [string, string][] {
  return op.params.filter((p) => !isArrayParam(p)).map((p) => [p.name, encodeURIComponent(valueFor(p as ScalarField))]);
}

function httpSeed(op: OperationDef, method: 'GET' | 'POST'): Draft {
  const binding = method === 'GET' ? 'get' : 'post';
  const d = baseDraft(`${binding}:${op.name}`, binding, op.name, method, `${SERVICE_PATH}/${op.name}`);
  d.form = formFields(op);
  if (method === 'POST') d.headers.push(['Content-Type', 'application/x-www-form-urlencoded']);
  d.headers.push(...sessionCookie(op));
  return d;
}

function metaSeed(name: string, method: string, query: string | null): Draft {
  const d = baseDraft(`meta:${name}`, 'meta', null, method, SERVICE_PATH);
  d.query = query;
  if (method === 'HEAD') d.dedicated = true;
  return d;
}

/** Every seed, in a fixed order (case generation picks from it by index). */
export function buildCorpus(): readonly Draft[] {
  const seeds: Draft[] = [];
  for (const op of operationList) {
    seeds.push(soapSeed(op, '1.1'), soapSeed(op, '1.2'));
    if (op.params.every((p) => !isArrayParam(p))) seeds.push(httpSeed(op, 'GET'), httpSeed(op, 'POST'));
  }
  seeds.push(metaSeed('help', 'GET', null), metaSeed('wsdl', 'GET', 'wsdl'), metaSeed('WSDL', 'GET', 'WSDL'), metaSeed('disco', 'GET', 'disco'));
  seeds.push(metaSeed('head-wsdl', 'HEAD', 'wsdl'));
  for (const op of operationList) seeds.push(metaSeed(`op=${op.name}`, 'GET', `op=${op.name}`));
  return seeds;
}

/** A deep copy, so mutations never touch the corpus. */
export function cloneDraft(d: Draft): Draft {
  return structuredClone(d);
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };

export function escapeXml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => XML_ESCAPES[c]!);
}

export function renderElement(e: XmlElement): string {
  const tag = e.prefix ? `${e.prefix}:${e.name}` : e.name;
  const attrs = e.attrs ? ` ${e.attrs}` : '';
  const inner = e.raw ?? (e.children ? e.children.map(renderElement).join('') : escapeXml(e.text ?? ''));
  return `<${tag}${attrs}>${inner}</${tag}>`;
}

export function renderSoapText(s: SoapDraft): string {
  const p = s.prefix;
  const header = s.header === null ? '' : `<${p}:Header>${s.header}</${p}:Header>`;
  const body = `<${s.opName} xmlns="${s.opNs}">${s.params.map(renderElement).join('')}</${s.opName}>`;
  return `${s.declaration ?? ''}<${p}:Envelope xmlns:${p}="${s.envelopeNs}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">${header}<${p}:Body>${body}</${p}:Body></${p}:Envelope>${s.trailer}`;
}

export function encodeText(text: string, charset: SoapDraft['charset'], bom: boolean): Buffer {
  switch (charset) {
    case 'utf8':
      return Buffer.concat([bom ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0), Buffer.from(text, 'utf8')]);
    case 'latin1':
      return Buffer.from(text, 'latin1');
    case 'utf16le':
      return Buffer.concat([bom ? Buffer.from([0xff, 0xfe]) : Buffer.alloc(0), Buffer.from(text, 'utf16le')]);
    case 'utf16be': {
      const le = Buffer.from(text, 'utf16le');
      return Buffer.concat([bom ? Buffer.from([0xfe, 0xff]) : Buffer.alloc(0), le.swap16()]);
    }
  }
}

/** Fills `body` (and the GET query) from the structure, unless a mutation already set raw bytes. */
export function renderBody(d: Draft): void {
  if (d.binding === 'get' && d.form !== null && d.query === null) d.query = d.form.map(([k, v]) => `${k}=${v}`).join('&');
  if (d.body !== null) return;
  if (d.soap !== null) d.body = encodeText(renderSoapText(d.soap), d.soap.charset, d.soap.bom);
  else if (d.binding === 'post' && d.form !== null) d.body = Buffer.from(d.form.map(([k, v]) => `${k}=${v}`).join('&'), 'latin1');
}

export interface LiveContext {
  host: string;
  session: string;
  spare: string;
}

/** The exact bytes sent for a draft (its body rendered first). */
export function serialize(d: Draft, ctx: LiveContext): Buffer {
  renderBody(d);
  const fill = (v: string): string => v.replaceAll('{host}', ctx.host).replaceAll('{session}', ctx.session).replaceAll('{spare}', ctx.spare);
  const target = d.query === null ? d.path : `${d.path}?${d.query}`;
  const lines = [`${d.method} ${target} ${d.version}`];
  for (const [k, v] of d.headers) lines.push(`${k}: ${fill(v)}`);
  const body = d.body ?? Buffer.alloc(0);
  let payload = body;
  if (d.chunked) {
    lines.push('Transfer-Encoding: chunked');
    const parts: Buffer[] = [];
    for (let i = 0; i < body.length; i += 1000) {
      const piece = body.subarray(i, i + 1000);
      parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
    }
    parts.push(Buffer.from('0\r\n\r\n'));
    payload = Buffer.concat(parts);
  }
  if (d.contentLength !== null) for (const v of d.contentLength) lines.push(`Content-Length: ${v}`);
  else if (!d.chunked && (body.length > 0 || d.method === 'POST')) lines.push(`Content-Length: ${body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
}
