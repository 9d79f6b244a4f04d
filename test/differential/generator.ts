/**
 * A grammar-based generator of SOAP request envelopes: both versions, every operation of the
 * catalogue with random values, written in the many ways clients and XML allow (declarations,
 * BOM, any prefix, namespaces declared on different elements, entity and character references,
 * CDATA, comments, PIs, CR/LF/TAB, xsi:nil under any prefix, attributes, unknown and deeply
 * nested elements, arrays). Mostly well-formed, with a few SOAP-level oddities (no Body, a second
 * Body, a foreign Envelope namespace); the mutator breaks the rest.
 */
import { isArrayParam, operationList, type ComplexType, type OperationDef, type ScalarType } from '../../shared/catalogue/index.js';
import type { Rng } from './rng.js';

const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
const TEMPURI = 'http://tempuri.org/';

interface Style {
  /** Between elements: '' (compact) or a line end plus indentation. */
  newline: string;
  indent: string;
  quote: '"' | "'";
  /** How often text gets decorated (references, CDATA, comments...). */
  decoration: number;
  xml11: boolean;
}

export function generateEnvelope(rng: Rng): Uint8Array {
  const style: Style = {
    newline: rng.pick(['', '', '\n', '\r\n', '\n', '\r']),
    indent: rng.pick(['', '  ', '\t', '    ']),
    quote: rng.chance(0.8) ? '"' : "'",
    decoration: rng.pick([0, 0.05, 0.2, 0.5]),
    xml11: false,
  };
  const parts: string[] = [];
  const decl = declaration(rng, style);
  parts.push(decl);
  parts.push(misc(rng, style, 0.2));
  parts.push(envelope(rng, style));
  parts.push(misc(rng, style, 0.15));
  const text = parts.join('');
  const bytes = Buffer.from(text, 'utf8');
  return rng.chance(0.05) ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]) : bytes;
}

function q(style: Style, value: string): string {
  return `${style.quote}${value}${style.quote}`;
}

function declaration(rng: Rng, style: Style): string {
  if (rng.chance(0.35)) return '';
  const version = rng.chance(0.06) ? rng.pick(['1.1', '1.10', '1.00']) : '1.0';
  style.xml11 = version !== '1.0';
  const sp = () => rng.pick([' ', ' ', '  ', '\t', '\n']);
  let d = `<?xml${sp()}version${rng.pick(['=', ' = ', '= '])}${q(style, version)}`;
  if (rng.chance(0.7)) d += `${sp()}encoding=${q(style, rng.pick(['utf-8', 'UTF-8', 'utf8', 'Utf-8']))}`;
  if (rng.chance(0.15)) d += `${sp()}standalone=${q(style, rng.pick(['yes', 'no']))}`;
  return `${d}${rng.pick(['', ' ', '\n'])}?>${rng.pick(['', '', '\n', '\r\n'])}`;
}

/** Comments, PIs and white space, allowed before and after the root. */
function misc(rng: Rng, style: Style, p: number): string {
  let out = '';
  while (rng.chance(p)) {
    out += rng.pick([
      `<!--${commentText(rng)}-->`,
      `<?pi-${rng.int(9)}${rng.chance(0.5) ? ` ${piText(rng)}` : ''}?>`,
      `<?xml-stylesheet href="a.xsl"?>`,
      style.newline || '\n',
      ' \t',
    ]);
  }
  return out;
}

function commentText(rng: Rng): string {
  return rng.pick(['', ' c ', ' <x> & ]]> ', ' a-b ', ' ñ € 😀 ', '\r\n', ' - ']);
}

function piText(rng: Rng): string {
  return rng.pick(['data', 'a="1" b=\'2\'', '<&>?', ' x ', 'é?']);
}

