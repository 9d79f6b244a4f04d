import {
  isArrayParam,
  type ArgumentBag,
  type ComplexType,
  type OperationDef,
  type ScalarField,
  type ScalarType,
} from '../../shared/catalogue/index.js';
import { parseBoolean, parseDouble, parseInt32, readDateTime } from '../../shared/xsd/values.js';
import type { XmlNode } from '../soap/envelope-reader.js';

/**
 * Turns what a binding read (SOAP elements or form fields) into typed handler arguments,
 * following the catalogue. Leniency rules (docs/protocol.md §Reading requests): parameters by local name in any order,
 * unknown ones ignored (but kept as `extras`, so an event keeps e.g. a Rumbo its operation
 * lacks), missing ones defaulted. Doubles and dates never fault here: an unreadable one makes
 * the event invalid (-3) later. An unreadable int or boolean is the caller's error.
 */
export interface DecodedCall {
  args: ArgumentBag;
  /** Top-level fields the operation does not declare, by name, as text. */
  extras: ReadonlyMap<string, string>;
}

export class InvalidValueError extends Error {
  constructor(
    readonly param: string,
    readonly text: string,
    readonly type: ScalarType,
  ) {
    super(`Input string '${text}' for ${param} was not in a correct format.`);
  }
}

export class MissingParameterError extends Error {
  constructor(readonly param: string) {
    super(`Missing parameter: ${param}.`);
  }
}

/** Value of a missing SOAP element (XmlSerializer defaults). */
function soapDefault(type: ScalarType): unknown {
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

function readScalar(field: ScalarField, text: string): unknown {
  switch (field.type) {
    case 'string':
      return text;
    case 'double':
      return parseDouble(text);
    case 'dateTime':
      return readDateTime(text);
    case 'int': {
      const n = parseInt32(text);
      if (n === undefined) throw new InvalidValueError(field.name, text, 'int');
      return n;
    }
    case 'boolean': {
      const b = parseBoolean(text);
      if (b === undefined) throw new InvalidValueError(field.name, text, 'boolean');
      return b;
    }
  }
}

function soapScalar(field: ScalarField, node: XmlNode | undefined): unknown {
  if (node === undefined || node.text === null) return soapDefault(field.type);
  return readScalar(field, node.text);
}

function indexByName(nodes: readonly XmlNode[]): Map<string, XmlNode> {
  const map = new Map<string, XmlNode>();
  for (const n of nodes) if (!map.has(n.name)) map.set(n.name, n);
  return map;
}

function soapComplex(type: ComplexType, node: XmlNode): ArgumentBag {
  const fields = indexByName(node.children);
  const value: ArgumentBag = {};
  for (const f of type.fields) value[f.name] = soapScalar(f, fields.get(f.name));
  return value;
}

export function decodeSoapArguments(op: OperationDef, children: readonly XmlNode[]): DecodedCall {
  const byName = indexByName(children);
  const args: ArgumentBag = {};
  for (const p of op.params) {
    const node = byName.get(p.name);
    if (!isArrayParam(p)) {
      args[p.name] = soapScalar(p, node);
      continue;
    }
    if (node === undefined || node.text === null) {
      args[p.name] = null;
      continue;
    }
    const item = p.type.item;
    args[p.name] =
      typeof item === 'string'
        ? node.children.map((c) => soapScalar({ name: p.name, type: item }, c))
        : node.children.filter((c) => c.name === item.name).map((c) => soapComplex(item, c));
  }
  const extras = new Map<string, string>();
  for (const [name, node] of byName) {
    if (!(name in args) && node.text !== null && node.children.length === 0) extras.set(name, node.text);
  }
  return { args, extras };
}

/** HTTP GET/POST: every parameter is scalar (array operations are not in these bindings). */
export function decodeFormArguments(op: OperationDef, fields: ReadonlyMap<string, string>): DecodedCall {
  const args: ArgumentBag = {};
  for (const p of op.params) {
    if (isArrayParam(p)) continue;
    const text = fields.get(p.name);
    if (text === undefined) {
      if (p.type !== 'string') throw new MissingParameterError(p.name);
      args[p.name] = '';
      continue;
    }
    args[p.name] = readScalar(p, text);
  }
  const extras = new Map<string, string>();
  for (const [name, text] of fields) if (!(name in args)) extras.set(name, text);
  return { args, extras };
}
