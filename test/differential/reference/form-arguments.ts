import { isArrayParam, type ArgumentBag, type OperationDef } from '../../../shared/catalogue/index.js';
import { MissingParameterError, type DecodedCall, type Today } from '../../../gateway/bindings/arguments.js';
import type { FormFields } from '../../../gateway/bindings/form/form-decoder.js';
import { formConverter } from '../../../gateway/bindings/form/form-values.js';

/**
 * The interpreted HTTP GET/POST argument decoder, parameter by parameter: the reference the compiled
 * one (gateway/bindings/form/form-argument-decoder.ts) is proven equal to; test and bench code only.
 */

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
    args[p.name] = formConverter(p)(text, today);
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
