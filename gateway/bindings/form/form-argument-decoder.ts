import { httpBindable, isArrayParam, operationList, type ArgumentBag, type OperationDef, type ScalarField } from '../../../shared/catalogue/index.js';
import { MissingParameterError, NO_EXTRAS, type Converter, type DecodedCall, type Today } from '../arguments.js';
import { formConverter } from './form-values.js';
import type { FormFields } from './form-decoder.js';

/**
 * HTTP GET/POST arguments of one operation, compiled when the gateway starts: its parameters'
 * lower-cased names (the form's keys), their conversions chosen once, and the set of declared
 * names, so that a request lower-cases nothing and compares no name list per field (the
 * interpreted decodeFormArguments, kept as the reference, does both). Same DecodedCall, same
 * errors in the same order: test/unit/gateway/bindings/form/form-argument-decoder.unit.test.ts.
 */
class FormArgumentDecoder {
  private readonly keys: readonly string[];
  private readonly names: readonly string[];
  private readonly converters: readonly Converter[];
  /** Per parameter: a string (missing → ''), else missing is an error. */
  private readonly optional: readonly boolean[];
  /** Every parameter's lower-cased name: the fields that are not extras. */
  private readonly declared: ReadonlySet<string>;

  constructor(readonly op: OperationDef) {
    const scalars = op.params.filter((p): p is ScalarField => !isArrayParam(p));
    this.keys = scalars.map((p) => p.name.toLowerCase());
    this.names = scalars.map((p) => p.name);
    this.converters = scalars.map((p) => formConverter(p));
    this.optional = scalars.map((p) => p.type === 'string');
    this.declared = new Set(op.params.map((p) => p.name.toLowerCase()));
  }

  decode(fields: FormFields, today: Today): DecodedCall {
    const args: ArgumentBag = {};
    for (let i = 0; i < this.keys.length; i++) {
      const text = fields.getByKey(this.keys[i]!);
      if (text !== undefined) args[this.names[i]!] = this.converters[i]!(text, today);
      else if (this.optional[i]) args[this.names[i]!] = '';
      else throw new MissingParameterError(this.names[i]!);
    }
    return { args, extras: fields.undeclared(this.declared) ?? NO_EXTRAS };
  }
}

/** The HTTP-bindable operations of a catalogue, compiled once. */
class FormArgumentDecoders {
  private readonly byName: ReadonlyMap<string, FormArgumentDecoder>;

  constructor(operations: readonly OperationDef[]) {
    this.byName = new Map(operations.filter(httpBindable).map((op) => [op.name, new FormArgumentDecoder(op)]));
  }

  decode(op: OperationDef, fields: FormFields, today: Today): DecodedCall {
    const plan = this.byName.get(op.name);
    if (plan?.op !== op) throw new Error(`no compiled form plan for ${op.name}`);
    return plan.decode(fields, today);
  }
}

/** The catalogue's HTTP-bindable operations, compiled when the gateway starts. */
export const catalogFormPlans = new FormArgumentDecoders(operationList);
