/**
 * Mutations of everything around the body: form fields and their percent-encoding, headers
 * (Content-Type and charset, SOAPAction, Cookie, Host), method, path and query string, and the
 * HTTP framing itself (Content-Length, chunked, version), which puts a case on a connection
 * of its own.
 */
import { operationList } from '../../shared/catalogue/index.js';
import { INSERT_FAMILY } from './oracle.js';
import { NS, SERVICE_PATH, type Draft } from './corpus.js';
import type { Rng } from './prng.js';
import { extremeFor, hostileString, hugeLength } from './values.js';

const OP_NAMES = operationList.map((o) => o.name);
const TYPE_OF = new Map<string, string>();
for (const op of operationList) for (const p of op.params) if (typeof p.type === 'string') TYPE_OF.set(p.name, p.type);

/** Percent-encoding that goes wrong in every way clients get it wrong. */
const BAD_ESCAPES = ['%zz', '%', '%4', '%E9', '%ED%A0%80', '%C0%BC', '%FF', '%00', '%0D%0A', '%EF%BF%BE', '%F4%90%80%80', '+', '%2B', '&', '=', '%25zz', '\u00e9', '\u00ff'];

function encodeValue(rng: Rng, text: string): string {
  // Mostly proper UTF-8 percent-encoding; sometimes ISO-8859-1 bytes as a legacy client sends them.
  if (rng.chance(0.85)) return encodeURIComponent(text.replace(/[\ud800-\udfff]/g, '\ufffd'));
  return Buffer.from(text, 'latin1').toString('hex').toUpperCase().replace(/../g, '%$&');
}

export function mutateForm(rng: Rng, d: Draft): string {
  const form = d.form;
  if (form === null) return 'form.none';
  if (INSERT_FAMILY.has(d.op ?? '') && rng.chance(0.3)) {
    // An event's date or number at the edge of what the stores can hold (the -3 / -5 boundary).
    const fields = form.filter(([k]) => TYPE_OF.get(k) === 'dateTime' || TYPE_OF.get(k) === 'double');
    if (fields.length > 0) {
      const f = rng.pick(fields);
      f[1] = encodeValue(rng, extremeFor(rng, TYPE_OF.get(f[0])!));
    }
    return 'form.event-extreme';
  }
  const i = form.length > 0 ? rng.int(form.length) : -1;
  const field = i >= 0 ? form[i]! : null;
  switch (rng.int(9)) {
    case 0:
      if (field) field[1] = encodeValue(rng, extremeFor(rng, TYPE_OF.get(field[0]) ?? 'string'));
      return 'form.extreme-value';
    case 1:
      if (field) field[1] = `${field[1]}${rng.pick(BAD_ESCAPES)}`;
      return 'form.bad-escape';
    case 2:
      if (i >= 0) form.splice(i, 1);
      return 'form.drop';
    case 3:
      if (field) form.splice(i, 0, [field[0], encodeValue(rng, hostileString(rng))]);
      return 'form.duplicate';
    case 4:
      if (field) field[0] = rng.pick([field[0].toLowerCase(), `${field[0]}%00`, '', 'a%zz', field[0].toUpperCase()]);
      return 'form.rename';
    case 5:
      form.push([rng.pick(['Extra', 'Rumbo', 'Crudo', '', '%FF']), encodeValue(rng, hostileString(rng))]);
      return 'form.unknown-field';
    case 6:
      if (field) field[1] = encodeValue(rng, 'w'.repeat(hugeLength(rng)));
      return 'form.huge-value';
    case 7:
      if (field) field[1] = rng.pick(['', '=', '%20', '+', '%09', '&&', '%26']);
      return 'form.odd-value';
    default:
      form.reverse();
      return 'form.reorder';
  }
}

function setHeader(d: Draft, name: string, value: string | null): void {
  d.headers = d.headers.filter(([k]) => k.toLowerCase() !== name.toLowerCase());
  if (value !== null) d.headers.push([name, value]);
}

const CONTENT_TYPES = [
  'text/xml',
  'text/xml; charset=utf-8',
  'TEXT/XML; CHARSET=UTF-8',
  'application/soap+xml',
  `application/soap+xml; charset=utf-8; action="${NS}Login"`,
  'application/soap+xml; action=',
  'application/xml',
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=iso-8859-1',
  'application/json',
  'text/plain',
  'multipart/form-data; boundary=x',
  ';;;',
  '',
  'text/xml; charset=',
  'text/xml; charset=x-unknown',
  'text/xml; charset="utf-8"; charset=latin1',
  'text/xml ; charset = utf-8',
  'text/xml; charset=utf-16',
  'text/xml\u00e9',
];

const SOAP_ACTIONS = (op: string, other: string): string[] => [
  '',
  '""',
  `${NS}${op}`,
  `"${NS}${other}"`,
  `"${NS}Unknown"`,
  `"http://example.com/${op}"`,
  `"${op}"`,
  encodeURIComponent(`${NS}${op}`),
  `"${NS}%zz"`,
  `"${NS}${op}`,
  `"${'a'.repeat(8000)}"`,
  '"\u00e9"',
];

