import { isArrayParam, type ArgumentBag, type DateTimeValue, type OperationDef, type ScalarField } from '../../../shared/catalogue/index.js';
import { trimWhiteSpace } from '../../../shared/xsd/dotnet-chars.js';
import { toBoolean, toDateTime, toDouble, toInt32 } from '../../../shared/xsd/dotnet-convert.js';
import { converterOf, readScalar, InvalidValueError, MissingParameterError, type Converter, type DecodedCall, type ScalarReaders, type Today } from '../arguments.js';
import type { FormFields } from './form-decoder.js';

/**
 * HTTP GET/POST arguments, read as ASMX reads a form field: Convert.ChangeType in the invariant
 * culture ("11/21/2026 10:00:08", "1,234.5"). Kept leniency (docs/protocol.md §Value conversion):
 * 1/0 for a boolean. This is the interpreted reading, kept as the reference of the compiled one
 * (form-plan.ts); both use the conversions below.
 */
function formValue(field: ScalarField, text: string, today: Today): unknown {
  return readScalar(field, text, today, FORM_READERS);
}

const FORM_READERS: ScalarReaders = { string: (text) => text, double: readDouble, dateTime: readDateTime, int: readInt, boolean: readBoolean };

/** ASMX's reading of `field` from a form, chosen once (the compiled form path keeps one per parameter). */
export function formConverter(field: ScalarField): Converter {
  return converterOf(field, FORM_READERS);
}

function readDouble(text: string): number {
  const r = toDouble(text);
  return r.ok ? r.value : NaN;
}

function readDateTime(text: string, today: Today): DateTimeValue {
  return { text, parsed: toDateTime(text, today) };
}

function readInt(name: string, text: string): number {
  const r = toInt32(text);
  if (!r.ok) throw new InvalidValueError(name, text, 'int', r.failure);
  return r.value;
}

function readBoolean(name: string, text: string): boolean {
  const r = toBoolean(text);
  if (r.ok) return r.value;
  // Leniency kept from the SOAP binding: 1 and 0, which bool.Parse refuses.
  const digit = trimWhiteSpace(text, true);
  if (digit === '1' || digit === '0') return digit === '1';
  throw new InvalidValueError(name, text, 'boolean', r.failure);
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