function envelope(rng: Rng, style: Style): string {
  const version = rng.chance(0.5) ? SOAP11 : SOAP12;
  const envNs = rng.chance(0.02) ? rng.pick(['urn:other', '', SOAP11.slice(0, -1)]) : version;
  const prefix = rng.pick(['soap', 'soap', 's', 'SOAP-ENV', 'soapenv', 'env', '', 'ns0', 'é', 'a.b', 'x_1', 'S12']);
  const el = (local: string) => (prefix === '' ? local : `${prefix}:${local}`);
  const rootName = rng.chance(0.01) ? el(rng.pick(['Envelop', 'envelope', 'Body'])) : el('Envelope');
  const opNsPrefix = rng.pick(['tns', 'm', 'ns1', '']);
  const opNsWhere = rng.pick(['op', 'op', 'root', 'body', 'none'] as const);
  const attrs: string[] = [];
  if (!rng.chance(0.01)) attrs.push(prefix === '' ? `xmlns=${q(style, envNs)}` : `xmlns:${prefix}=${q(style, envNs)}`);
  if (rng.chance(0.5)) attrs.push(`xmlns:${rng.pick(['xsi', 'i', 'p3'])}=${q(style, XSI)}`);
  if (rng.chance(0.3)) attrs.push(`xmlns:xsd=${q(style, 'http://www.w3.org/2001/XMLSchema')}`);
  if (opNsWhere === 'root' && opNsPrefix !== '') attrs.push(`xmlns:${opNsPrefix}=${q(style, namespaceText(rng))}`);
  if (opNsWhere === 'root' && opNsPrefix === '' && prefix !== '') attrs.push(`xmlns=${q(style, TEMPURI)}`);
  if (rng.chance(0.05)) attrs.push(`encodingStyle=${q(style, attrText(rng))}`);
  shuffle(rng, attrs);
  const nl = style.newline;
  const ind = (depth: number) => (nl === '' ? '' : style.indent.repeat(depth));
  let out = `<${rootName}${attrs.map((a) => `${attrSpace(rng)}${a}`).join('')}${rng.pick(['', ' ', '\n'])}>${nl}`;
  if (rng.chance(0.3)) out += `${ind(1)}<${el('Header')}>${header(rng, style)}</${el('Header')}>${nl}`;
  if (rng.chance(0.01)) out += `${ind(1)}<Extra>x</Extra>${nl}`;
  const bodies = rng.chance(0.02) ? 0 : rng.chance(0.02) ? 2 : 1;
  for (let b = 0; b < bodies; b++) {
    const bodyName = rng.chance(0.05) ? rng.pick(['Body', 'b:Body', `${prefix}:Body`]) : el('Body');
    const bodyAttrs = opNsWhere === 'body' ? ` xmlns${opNsPrefix === '' ? '' : `:${opNsPrefix}`}=${q(style, TEMPURI)}` : '';
    if (rng.chance(0.03)) {
      out += `${ind(1)}<${bodyName}${bodyAttrs}/>${nl}`;
      continue;
    }
    out += `${ind(1)}<${bodyName}${bodyAttrs}>${nl}`;
    const ops = rng.chance(0.05) ? 2 : rng.chance(0.03) ? 0 : 1;
    for (let k = 0; k < ops; k++) out += operation(rng, style, opNsPrefix, opNsWhere === 'op');
    out += `${ind(1)}</${bodyName}>${nl}`;
  }
  return `${out}</${rootName}>`;
}

function attrSpace(rng: Rng): string {
  return rng.pick([' ', ' ', ' ', '\n  ', '\t', '\r\n ']);
}

function header(rng: Rng, style: Style): string {
  let out = '';
  const n = rng.int(3);
  for (let k = 0; k < n; k++) {
    out += `<h:Trace xmlns:h="urn:trace"${rng.chance(0.3) ? ` s:mustUnderstand="1"` : ''}><h:Id>${text(rng, style)}</h:Id>${rng.chance(0.3) ? '<h:Deep><a><b><c><d>x</d></c></b></a></h:Deep>' : ''}</h:Trace>`;
  }
  return out;
}

