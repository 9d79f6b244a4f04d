import type { ComplexType, OperationDef, ResultType, ScalarType } from '../../shared/catalogue/index.js';
import { escapeXmlAttr, escapeXmlText, stripInvalidXmlChars } from '../metadata/xml-escape.js';

/**
 * Result serialization, byte-exact with ASMX (docs/protocol.md §Writing responses): SOAP bodies on one line, the
 * HTTP GET/POST bare documents indented by two spaces with CRLF as XmlSerializer writes them.
 * Everything constant is rendered once per operation; a response is a few concatenations.
 */
export const XSI_NS = 'http://www.w3.org/2001/XMLSchema-instance';
export const XSD_NS = 'http://www.w3.org/2001/XMLSchema';
export const XML_DECL = '<?xml version="1.0" encoding="utf-8"?>';
const CRLF = '\r\n';

type Value = unknown;
type Fields = Readonly<Record<string, Value>>;

function scalarText(type: ScalarType, value: Value): string {
  switch (type) {
    case 'boolean':
      return value === true ? 'true' : 'false';
    case 'int':
    case 'double':
      return String(value);
    case 'string':
    case 'dateTime':
      // Whatever a stored string holds (an operator's command, an old row), the answer stays XML.
      return escapeXmlText(stripInvalidXmlChars(String(value)));
  }
}

function element(name: string, type: ScalarType, value: Value, nillable: boolean): string {
  if (value === null || value === undefined) return nillable ? `<${name} xsi:nil="true" />` : '';
  const text = scalarText(type, value);
  return text === '' ? `<${name} />` : `<${name}>${text}</${name}>`;
}

/** The children of a complex value, each on its own line when `indent` is given. */
function complexChildren(type: ComplexType, value: Fields, indent: string | null): string {
  let out = '';
  for (const f of type.fields) {
    const el = element(f.name, f.type, value[f.name], f.nillable === true);
    if (el === '') continue;
    out += indent === null ? el : `${CRLF}${indent}${el}`;
  }
  return out;
}

function arrayItems(result: Extract<ResultType, { kind: 'array' }>, items: readonly Value[], indent: string | null): string {
  const item = result.type.item;
  let out = '';
  for (const v of items) {
    const lead = indent === null ? '' : `${CRLF}${indent}`;
    if (typeof item === 'string') {
      out += lead + (v === null ? `<${item} xsi:nil="true" />` : `<${item}>${scalarText(item, v)}</${item}>`);
    } else if (v === null || v === undefined) {
      out += `${lead}<${item.name} xsi:nil="true" />`;
    } else {
      const inner = complexChildren(item, v as Fields, indent === null ? null : `${indent}  `);
      out += `${lead}<${item.name}>${inner}${indent === null ? '' : `${CRLF}${indent}`}</${item.name}>`;
    }
  }
  return out;
}

/** Writes `<OpResponse>` documents of one operation for SOAP 1.1 and 1.2 (same body). */
export class SoapResultWriter {
  private readonly open: string;
  private readonly close: string;
  private readonly empty: string;
  private readonly tag: string;

  constructor(
    private readonly op: OperationDef,
    namespace: string,
  ) {
    const ns = escapeXmlAttr(namespace);
    this.open = `<${op.name}Response xmlns="${ns}">`;
    this.close = `</${op.name}Response>`;
    this.empty = `<${op.name}Response xmlns="${ns}" />`;
    this.tag = `${op.name}Result`;
  }

  /** What a scalar result's Body content has before and after the value's text. */
  scalarParts(): { open: string; close: string } {
    return { open: `${this.open}<${this.tag}>`, close: `</${this.tag}>${this.close}` };
  }

  /** The Body content for a result value. */
  body(value: Value): string {
    const result = this.op.result;
    const tag = this.tag;
    switch (result.kind) {
      case 'scalar':
        return `${this.open}<${tag}>${scalarText(result.type, value)}</${tag}>${this.close}`;
      case 'complex':
        // A null class result has minOccurs=0 and is not nillable: the element is omitted.
        if (value === null || value === undefined) return this.empty;
        return `${this.open}<${tag}>${complexChildren(result.type, value as Fields, null)}</${tag}>${this.close}`;
      case 'array': {
        if (value === null || value === undefined) return this.empty;
        const items = value as readonly Value[];
        if (items.length === 0) return `${this.open}<${tag} />${this.close}`;
        return `${this.open}<${tag}>${arrayItems(result, items, null)}</${tag}>${this.close}`;
      }
    }
  }
}

/** Writes the bare XML documents of the HTTP GET/POST bindings for one operation. */
export class BareResultWriter {
  private readonly ns: string;

  constructor(
    private readonly op: OperationDef,
    namespace: string,
  ) {
    this.ns = escapeXmlAttr(namespace);
  }

  document(value: Value): string {
    const result = this.op.result;
    const root = result.name;
    const classAttrs = `xmlns:xsi="${XSI_NS}" xmlns:xsd="${XSD_NS}" xmlns="${this.ns}"`;
    switch (result.kind) {
      case 'scalar':
        return `${XML_DECL}${CRLF}<${root} xmlns="${this.ns}">${scalarText(result.type, value)}</${root}>`;
      case 'complex':
        // XmlSerializer writes its default declarations (xsi, then xsd) on every root, the nil one too.
        if (value === null || value === undefined) {
          return `${XML_DECL}${CRLF}<${root} xmlns:xsi="${XSI_NS}" xmlns:xsd="${XSD_NS}" xsi:nil="true" xmlns="${this.ns}" />`;
        }
        return `${XML_DECL}${CRLF}<${root} ${classAttrs}>${complexChildren(result.type, value as Fields, '  ')}${CRLF}</${root}>`;
      case 'array': {
        const items = (value ?? []) as readonly Value[];
        if (items.length === 0) return `${XML_DECL}${CRLF}<${root} ${classAttrs} />`;
        return `${XML_DECL}${CRLF}<${root} ${classAttrs}>${arrayItems(result, items, '  ')}${CRLF}</${root}>`;
      }
    }
  }
}
