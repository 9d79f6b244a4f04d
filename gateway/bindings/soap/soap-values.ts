import type { ScalarField, ScalarType } from '../../../shared/catalogue/index.js';
import { parseBoolean, parseDouble, parseInt32 } from '../../../shared/dotnet/values.js';
import { parseXmlDateTime } from '../../../shared/dotnet/xml-convert.js';
import { converterOf, InvalidValueError, type Converter, type ScalarReaders } from '../arguments.js';

/**
 * SOAP arguments from the operation element's children, read as XmlSerializer reads them
 * (XmlConvert: a dateTime in any XML Schema date/time form). Kept leniencies (docs/protocol.md
 * §Value conversion): booleans in any case, a space for the T in a dateTime. The compiled decoder
 * (compiled/) keeps one converter per parameter; the interpreted reading it is proven against is
 * test/differential/reference/soap-arguments.ts.
 */

/** Value of a missing SOAP element (XmlSerializer defaults). */
export function soapDefault(type: ScalarType): unknown {
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

const SPACE_FOR_T = { spaceForT: true } as const;

const readString: Converter = (text) => text;
const readDouble: Converter = (text) => parseDouble(text);
const readDateTime: Converter = (text, today) => ({ text, parsed: parseXmlDateTime(text, today, SPACE_FOR_T) });

function readInt(name: string, text: string): number {
  const n = parseInt32(text);
  if (n === undefined) throw new InvalidValueError(name, text, 'int');
  return n;
}

function readBoolean(name: string, text: string): boolean {
  const b = parseBoolean(text);
  if (b === undefined) throw new InvalidValueError(name, text, 'boolean');
  return b;
}

const SOAP_READERS: ScalarReaders = { string: readString, double: readDouble, dateTime: readDateTime, int: readInt, boolean: readBoolean };

/** XmlSerializer's reading of `field`, chosen once (the compiled path keeps one per parameter and item field). */
export function soapConverter(field: ScalarField): Converter {
  return converterOf(field, SOAP_READERS);
}
