import {
  isArrayParam,
  type ArgumentBag,
  type ComplexType,
  type OperationDef,
  type ScalarField,
  type ScalarType,
} from '../../shared/catalogue/index.js';
import { type CivilDate, civilDateIn } from '../../shared/xsd/calendar.js';
import { trimWhiteSpace } from '../../shared/xsd/dotnet-chars.js';
import { type ConversionFailure, toBoolean, toDateTime, toDouble, toInt32 } from '../../shared/xsd/dotnet-convert.js';
import { parseBoolean, parseDouble, parseInt32 } from '../../shared/xsd/values.js';
import { parseXmlDateTime } from '../../shared/xsd/xml-convert.js';
import type { FormFields } from '../http/form-decoder.js';
import type { XmlNode } from '../soap/envelope-reader.js';

/**
 * Turns what a binding read (SOAP elements or form fields) into typed handler arguments,
 * following the catalogue. Leniency rules (docs/protocol.md §Reading requests): parameters by local name in any order,
 * unknown ones ignored (but kept as `extras`, so an event keeps e.g. a Rumbo its operation
 * lacks), missing ones defaulted. Doubles and dates never fault here: an unreadable one makes
 * the event invalid (-3) later. An unreadable int or boolean is the caller's error.
 *
 * Values are read as ASMX reads them: SOAP through XmlSerializer (XmlConvert: a dateTime in any XML
 * Schema date/time form), HTTP GET/POST through Convert.ChangeType in the invariant culture
 * ("11/21/2026 10:00:08", "1,234.5"). Kept leniencies (docs/protocol.md §Value conversion): SOAP booleans in any case,
 * a space for the T in a SOAP dateTime, and 1/0 for an HTTP boolean.
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
    /** HTTP GET/POST: how Convert.ChangeType failed, for ASMX's error text. */
    readonly failure: ConversionFailure | null = null,
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

/** DateTime.Now's date, for a value that carries none ("10:00:08", xs:time, "Nov 21"). */
export type Today = () => CivilDate;

/** Today's date in `zone`, looked up only if a value needs it. */
export function todayIn(zone: string, clock: () => number): Today {
  let today: CivilDate | undefined;
  return () => (today ??= civilDateIn(clock(), zone));
}

/** XmlSerializer's reading of a SOAP element's text. */
function soapValue(field: ScalarField, text: string, today: Today): unknown {
  switch (field.type) {
    case 'string':
      return text;
    case 'double':
      return parseDouble(text);
    case 'dateTime':
      return { text, parsed: parseXmlDateTime(text, today, { spaceForT: true }) };
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

/** Convert.ChangeType(text, type, CultureInfo.InvariantCulture), as ASMX reads a form field. */
function formValue(field: ScalarField, text: string, today: Today): unknown {
  switch (field.type) {
    case 'string':
      return text;
    case 'double': {
      const r = toDouble(text);
      return r.ok ? r.value : NaN;
    }
    case 'dateTime':
      return { text, parsed: toDateTime(text, today) };
    case 'int': {
      const r = toInt32(text);
      if (!r.ok) throw new InvalidValueError(field.name, text, 'int', r.failure);
      return r.value;
    }
    case 'boolean': {
      const r = toBoolean(text);
      if (r.ok) return r.value;
      // Leniency kept from the SOAP binding: 1 and 0, which bool.Parse refuses.
      const digit = trimWhiteSpace(text, true);
      if (digit === '1' || digit === '0') return digit === '1';
      throw new InvalidValueError(field.name, text, 'boolean', r.failure);
    }
  }
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

/** HTTP GET/POST: every parameter is scalar (array operations are not in these bindings). */
export function decodeFormArguments(op: OperationDef, fields: FormFields, today: Today): DecodedCall {
  const args: ArgumentBag = {};
  for (const p of op.params) {
    if (isArrayParam(p)) continue;
    const text = fields.get(p.name);
    if (text === undefined) {
      if (p.type !== 'string') throw new MissingParameterError(p.name);
      args[p.name] = '';
      continue;
    }
    args[p.name] = formValue(p, text, today);
  }
  const extras = new Map<string, string>();
  for (const [name, text] of fields) if (!declared(op, name)) extras.set(name, text);
  return { args, extras };
}

/** True when `name` names one of the operation's parameters, in any case (as ASMX matches them). */
function declared(op: OperationDef, name: string): boolean {
  const lower = name.toLowerCase();
  return op.params.some((p) => p.name.toLowerCase() === lower);
}
