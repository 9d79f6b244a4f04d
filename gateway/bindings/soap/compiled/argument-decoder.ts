import { isArrayParam, operationList, type ArgumentBag, type OperationDef, type Param, type ScalarField } from '../../../../shared/catalogue/index.js';
import { NO_EXTRAS, type DecodedCall, type Today } from '../../arguments.js';
import { soapConverter, soapDefault } from '../soap-values.js';
import { ItemLayout, NameTable, type CallLayout } from './call-layout.js';
import { TEXT, type CallRecord } from './call-record.js';
import { compileFunction } from '../../../../shared/events/schema.js';

/** One parameter's value from the slots (null record: the Body had no operation element). */
type ParamReader = (record: CallRecord | null, today: Today) => unknown;

/**
 * One operation compiled from the catalogue at start: the names of its parameters and of its
 * array items' fields as byte tables (what CallBuilder matches elements against), the layout of
 * its slots, and one reader per parameter with its .NET conversion chosen once. `decode` gives
 * the DecodedCall that decodeSoapArguments gives on the node tree of the same body.
 */
export class SoapArgumentDecoder implements CallLayout {
  readonly params: NameTable;
  /** Per parameter: its items' layout, or null for a scalar parameter. */
  readonly layouts: readonly (ItemLayout | null)[];
  /** The arguments as one object literal, parameters in catalogue order (see `argumentsBuilder`). */
  private readonly build: (record: CallRecord | null, today: Today) => ArgumentBag;

  constructor(
    readonly op: OperationDef,
    /** Position in the catalogue: where a CallBuilder keeps this operation's record. */
    readonly index: number,
  ) {
    this.params = new NameTable(op.params.map((p) => p.name));
    this.layouts = op.params.map((p) => (isArrayParam(p) ? new ItemLayout(p) : null));
    this.build = argumentsBuilder(
      op.params.map((p) => p.name),
      op.params.map((p, i) => paramReader(p, i)),
    );
  }

  decode(record: CallRecord | null, today: Today): DecodedCall {
    const args = this.build(record, today);
    return { args, extras: record === null || record.extraCount === 0 ? NO_EXTRAS : extrasOf(record, args) };
  }
}

/**
 * `{ [names[0]]: readers[0](record, today), ... }` compiled once: one allocation with a fixed
 * shape, where adding a dozen computed keys to `{}` grew its property store several times per
 * request (bench/allocations.ts). Values are read in order, so the first bad one is the one named.
 */
function argumentsBuilder(names: readonly string[], readers: readonly ParamReader[]): (record: CallRecord | null, today: Today) => ArgumentBag {
  const entries = names.map((name, i) => `${JSON.stringify(name)}: readers[${i}](record, today)`);
  return compileFunction(['record', 'today'], `return { ${entries.join(', ')} };`, { readers });
}

/** One array item's fields as an object literal from its slots (missing ones: the type's default). */
type ItemBuilder = (states: Uint8Array, texts: readonly (string | undefined)[], base: number, today: Today) => ArgumentBag;

function itemBuilder(fieldNames: readonly string[], converts: readonly ((text: string, today: Today) => unknown)[], missing: readonly unknown[]): ItemBuilder {
  const entries = fieldNames.map((name, f) => `${JSON.stringify(name)}: states[base + ${f}] === TEXT ? converts[${f}](texts[base + ${f}], today) : missing[${f}]`);
  return compileFunction(['states', 'texts', 'base', 'today'], `return { ${entries.join(', ')} };`, { converts, missing, TEXT });
}

function paramReader(param: Param, p: number): ParamReader {
  if (!isArrayParam(param)) return scalarReader(param, p);
  const item = param.type.item;
  if (typeof item === 'string') return scalarItemsReader({ name: param.name, type: item }, p);
  const converts = item.fields.map((f) => soapConverter(f));
  const missing = item.fields.map((f) => soapDefault(f.type));
  const fieldNames = item.fields.map((f) => f.name);
  const stride = fieldNames.length;
  const build = itemBuilder(fieldNames, converts, missing);
  return (record, today) => {
    if (record === null || record.states[p] !== TEXT) return null;
    const list = record.items[p]!;
    const { states, texts } = list;
    const out = new Array<ArgumentBag>(list.count);
    for (let k = 0, base = 0; k < list.count; k++, base += stride) out[k] = build(states, texts, base, today);
    return out;
  };
}

function scalarReader(field: ScalarField, p: number): ParamReader {
  const convert = soapConverter(field);
  const missing = soapDefault(field.type);
  return (record, today) => (record !== null && record.states[p] === TEXT ? convert(record.texts[p]!, today) : missing);
}

/** ArrayOfInt and the like: every child element is an item (as XmlSerializer reads it). */
function scalarItemsReader(item: ScalarField, p: number): ParamReader {
  const convert = soapConverter(item);
  const missing = soapDefault(item.type);
  return (record, today) => {
    if (record === null || record.states[p] !== TEXT) return null;
    const list = record.items[p]!;
    const out: unknown[] = [];
    for (let k = 0; k < list.count; k++) out.push(list.states[k] === TEXT ? convert(list.texts[k]!, today) : missing);
    return out;
  };
}

/**
 * The undeclared elements that are text (not nil, no child element), by their first occurrence.
 * `in args` as the reference: a name of Object.prototype's (`constructor`...) is never an extra.
 */
function extrasOf(record: CallRecord, args: ArgumentBag): ReadonlyMap<string, string> {
  let extras: Map<string, string> | null = null;
  for (let j = 0; j < record.extraCount; j++) {
    const name = record.extraNames[j]!;
    if (record.extraStates[j] === TEXT && !(name in args)) (extras ??= new Map<string, string>()).set(name, record.extraTexts[j]!);
  }
  return extras ?? NO_EXTRAS;
}

/** Every operation of a catalogue, compiled once. */
export class SoapArgumentDecoders {
  private readonly byName = new Map<string, SoapArgumentDecoder>();

  constructor(operations: readonly OperationDef[]) {
    operations.forEach((op, i) => this.byName.set(op.name, new SoapArgumentDecoder(op, i)));
  }

  get size(): number {
    return this.byName.size;
  }

  /** The plan of the operation a Body element names (exact, case-sensitive, as findOperation). */
  find(name: string): SoapArgumentDecoder | undefined {
    return this.byName.get(name);
  }

  /**
   * The arguments of a call to `op`: from its slots, or all defaults when the Body was empty
   * (routing then came from SOAPAction). The slots always belong to `op`: routing refuses a call
   * whose Body element names another operation.
   */
  decode(op: OperationDef, record: DecoderRecord | null, today: Today): DecodedCall {
    const plan = record?.plan ?? this.byName.get(op.name);
    if (plan?.op !== op) throw new Error(`no compiled plan for ${op.name} with these slots`);
    return plan.decode(record, today);
  }
}

/** A call's slots as the SOAP binding's scanner fills them: the record knows its operation's decoder. */
export type DecoderRecord = CallRecord<SoapArgumentDecoder>;

/** The catalogue's operations, compiled when the gateway starts. */
export const catalogPlans = new SoapArgumentDecoders(operationList);
