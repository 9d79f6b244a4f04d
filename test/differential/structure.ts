/**
 * Envelopes whose operation element is built to stress what the SOAP decoders keep of it, not the
 * XML syntax (generator.ts and mutator.ts do that): names drawn from the catalogue at every level
 * (parameters, array items, item fields, also at the wrong level), repeated names (the first
 * occurrence wins), xsi:nil with and without content, text split around child elements (mixed
 * content), undeclared elements including names of Object.prototype's, and nesting deeper than
 * the decoders keep. Every body is well-formed, so each case reaches argument decoding.
 */
import { isArrayParam, operationList, type OperationDef } from '../../shared/catalogue/index.js';
import type { Rng } from './rng.js';

const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const XSI = 'http://www.w3.org/2001/XMLSchema-instance';

/** Names no operation declares, some of them Object.prototype's (never extras, as `in` says). */
const UNDECLARED = ['Rumbo', 'Crudo', 'X', 'é', 'constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'];

/** Operations with an array parameter: half the cases, the decoders' most intricate part. */
const WITH_ARRAYS = operationList.filter((op) => op.params.some((p) => isArrayParam(p)));

const ITEM_NAMES = ['pEvento', 'pSensor', 'Comando', 'Vehiculo', 'int', 'Otro'];

/** Every scalar name a client sends somewhere: parameters and fields of array items. */
const ALL_NAMES = [
  ...new Set(
    operationList.flatMap((op) =>
      op.params.flatMap((p) => (isArrayParam(p) && typeof p.type.item !== 'string' ? [p.name, ...p.type.item.fields.map((f) => f.name)] : [p.name])),
    ),
  ),
];

const TEXTS = [
  '', ' ', 'acme', 'secret-1', 'AB123CD', '42', '-1', '2147483648', '1.5', 'abc', ' 7 ', '-34.6037221', 'NaN', '-INF', '-0', '1e3', 'x',
  'true', 'False', '1', '0', 'yes', '2026-03-14T15:09:26.535-03:00', '2026-11-22 12:00:00', '10:00:08', 'not a date', 'ñandú', '😀',
  '&amp;', '&#233;', '<![CDATA[<&>]]>', '\r\n  ', '<!--c-->', '<?p x?>',
];

export function structuredEnvelope(rng: Rng): Uint8Array {
  const v12 = rng.chance(0.5);
  const p = rng.pick(['soap', 's', '']);
  const el = (local: string) => (p === '' ? local : `${p}:${local}`);
  const xmlns = `${p === '' ? 'xmlns' : `xmlns:${p}`}="${v12 ? SOAP12 : SOAP11}"`;
  const ops = rng.chance(0.03) ? 0 : 1;
  let body = '';
  for (let k = 0; k < ops; k++) body += operation(rng, rng.chance(0.03) ? null : rng.pick(rng.chance(0.5) ? WITH_ARRAYS : operationList));
  if (rng.chance(0.03)) body += operation(rng, rng.pick(operationList));
  return Buffer.from(`<${el('Envelope')} ${xmlns} xmlns:xsi="${XSI}"><${el('Body')}>${body}</${el('Body')}></${el('Envelope')}>`, 'utf8');
}

function operation(rng: Rng, op: OperationDef | null): string {
  const name = op?.name ?? rng.pick(['Frobnicate', 'login']);
  const prefix = rng.chance(0.2) ? 'tns:' : '';
  const decl = prefix === '' ? ' xmlns="http://tempuri.org/"' : ' xmlns:tns="http://tempuri.org/"';
  const params = op?.params.map((param) => param.name) ?? [];
  let inner = '';
  const n = rng.range(0, params.length + 4);
  for (let k = 0; k < n; k++) {
    // Parameters in order most of the time, so that arrays and scalars are mostly well placed.
    const name = rng.chance(0.7) && k < params.length ? params[k]! : rng.chance(0.5) ? rng.pick(UNDECLARED) : rng.pick([...params, ...ALL_NAMES]);
    inner += element(rng, name, 4, op);
  }
  return `<${prefix}${name}${decl}>${inner}</${prefix}${name}>`;
}

/** An element at `depth` (the operation's children are at 4), with text and children mixed. */
function element(rng: Rng, name: string, depth: number, op: OperationDef | null): string {
  const q = rng.chance(0.1) ? `q:${name}` : name;
  const ns = q === name ? '' : ' xmlns:q="urn:q"';
  const nil = rng.chance(0.08) ? ` ${rng.pick(['xsi:', '', 'i:'])}nil="${rng.pick(['true', '1', 'false', ' true '])}"` : '';
  if (rng.chance(0.08)) return `<${q}${ns}${nil}/>`;
  let content = '';
  const param = depth === 4 ? op?.params.find((p) => p.name === name) : undefined;
  const isArray = param !== undefined && isArrayParam(param);
  // An array or an item has children (items, fields); anything else mostly text.
  const container = isArray || (depth === 5 && ITEM_NAMES.includes(name));
  const parts = rng.range(0, container ? 10 : 3);
  for (let k = 0; k < parts; k++) {
    if (depth < 9 && rng.chance(container ? 0.85 : 0.3)) content += element(rng, childName(rng, depth, isArray, param), depth + 1, op);
    else content += rng.pick(TEXTS);
  }
  return `<${q}${ns}${nil}>${content}</${q}>`;
}

function childName(rng: Rng, depth: number, inArray: boolean, param: OperationDef['params'][number] | undefined): string {
  if (depth === 4 && inArray && param !== undefined && isArrayParam(param)) {
    const item = param.type.item;
    return rng.chance(0.85) ? (typeof item === 'string' ? rng.pick(['int', 'x']) : item.name) : rng.pick(ITEM_NAMES);
  }
  return rng.chance(0.7) ? rng.pick(ALL_NAMES) : rng.pick([...ITEM_NAMES, ...UNDECLARED]);
}
