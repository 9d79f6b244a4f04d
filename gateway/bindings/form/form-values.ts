import type { DateTimeValue, ScalarField } from '../../../shared/catalogue/index.js';
import { trimWhiteSpace } from '../../../shared/dotnet/dotnet-chars.js';
import { toBoolean, toDateTime, toDouble, toInt32 } from '../../../shared/dotnet/dotnet-convert.js';
import { converterOf, InvalidValueError, type Converter, type ScalarReaders, type Today } from '../arguments.js';

/**
 * HTTP GET/POST arguments, read as ASMX reads a form field: Convert.ChangeType in the invariant
 * culture ("11/21/2026 10:00:08", "1,234.5"). Kept leniency (docs/protocol.md §Value conversion):
 * 1/0 for a boolean. The compiled decoder (form-argument-decoder.ts) keeps one converter per parameter; the
 * interpreted reading it is proven against is test/differential/reference/form-arguments.ts.
 */
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