function operation(rng: Rng, style: Style, nsPrefix: string, declareOnOp: boolean): string {
  const op = rng.chance(0.03) ? null : rng.pick(operationList);
  const name = op?.name ?? rng.pick(['Frobnicate', 'login', 'LoginYInsertarEventoX']);
  const qname = nsPrefix === '' ? name : `${nsPrefix}:${name}`;
  const decl = declareOnOp ? ` xmlns${nsPrefix === '' ? '' : `:${nsPrefix}`}=${q(style, namespaceText(rng))}` : '';
  const nl = style.newline;
  const ind = (depth: number) => (nl === '' ? '' : style.indent.repeat(depth));
  if (rng.chance(0.03)) return `${ind(2)}<${qname}${decl}/>${nl}`;
  let out = `${ind(2)}<${qname}${decl}>${nl}`;
  const childPrefix = rng.chance(0.2) && nsPrefix !== '' ? `${nsPrefix}:` : '';
  for (const child of params(rng, style, op, childPrefix)) out += `${ind(3)}${child}${nl}`;
  return `${out}${ind(2)}</${qname}>${nl}`;
}

function params(rng: Rng, style: Style, op: OperationDef | null, prefix: string): string[] {
  const out: string[] = [];
  for (const p of op?.params ?? []) {
    if (rng.chance(0.08)) continue;
    const n = rng.chance(0.03) ? 2 : 1;
    for (let k = 0; k < n; k++) {
      if (isArrayParam(p)) out.push(arrayElement(rng, style, prefix + p.name, p.type.item));
      else out.push(scalarElement(rng, style, prefix + p.name, p.type));
    }
  }
  if (rng.chance(0.15)) out.push(scalarElement(rng, style, rng.pick(['Rumbo', 'Extra', 'x:Y', 'SystemUserX']), 'string'));
  if (rng.chance(0.05)) out.push('<Nested><a><b><c><d><e>deep</e></d></c></b></a></Nested>');
  shuffle(rng, out);
  return out;
}

function arrayElement(rng: Rng, style: Style, name: string, item: ComplexType | ScalarType): string {
  if (rng.chance(0.05)) return nilElement(rng, style, name);
  let inner = '';
  const count = rng.chance(0.1) ? 0 : rng.range(1, 4);
  for (let k = 0; k < count; k++) {
    if (typeof item === 'string') inner += scalarElement(rng, style, 'int', item);
    else {
      const itemName = rng.chance(0.05) ? 'Otro' : item.name;
      let fields = '';
      for (const f of item.fields) if (!rng.chance(0.05)) fields += scalarElement(rng, style, f.name, f.type);
      if (rng.chance(0.05)) fields += '<Deeper><x><y>z</y></x></Deeper>';
      inner += `<${itemName}${attributes(rng, style)}>${fields}</${itemName}>`;
    }
  }
  return `<${name}${attributes(rng, style)}>${inner}</${name}>`;
}

function scalarElement(rng: Rng, style: Style, name: string, type: ScalarType): string {
  if (rng.chance(0.04)) return nilElement(rng, style, name);
  if (rng.chance(0.03)) return `<${name}${attributes(rng, style)}/>`;
  return `<${name}${attributes(rng, style)}>${decorate(rng, style, value(rng, type))}</${name}>`;
}

function nilElement(rng: Rng, style: Style, name: string): string {
  const attr = `${rng.pick(['xsi:', 'i:', 'p3:', '', 'a:b:'])}nil=${q(style, rng.pick(['true', 'true', '1', 'false', ' true ', '0', '\ttrue\r\n', '&#x20;1', 'true\u0085', '\u2028true']))}`;
  const extra = rng.chance(0.2) ? ` other=${q(style, 'x')}` : '';
  const order = rng.chance(0.5) ? `${extra} ${attr}` : ` ${attr}${extra}`;
  return rng.chance(0.7) ? `<${name}${order}/>` : `<${name}${order}>${text(rng, style)}<c>1</c></${name}>`;
}

function attributes(rng: Rng, style: Style): string {
  if (!rng.chance(0.1)) return '';
  return rng.pick([
    ` xsi:type=${q(style, 'xsd:string')}`,
    ` a=${q(style, attrText(rng))}`,
    ` a=${q(style, '1')} b=${q(style, attrText(rng))}`,
    ` xmlns=${q(style, TEMPURI)}`,
  ]);
}

