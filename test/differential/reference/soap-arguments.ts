import { isArrayParam, type ArgumentBag, type ComplexType, type OperationDef, type ScalarField } from '../../../shared/catalogue/index.js';
import type { DecodedCall, Today } from '../../../gateway/bindings/arguments.js';
import type { XmlNode } from '../../../gateway/bindings/soap/envelope.js';
import { soapConverter, soapDefault } from '../../../gateway/bindings/soap/soap-values.js';

/**
 * The interpreted SOAP argument decoder: the operation element's children as a node tree
 * (envelope-builder.ts), read parameter by parameter. The reference the compiled decoder
 * (gateway/bindings/soap/compiled/) is proven equal to; test and bench code only.
 */

function soapScalar(field: ScalarField, node: XmlNode | undefined, today: Today): unknown {
  if (node === undefined || node.text === null) return soapDefault(field.type);
  return soapConverter(field)(node.text, today);
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
