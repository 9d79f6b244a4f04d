/**
 * The documented answers (docs/protocol.md): for the route a request takes, the statuses it may get
 * and the shape of each; every XML answer well-formed XML 1.0; every answer arriving; no insert
 * ever answering -5 on a healthy backend; never "An internal error occurred".
 */
import { SaxesParser } from 'saxes';
import { operationList } from '../../shared/catalogue/index.js';
import { header, type Answer } from './client.js';
import { NS, SERVICE_PATH, SOAP11, SOAP12, type Draft } from './corpus.js';
import { UWS_REFUSALS } from '../helpers/uws-refusals.js';

export interface Violation {
  /** Stable name for grouping (no per-case details). */
  kind: string;
  detail: string;
}

export type Route = 'soap' | 'metadata' | 'http' | 'method-not-allowed' | 'not-found';

const BASE = SERVICE_PATH.toLowerCase();
const OPERATIONS = new Set(operationList.map((o) => o.name));
export const INSERT_FAMILY = new Set(['InsertarEvento', 'LoginYInsertarEvento', 'LoginYInsertarEvento2', 'LoginYInsertarEventos']);
/** Result codes an insert may answer on a healthy backend; -5 is "backend unavailable". */
const NEGATIVE_CODES = new Set([-1, -2, -3, -4, -6]);
const INTERNAL_ERROR = 'An internal error occurred';
const TEXT_PLAIN = 'text/plain; charset=utf-8';
const SOAP_TYPES: Record<string, string> = { 'text/xml; charset=utf-8': SOAP11, 'application/soap+xml; charset=utf-8': SOAP12 };
const BARE_ROOTS = new Set(['boolean', 'int', 'Comando', 'ArrayOfVehiculo']);

/** Where the documented routing sends a request (docs/protocol.md §Routing), by method and raw path. */
export function routeOf(d: Pick<Draft, 'method' | 'path'>): Route {
  const path = d.path.toLowerCase();
  // The gateway reads the method case-insensitively.
  const method = d.method.toUpperCase();
  if (path === BASE || path === `${BASE}/`) {
    if (method === 'POST') return 'soap';
    return method === 'GET' || method === 'HEAD' ? 'metadata' : 'method-not-allowed';
  }
  // HEAD on {path}/Op is ASMX's "Request format is unrecognized" 500, headers only (protocol.md §Routing).
  if (path.startsWith(`${BASE}/`)) return method === 'GET' || method === 'POST' || method === 'HEAD' ? 'http' : 'method-not-allowed';
  return 'not-found';
}

interface XmlNode {
  name: string;
  local: string;
  uri: string;
  text: string;
  children: XmlNode[];
}