/** An operation namespace: usually tempuri, sometimes written with what attribute-value normalization changes. */
function namespaceText(rng: Rng): string {
  if (rng.chance(0.85)) return TEMPURI;
  return rng.pick(['urn:other', '', 'urn:a&#x20;b', 'urn:a\tb\r\nc', 'urn:\u0085x\u2028', 'urn:&#x85;&#9;', 'urn:&lt;&amp;', ' urn:sp ', 'urn:\r\u0085']);
}

function attrText(rng: Rng): string {
  return rng.pick(['x', '', 'a &amp; b', '&lt;&gt;&quot;&apos;', 'tab\there', 'line\nbreak', 'cr\r\nlf', '&#x20AC;&#10;', 'é ñ', ']]>', '>']);
}

function value(rng: Rng, type: ScalarType): string {
  switch (type) {
    case 'string':
      return text0(rng);
    case 'int':
      return rng.pick(['0', '1', '-1', '42', '2147483647', '-2147483648', '2147483648', ' 7 ', '+3', '1.5', 'abc', '', '007', '１']);
    case 'double':
      return rng.pick(['0', '-34.6037221', '1e3', '1E-2', 'NaN', 'INF', '-INF', ' 5 ', '1,5', 'x', '', '.5', '-0']);
    case 'boolean':
      return rng.pick(['true', 'false', '1', '0', 'True', ' true ', 'yes', '']);
    case 'dateTime':
      return rng.pick([
        '2026-03-14T15:09:26.535-03:00',
        '2026-11-22T12:00:00Z',
        '2026-11-22T12:00:00.1234567+00:00',
        '2026-11-22 12:00:00',
        '2026-02-30T00:00:00',
        'not a date',
        '',
      ]);
  }
}

function text0(rng: Rng): string {
  return rng.pick(['acme', 'secret-1', 'AB123CD', 'SN-1', 'prestador01', '', 'ñandú', '€uro', '😀', '中文', 'a b', 'x'.repeat(rng.int(40))]);
}

/** A value written with the XML devices that must not change it: references, CDATA, comments, PIs. */
function decorate(rng: Rng, style: Style, raw: string): string {
  let out = '';
  for (const ch of raw) {
    if (!rng.chance(style.decoration)) {
      out += escapeChar(ch);
      continue;
    }
    const cp = ch.codePointAt(0)!;
    out += rng.pick([
      `&#${cp};`,
      `&#x${cp.toString(16)};`,
      `&#x${cp.toString(16).toUpperCase()};`,
      `&#000${cp};`,
      `<![CDATA[${ch}]]>`,
      `${escapeChar(ch)}<!--c-->`,
      `${escapeChar(ch)}<?p x?>`,
      `${escapeChar(ch)}${rng.pick(['&amp;', '&lt;', '&gt;', '&quot;', '&apos;', '&#x1F600;', '&#233;'])}`,
      `${escapeChar(ch)}${rng.pick(['\r\n', '\r', '\t', ' ', ']]', ']', '>', '<![CDATA[]]]]>', '<![CDATA[<&>]]>'])}`,
      style.xml11 ? `${escapeChar(ch)}\u0085\u2028&#x85;&#1;` : `${escapeChar(ch)}\u0085\u2028`,
      `${escapeChar(ch)}${rng.pick(['\u0080', '\u009f', '\u007f', '\r\u0085', '\uFFFD', '\uFDD0', '\u{10FFFF}'])}`,
    ]);
  }
  return out;
}

function escapeChar(ch: string): string {
  return ch === '&' ? '&amp;' : ch === '<' ? '&lt;' : ch;
}

function text(rng: Rng, style: Style): string {
  return decorate(rng, style, text0(rng));
}

function shuffle(rng: Rng, items: unknown[]): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [items[i], items[j]] = [items[j], items[i]];
  }
}
