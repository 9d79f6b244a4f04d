import { isArrayParam, type ArgumentBag, type OperationDef, type ScalarField } from '../../../shared/catalogue/index.js';
import { trimWhiteSpace } from '../../../shared/xsd/dotnet-chars.js';
import { toBoolean, toDateTime, toDouble, toInt32 } from '../../../shared/xsd/dotnet-convert.js';
import { InvalidValueError, MissingParameterError, type DecodedCall, type Today } from '../arguments.js';
import type { FormFields } from './form-decoder.js';

/**
 * HTTP GET/POST arguments, read as ASMX reads a form field: Convert.ChangeType in the invariant
 * culture ("11/21/2026 10:00:08", "1,234.5"). Kept leniency (docs/protocol.md §Value conversion):
 * 1/0 for a boolean.
 */
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