/** Parses a whole document: the root, or the first well-formedness error. */
function parseXml(text: string): { root: XmlNode | null; error: string | null } {
  const parser = new SaxesParser({ xmlns: true, position: false });
  const stack: XmlNode[] = [];
  let root: XmlNode | null = null;
  let error: string | null = null;
  parser.on('error', (e) => {
    error ??= e.message;
  });
  parser.on('opentag', (t) => {
    const node: XmlNode = { name: t.name, local: t.local, uri: t.uri, text: '', children: [] };
    if (stack.length > 0) stack[stack.length - 1]!.children.push(node);
    else root ??= node;
    stack.push(node);
  });
  parser.on('text', (t) => {
    if (stack.length > 0) stack[stack.length - 1]!.text += t;
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  try {
    parser.write(text).close();
  } catch (e) {
    error ??= e instanceof Error ? e.message : String(e);
  }
  return { root, error };
}

/** Characters XML 1.0 cannot carry, whatever a parser lets through. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NON_XML_CHAR = /[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function decodeUtf8(body: Buffer, v: Violation[], what: string): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    v.push({ kind: `${what}: body is not valid UTF-8`, detail: body.subarray(0, 200).toString('latin1') });
    return null;
  }
}

function checkXml(body: Buffer, v: Violation[], what: string): XmlNode | null {
  const text = decodeUtf8(body, v, what);
  if (text === null) return null;
  const bad = NON_XML_CHAR.exec(text);
  if (bad) {
    const at = bad.index;
    v.push({ kind: `${what}: character not allowed in XML 1.0`, detail: `U+${bad[0].charCodeAt(0).toString(16).padStart(4, '0')} at ${at}: ${JSON.stringify(text.slice(Math.max(0, at - 80), at + 40))}` });
  }
  const { root, error } = parseXml(text);
  if (error !== null) v.push({ kind: `${what}: not well-formed XML`, detail: `${error}: ${text.slice(0, 300)}` });
  return error === null ? root : null;
}

function checkCode(text: string, v: Violation[], where: string): void {
  const t = text.trim();
  if (!/^-?\d+$/.test(t)) {
    v.push({ kind: `${where}: result is not an int`, detail: t.slice(0, 100) });
    return;
  }
  const n = Number(t);
  if (n === -5) v.push({ kind: `${where}: -5 on a healthy backend`, detail: t });
  else if (n <= 0 && !NEGATIVE_CODES.has(n)) v.push({ kind: `${where}: undocumented result code`, detail: t });
}

/** The charset a SOAP body declares: Content-Type (its last charset), else a BOM, else the XML declaration, else UTF-8. */
function declaredCharset(d: Draft): string {
  const ct = d.headers.find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? '';
  let charset = '';
  for (const param of ct.split(';').slice(1)) {
    const eq = param.indexOf('=');
    if (eq >= 0 && param.slice(0, eq).trim().toLowerCase() === 'charset') charset = param.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
  }
  const body = d.body ?? Buffer.alloc(0);
  if (charset === '' && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return 'utf-8';
  if (charset === '') charset = /^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(body.toString('latin1', 0, 256))?.[1] ?? 'utf-8';
  return charset.toLowerCase();
}

/** A body that is not valid UTF-8 although it says it is: documented as a 400 Client fault. */
function invalidUtf8(d: Draft): boolean {
  if (!/^utf-?8$/.test(declaredCharset(d))) return false;
  const body = d.body ?? Buffer.alloc(0);
  const start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(body.subarray(start));
    return false;
  } catch {
    return true;
  }
}

function checkSoap(d: Draft, a: Answer, v: Violation[]): void {
  const ct = header(a, 'content-type');
  if (a.status === 415) {
    if (a.body.length !== 0) v.push({ kind: 'soap 415: body not empty', detail: a.body.toString('latin1', 0, 200) });
    return;
  }
  if (a.status === 413) { checkPlain(a, v, 'soap 413'); return; }
  if (a.status !== 200 && a.status !== 500 && a.status !== 400) {
    v.push({ kind: `soap: undocumented status ${a.status}`, detail: `${ct} ${a.body.toString('latin1', 0, 200)}` });
    return;
  }
  const envNs = ct === null ? undefined : SOAP_TYPES[ct];
  if (envNs === undefined) {
    v.push({ kind: `soap ${a.status}: Content-Type ${ct} is not a SOAP type`, detail: a.body.toString('latin1', 0, 200) });
    return;
  }
  const root = checkXml(a.body, v, `soap ${a.status}`);
  if (root === null) return;
  const body = root.local === 'Envelope' && root.uri === envNs ? root.children.find((c) => c.local === 'Body' && c.uri === envNs) : undefined;
  const first = body?.children[0];
  if (first === undefined) {
    v.push({ kind: `soap ${a.status}: no Envelope/Body child in the Content-Type's SOAP version`, detail: a.body.toString('utf8', 0, 300) });
    return;
  }
  if (a.status === 200 && invalidUtf8(d)) v.push({ kind: 'soap 200: a body invalid in its declared UTF-8 was accepted (documented: 400 Client fault)', detail: '' });
  if (a.status === 200) { checkSoapResult(first, v); return; }
  if (first.local !== 'Fault') {
    v.push({ kind: `soap ${a.status}: not a Fault`, detail: first.name });
    return;
  }
  const code = envNs === SOAP11 ? first.children.find((c) => c.local === 'faultcode')?.text : first.children.find((c) => c.local === 'Code')?.children.find((c) => c.local === 'Value')?.text;
  const reason =
    envNs === SOAP11 ? first.children.find((c) => c.local === 'faultstring')?.text : first.children.find((c) => c.local === 'Reason')?.children.find((c) => c.local === 'Text')?.text;
  const allowed = a.status === 400 ? ['soap:Client', 'soap:Sender'] : ['soap:Client', 'soap:Sender', 'soap:VersionMismatch'];
  if (code === undefined || !allowed.includes(code)) v.push({ kind: `soap ${a.status}: fault code ${code ?? '(none)'}`, detail: reason ?? '' });
  if ((reason ?? '').includes(INTERNAL_ERROR)) v.push({ kind: `soap ${a.status}: internal error`, detail: reason ?? '' });
}

function checkSoapResult(response: XmlNode, v: Violation[]): void {
  const op = response.local.endsWith('Response') ? response.local.slice(0, -'Response'.length) : '';
  if (!OPERATIONS.has(op) || response.uri !== NS) {
    v.push({ kind: 'soap 200: body is not an operation response', detail: `${response.uri} ${response.name}` });
    return;
  }
  if (!INSERT_FAMILY.has(op)) return;
  const result = response.children.find((c) => c.local === `${op}Result`);
  if (result === undefined) {
    v.push({ kind: `soap 200 ${op}: no result element`, detail: '' });
    return;
  }
  if (op === 'LoginYInsertarEventos') for (const i of result.children) checkCode(i.text, v, `soap ${op}`);
  else checkCode(result.text, v, `soap ${op}`);
}

function checkPlain(a: Answer, v: Violation[], what: string): void {
  const ct = header(a, 'content-type');
  if (ct !== TEXT_PLAIN) v.push({ kind: `${what}: Content-Type ${ct}`, detail: a.body.toString('latin1', 0, 200) });
  const text = decodeUtf8(a.body, v, what);
  if (text === null) return;
  // The message and CRLF; an ArgumentException's message has a second CRLF line (protocol.md §Errors).
  if (!text.endsWith('\r\n') || /\r(?!\n)|(?<!\r)\n/.test(text)) v.push({ kind: `${what}: not lines ending in CRLF`, detail: JSON.stringify(text.slice(0, 200)) });
  if (text.includes(INTERNAL_ERROR)) v.push({ kind: `${what}: internal error`, detail: text.slice(0, 200) });
}

function checkHttp(d: Draft, a: Answer, v: Violation[]): void {
  if (a.status === 500 || a.status === 400 || a.status === 404 || a.status === 413) { checkPlain(a, v, `http ${a.status}`); return; }
  if (a.status !== 200) {
    v.push({ kind: `http: undocumented status ${a.status}`, detail: a.body.toString('latin1', 0, 200) });
    return;
  }
  const ct = header(a, 'content-type');
  if (ct !== 'text/xml; charset=utf-8') v.push({ kind: `http 200: Content-Type ${ct}`, detail: '' });
  const root = checkXml(a.body, v, 'http 200');
  if (root === null) return;
  if (!BARE_ROOTS.has(root.local) || root.uri !== NS) {
    v.push({ kind: 'http 200: root is not a documented result', detail: `${root.uri} ${root.name}` });
    return;
  }
  if (root.local === 'int') checkCode(root.text, v, `http ${d.path.slice(SERVICE_PATH.length + 1)}`);
}

function checkMetadata(d: Draft, a: Answer, v: Violation[]): void {
  if (a.status === 404 || a.status === 400) { checkPlain(a, v, `metadata ${a.status}`); return; }
  if (a.status !== 200) {
    v.push({ kind: `metadata: undocumented status ${a.status}`, detail: a.body.toString('latin1', 0, 200) });
    return;
  }
  const ct = header(a, 'content-type');
  if (ct === 'text/xml; charset=utf-8') checkXml(a.body, v, 'metadata xml');
  else if (ct === 'text/html; charset=utf-8') decodeUtf8(a.body, v, 'metadata html');
  else v.push({ kind: `metadata 200: Content-Type ${ct}`, detail: '' });
}

/**
 * uWebSockets.js's own answer, or null: the status line, `Connection: close` alone and the exact
 * HTML body (after a HEAD the client reads no body: the HTML counts as extra bytes).
 */
export function uwsAnswer(a: Answer, head = false): 400 | 431 | 505 | null {
  const known = UWS_REFUSALS[a.status as keyof typeof UWS_REFUSALS] as (typeof UWS_REFUSALS)[keyof typeof UWS_REFUSALS] | undefined;
  if (known === undefined) return null;
  const onlyClose = a.headers.length === 1 && a.headers[0]![0] === 'connection' && a.headers[0]![1] === 'close';
  const body = head ? a.body.length === 0 : a.body.toString('latin1') === known.body;
  return onlyClose && body ? (a.status as 400 | 431 | 505) : null;
}

/** The most uWS reads from a socket at once (uSockets' LIBUS_RECV_BUFFER_LENGTH). */
const UWS_ONE_READ_BYTES = 512 * 1024;

/**
 * Why uWebSockets.js refuses a request with an answer of its own before the gateway sees it, and
 * the statuses it may answer, as docs/running.md documents ("The edge in front"); null when the
 * request reaches the gateway. The edge (deploy/nginx) answers all of these in front, HTTP/1.0
 * served.
 */
export function uwsRefusal(d: Draft, request: Buffer): { why: string; statuses: readonly number[]; afterAnAnswer?: true; mayReset?: true } | null {
  const refusal = uwsRefusalOf(d, request);
  if (refusal === null) return null;
  // uWS answers and closes while a long request is still arriving: closing a socket with unread
  // bytes sends a TCP reset (RFC 2525 §2.17), which may overtake the answer. uWS does not drain
  // before closing as nginx's lingering close does; one read is at most 512 KiB
  // (LIBUS_RECV_BUFFER_LENGTH), so a shorter request is read whole and its answer arrives. Any of
  // its refusals: a huge head, or a small head it refuses (Content-Length with
  // Transfer-Encoding) in front of a 3 MB body (seed 20261122, case 15530).
  return request.length > UWS_ONE_READ_BYTES ? { ...refusal, mayReset: true } : refusal;
}

function uwsRefusalOf(d: Draft, request: Buffer): { why: string; statuses: readonly number[]; afterAnAnswer?: true } | null {
  const headEnd = request.indexOf('\r\n\r\n');
  if (headEnd < 0 || headEnd + 4 > 4096) return { why: 'head over 4,096 bytes', statuses: [431, 400, 505] };
  if (d.version !== 'HTTP/1.1') return { why: 'not HTTP/1.1', statuses: [505] };
  const head = request.toString('latin1', 0, headEnd);
  const lines = head.split('\r\n');
  if (lines.length - 1 > 98) return { why: 'more than 98 header lines', statuses: [431] };
  // A line that is not `name: value` (no colon, a space or control character in the name), or a
  // NUL or bare CR/LF in a value: uWS's parser stops there.
  // eslint-disable-next-line no-control-regex -- control characters are what is looked for
  if (lines.slice(1).some((l) => !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+:[^\x00\r\n]*$/.test(l))) return { why: 'a header line uWS cannot parse', statuses: [400, 505] };
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+ \S+ HTTP\/1\.1$/.test(lines[0]!)) return { why: 'a request line uWS cannot parse', statuses: [400, 505] };
  const hosts = d.headers.filter(([name]) => name.toLowerCase() === 'host').length;
  if (hosts !== 1) return { why: hosts === 0 ? 'no Host header' : 'Host twice', statuses: [400] };
  const lengths = d.contentLength ?? [];
  if (d.chunked && lengths.length > 0) return { why: 'Content-Length with Transfer-Encoding', statuses: [400] };
  if (lengths.length === 1 && !/^\s*\d{0,19}\s*$/.test(lengths[0]!)) return { why: 'a lone Content-Length that is not a number', statuses: [400] };
  // Bytes beyond the declared body are the next request to uWS (HTTP/1.1 pipelining): one it
  // cannot parse is refused, before or after the first request is answered.
  const sent = lines.filter((l) => /^content-length:/i.test(l)).map((l) => l.slice(l.indexOf(':') + 1).trim());
  const declared = d.chunked ? Number.POSITIVE_INFINITY : sent.length > 0 ? Number(sent[0] || '0') : 0;
  if (request.length - (headEnd + 4) > declared) return { why: 'bytes after the declared body (read as a next request)', statuses: [400, 431, 505], afterAnAnswer: true };
  return null;
}

/** Every documented-answer violation of one exchange (empty: the answer is as documented). */
export function check(d: Draft, a: Answer, request: Buffer): Violation[] {
  const v: Violation[] = [];
  if (a.outcome === 'reset' && uwsRefusal(d, request)?.mayReset === true) return v;
  if (a.outcome !== 'answered') {
    v.push({ kind: `no answer (${a.outcome})`, detail: `after ${Math.round(a.ms)} ms` });
    return v;
  }
  const refusal = uwsRefusal(d, request);
  const byUws = uwsAnswer(a, d.method.toUpperCase() === 'HEAD');
  // A first request answered before uWS refuses what follows it is judged as any answer.
  const answeredFirst = byUws === null && refusal?.afterAnAnswer === true;
  if ((byUws !== null || refusal !== null) && !answeredFirst) {
    if (refusal === null) v.push({ kind: `uWS ${a.status} to a request it documentedly parses`, detail: request.toString('latin1', 0, 200) });
    else if (byUws === null || !refusal.statuses.includes(byUws)) v.push({ kind: `${refusal.why}: not uWS's ${refusal.statuses.join('/')}`, detail: `${a.status} ${a.body.toString('latin1', 0, 120)}` });
    return v;
  }
  const route = routeOf(d);
  const lengths = new Set((d.contentLength ?? []).map((l) => l.trim()));
  if (lengths.size > 1) {
    // Framing that two parsers could read two ways (request smuggling): refused as a whole.
    if (a.status !== 400 || header(a, 'content-type') !== TEXT_PLAIN) v.push({ kind: 'conflicting Content-Length: not a 400 text/plain', detail: `${a.status} ${header(a, 'content-type')}` });
    return v;
  }
  if (d.method.toUpperCase() === 'HEAD') {
    // No content in an answer to HEAD (RFC 9110 §9.3.2); the status is the one GET would get.
    if (a.body.length > 0 || a.extraBytes > 0) v.push({ kind: `${route} HEAD: answer carries a body`, detail: `${a.extraBytes || a.body.length} bytes after the headers` });
    const allowed: Record<Route, number[]> = { metadata: [200, 400, 404], http: [500, 400], 'not-found': [404, 400], 'method-not-allowed': [405, 400], soap: [] };
    if (!allowed[route].includes(a.status)) v.push({ kind: `${route} HEAD: status ${a.status}`, detail: '' });
    return v;
  }
  // A request the server cannot frame or decode (bad %-escape, conflicting Content-Length) is a 400 text/plain on any route.
  if (a.status === 400 && header(a, 'content-type') === TEXT_PLAIN) {
    checkPlain(a, v, `${route} 400`);
    return v;
  }
  if (a.status === 413 && route !== 'soap') {
    checkPlain(a, v, `${route} 413`);
    return v;
  }
  switch (route) {
    case 'soap':
      checkSoap(d, a, v);
      break;
    case 'http':
      checkHttp(d, a, v);
      break;
    case 'metadata':
      checkMetadata(d, a, v);
      break;
    case 'method-not-allowed':
      if (a.status !== 405) v.push({ kind: `method ${d.method}: status ${a.status}, not 405`, detail: a.body.toString('latin1', 0, 200) });
      else checkPlain(a, v, 'method 405');
      break;
    case 'not-found':
      if (a.status !== 404) v.push({ kind: `unknown path: status ${a.status}, not 404`, detail: a.body.toString('latin1', 0, 200) });
      else checkPlain(a, v, 'path 404');
      break;
  }
  return v;
}