export function mutateHeaders(rng: Rng, d: Draft): string {
  switch (rng.int(7)) {
    case 0:
      setHeader(d, 'Content-Type', rng.chance(0.15) ? null : rng.pick(CONTENT_TYPES));
      return 'hdr.content-type';
    case 1:
      setHeader(d, 'SOAPAction', rng.chance(0.15) ? null : rng.pick(SOAP_ACTIONS(d.op ?? 'Login', rng.pick(OP_NAMES))));
      return 'hdr.soapaction';
    case 2:
      setHeader(
        d,
        'Cookie',
        rng.pick([
          null,
          'ASP.NET_SessionId=',
          'ASP.NET_SessionId=aaaaaaaaaaaaaaaaaaaaaaaa',
          'ASP.NET_SessionId={session}; ASP.NET_SessionId=zzzzzzzzzzzzzzzzzzzzzzzz',
          'a=b; ASP.NET_SessionId={session}',
          'ASP.NET_SessionId=%zz',
          `x=${'c'.repeat(8000)}`,
          ';;;=;',
          'ASP.NET_SessionId={spare}',
          'ASP.NET_SessionId="{session}"',
        ]),
      );
      return 'hdr.cookie';
    case 3:
      setHeader(d, 'Host', rng.pick([null, '"<>&\'', 'a'.repeat(4000), 'example.com:99999', '[::1]:80', 'h\u00e9', '{host}/x?y#z']));
      return 'hdr.host';
    case 4:
      d.headers.push([rng.pick(['X-Fuzz', 'Accept', 'Accept-Encoding', 'Expect', 'Content-Encoding', 'Connection']), rng.pick(['gzip', 'keep-alive', '100-continue', '*/*', 'x'.repeat(2000), ''])]);
      return 'hdr.extra';
    case 5: {
      const ct = d.headers.find(([k]) => k === 'Content-Type');
      if (ct) d.headers.push(['Content-Type', rng.pick(CONTENT_TYPES)]);
      return 'hdr.duplicate-content-type';
    }
    default:
      for (const h of d.headers) if (rng.chance(0.5)) h[0] = rng.chance(0.5) ? h[0].toLowerCase() : h[0].toUpperCase();
      return 'hdr.name-case';
  }
}

export function mutateTarget(rng: Rng, d: Draft): string {
  switch (rng.int(4)) {
    case 0: {
      const method = rng.pick(['post', 'get', 'Post', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'FOO', 'GET', 'POST']);
      // A method uWS may not know, or HEAD (no body in the answer), gets a connection of its own.
      if (method !== 'GET' && method !== 'POST') d.dedicated = true;
      d.method = method;
      return 'target.method';
    }
    case 1: {
      const op = d.op ?? rng.pick(OP_NAMES);
      d.path = rng.pick([
        SERVICE_PATH.toUpperCase(),
        `${SERVICE_PATH}/`,
        `/Service.Asmx/${op}`,
        `${SERVICE_PATH}/${op}/extra`,
        `${SERVICE_PATH}/${op.toLowerCase()}`,
        `${SERVICE_PATH}/%zz`,
        `${SERVICE_PATH}/${op}%zz`,
        `${SERVICE_PATH}/%`,
        `${SERVICE_PATH}/${encodeURIComponent(op).replace(/n/, '%6E')}`,
        `${SERVICE_PATH}/%C3%91`,
        `${SERVICE_PATH}/%ED%A0%80`,
        `${SERVICE_PATH}/%00`,
        `/%73ervice.asmx/${op}`,
        `${SERVICE_PATH}%2F${op}`,
        `/${SERVICE_PATH}`,
        `${SERVICE_PATH}/../service.asmx/${op}`,
        `${SERVICE_PATH};x=1`,
        '/other',
        '/',
        `${SERVICE_PATH}/${'a'.repeat(6000)}`,
        `${SERVICE_PATH}/${op}/`,
      ]);
      return 'target.path';
    }
    case 2:
      d.query = rng.pick(['wsdl', 'WSDL', 'disco', 'op=%zz', 'op=', 'op=%ED%A0%80', 'op=<script>', `op=${rng.pick(OP_NAMES)}&x`, '&&&', 'a=%', '=', 'wsdl&x=1', '', '%zz=1', `x=${'q'.repeat(6000)}`]);
      return 'target.query';
    default:
      if (d.query !== null || d.form !== null) {
        const base = d.query ?? (d.form ?? []).map(([k, v]) => `${k}=${v}`).join('&');
        d.query = `${base}${rng.pick(['&', '&SystemUser=other', '&SystemUser=%zz', '%', '&=&', '#frag', '&Codigo=%FF'])}`;
      }
      return 'target.query-append';
  }
}

/** Content-Length games, chunked bodies and HTTP versions: framing the server must survive. */
export function mutateFraming(rng: Rng, d: Draft): string {
  const wasDedicated = d.dedicated;
  d.dedicated = true;
  switch (rng.int(4)) {
    case 0: {
      const n = d.body?.length ?? 0;
      d.contentLength = rng.pick([[`${n}`, `${n}`], [`${n}`, `${Math.max(0, n - 1)}`], [`${Math.max(0, n - 10)}`], ['abc'], ['-1'], [`+${n}`], ['0x10'], [` ${n} `], ['99999999999'], ['0'], [`${n},${n}`]]);
      return 'frame.content-length';
    }
    case 1:
      d.chunked = true;
      // Valid chunked framing may share a keep-alive connection; chunked plus Content-Length may not.
      if (rng.chance(0.5)) d.contentLength = [`${d.body?.length ?? 0}`];
      else d.dedicated = wasDedicated;
      return 'frame.chunked';
    case 2:
      d.version = rng.pick(['HTTP/1.0', 'HTTP/1.2', 'HTTP/2.0', 'http/1.1']);
      return 'frame.version';
    default:
      if (d.method === 'GET' || d.method === 'HEAD') {
        d.body = Buffer.from('SystemUser=acme&Password=secret-1');
        d.contentLength = [`${d.body.length}`];
      }
      return 'frame.get-with-body';
  }
}
