/**
 * The captured WSDL fixture (test/fixtures/captured-service.wsdl) and edits of it that stand for
 * other deployments' files: an older release's (less declared) and files declaring more.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CAPTURED_WSDL, SERVED_BEYOND_CAPTURE_FILE } from '../../scripts/generate/targets.js';
import { REPO } from './paths.js';

export const CAPTURED_FILE = path.join(REPO, CAPTURED_WSDL.file);
export const CAPTURED = readFileSync(CAPTURED_FILE);
export const CAPTURED_TEXT = CAPTURED.toString('utf8');
/** The fixture's targetNamespace: SERVICE_NAMESPACE for it. */
export const CAPTURED_NAMESPACE: string = CAPTURED_WSDL.namespace;

/** `text` with `pattern` removed; throws when it matches nothing, so an edit cannot silently miss. */
function removing(text: string, pattern: RegExp): string {
  const out = text.replace(pattern, '');
  if (out === text) throw new Error(`nothing in the WSDL matches ${String(pattern)}`);
  return out;
}

/**
 * The file as a release without `operation` would have written it: its wrapper elements, its six
 * messages, its entries in the three port types and the four bindings.
 */
export function withoutOperation(text: string, operation: string): string {
  let out = removing(text, new RegExp(`\\n {6}<xs:element name="${operation}(?:Response)?">\\n[^]*?\\n {6}</xs:element>`, 'g'));
  out = removing(out, new RegExp(`\\n {2}<wsdl:message name="${operation}(?:Soap|HttpGet|HttpPost)(?:In|Out)"(?: />|>[^]*?</wsdl:message>)`, 'g'));
  return removing(out, new RegExp(`\\n {4}<wsdl:operation name="${operation}">\\n[^]*?\\n {4}</wsdl:operation>`, 'g'));
}

/** The file without a named complex type and the root element of the same name, if any. */
export function withoutType(text: string, type: string): string {
  const out = removing(text, new RegExp(`\\n {6}<xs:complexType name="${type}">\\n[^]*?\\n {6}</xs:complexType>`));
  return out.replace(new RegExp(`\\n {6}<xs:element name="${type}" [^\\n]*/>`), '');
}

/** The file without the element or part `field` wherever it is declared (wrappers, types, HTTP messages). */
export function withoutField(text: string, field: string): string {
  return removing(text, new RegExp(`\\n *<(?:xs:element|wsdl:part) [^\\n]*name="${field}" [^\\n]*/>`, 'g'));
}

/** An older release's file: no ConsultarVehiculosEnViaje (nor its types), and events without Codigo. */
export function olderRelease(): string {
  return withoutField(withoutType(withoutType(withoutOperation(CAPTURED_TEXT, 'ConsultarVehiculosEnViaje'), 'Vehiculo'), 'ArrayOfVehiculo'), 'Codigo');
}

/**
 * What the gateway has gained since the fixture was captured: the fixture stays as a deployment
 * captured it, so a new operation or event field shows here, not in the fixture. The list is
 * test/fixtures/captured-service.beyond.txt, written by `npm run generate` (whose diff shows what
 * a change adds to the contract); empty while the fixture matches the gateway exactly.
 */
export const SERVED_SINCE_CAPTURE: readonly string[] = readFileSync(path.join(REPO, SERVED_BEYOND_CAPTURE_FILE), 'utf8')
  .split('\n')
  .filter((line) => line !== '' && !line.startsWith('#'));

/** What the gateway serves beyond olderRelease(), as the start's log line lists it (sorted). */
export const BEYOND_OLDER_RELEASE: readonly string[] = [
  'binding HTTP GET: operation InsertarEvento: parameter Codigo',
  'binding HTTP GET: operation LoginYInsertarEvento: parameter Codigo',
  'binding HTTP POST: operation InsertarEvento: parameter Codigo',
  'binding HTTP POST: operation LoginYInsertarEvento: parameter Codigo',
  'operation ConsultarVehiculosEnViaje',
  'operation InsertarEvento: parameter Codigo',
  'operation LoginYInsertarEvento2: parameter Codigo',
  'operation LoginYInsertarEvento: parameter Codigo',
  'type ArrayOfVehiculo',
  'type Vehiculo',
  'type pEvento: element Codigo',
  ...SERVED_SINCE_CAPTURE,
].sort();
