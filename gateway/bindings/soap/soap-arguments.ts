import {
  isArrayParam,
  type ArgumentBag,
  type ComplexType,
  type OperationDef,
  type ScalarField,
  type ScalarType,
} from '../../../shared/catalogue/index.js';
import { parseBoolean, parseDouble, parseInt32 } from '../../../shared/xsd/values.js';
import { parseXmlDateTime } from '../../../shared/xsd/xml-convert.js';
import { converterOf, readScalar, InvalidValueError, type Converter, type DecodedCall, type ScalarReaders, type Today } from '../arguments.js';
import type { XmlNode } from './envelope.js';

/**
 * SOAP arguments from the operation element's children, read as XmlSerializer reads them
 * (XmlConvert: a dateTime in any XML Schema date/time form). Kept leniencies (docs/protocol.md
 * §Value conversion): booleans in any case, a space for the T in a dateTime. This is the
 * interpreted reading, kept as the reference of the compiled one (compiled/); both use the
 * conversions below.
 */

/** Value of a missing SOAP element (XmlSerializer defaults). */
export function soapDefault(type: ScalarType): unknown {
  switch (type) {
    case 'string':
    case 'dateTime':
      return null;
    case 'int':
    case 'double':
      return 0;
    case 'boolean':
      return false;
  }
}

const SPACE_FOR_T = { spaceForT: true } as const;

const readString: Converter = (text) => text;
const readDouble: Converter = (text) => parseDouble(text);
const readDateTime: Converter = (text, today) => ({ text, parsed: parseXmlDateTime(text, today, SPACE_FOR_T) });

function readInt(name: string, text: string): number {
  const n = parseInt32(text);
  if (n === undefined) throw new InvalidValueError(name, text, 'int');
  return n;
}

function readBoolean(name: string, text: string): boolean {
  const b = parseBoolean(text);
  if (b === undefined) throw new InvalidValueError(name, text, 'boolean');
  return b;
}

const SOAP_READERS: ScalarReaders = { string: readString, double: readDouble, dateTime: readDateTime, int: readInt, boolean: readBoolean };

/** XmlSerializer's reading of `field`, chosen once (the compiled path keeps one per parameter and item field). */
export function soapConverter(field: ScalarField): Converter {
  return converterOf(field, SOAP_READERS);
}

/** XmlSerializer's reading of a SOAP element's text. */
function soapValue(field: ScalarField, text: string, today: Today): unknown {
  return readScalar(field, text, today, SOAP_READERS);
}

function soapScalar(field: ScalarField, node: XmlNode | undefined, today: Today): unknown {
  if (node === undefined || node.text === null) return soapDefault(field.type);
  return soapValue(field, node.text, today);
}

function indexByName(nodes: readonly XmlNode[]): Map<string, XmlNode> {
  const map = new Map<string, XmlNode>();
  for (const n of nodes) if (!map.has(n.name)) map.set(n.name, n);
  return map;
}

function soapComplex(type: ComplexType, node: XmlNode, today: Today): ArgumentBag {
  const fields = indexByName(node.children);
  const value: ArgumentBag = {};
  for (const f of type.fields) value[f.name] = soapScalar(f, fields.get(f.name), today);
  return value;
}

export function decodeSoapArguments(op: OperationDef, children: readonly XmlNode[], today: Today): DecodedCall {
  const byName = indexByName(children);
  const args: ArgumentBag = {};
  for (const p of op.params) {
    const node = byName.get(p.name);
    if (!isArrayParam(p)) {
      args[p.name] = soapScalar(p, node, today);
      continue;
    }
    if (node === undefined || node.text === null) {
      args[p.name] = null;
      continue;
    }
    const item = p.type.item;
    args[p.name] =
      typeof item === 'string'
        ? node.children.map((c) => soapScalar({ name: p.name, type: item }, c, today))
        : node.children.filter((c) => c.name === item.name).map((c) => soapComplex(item, c, today));
  }
  const extras = new Map<string, string>();
  for (const [name, node] of byName) {
    if (!(name in args) && node.text !== null && node.children.length === 0) extras.set(name, node.text);
  }
  return { args, extras };
}
