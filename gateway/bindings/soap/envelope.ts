import { CLIENT_ERRORS, ClientError, clientText } from '../../errors/registry.js';

/**
 * What a SOAP request body reader produces, and how it fails: shared by the byte scanner (the
 * production reader) and the saxes-based reference reader (test/differential/saxes-envelope-reader.ts), so that both
 * build the same values and raise the same errors.
 */
export const SOAP11_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
export const SOAP12_NS = 'http://www.w3.org/2003/05/soap-envelope';

export type SoapVersion = '1.1' | '1.2';

/** An element below the operation element: its text (null for xsi:nil) and child elements. */
export interface XmlNode {
  readonly name: string;
  text: string | null;
  readonly children: XmlNode[];
}

export interface SoapEnvelope {
  version: SoapVersion;
  /** The first element inside Body, or null for an empty Body. */
  operation: { name: string; namespace: string; children: XmlNode[] } | null;
}

/** Not well-formed XML or a DOCTYPE: HTTP 400 with a Client fault saying where it broke. */
export class XmlSyntaxError extends Error {
  constructor(
    message: string,
    /** Byte offset in the body where it broke, when the reader knows it (-1 otherwise). */
    readonly offset = -1,
  ) {
    super(message);
  }
}

type EnvelopeErrorKey = 'versionMismatch' | 'rootNotEnvelope' | 'noEnvelope' | 'noBody';

/** Well-formed but not a SOAP envelope this service understands; `kind` is its fault code. */
export class EnvelopeError extends ClientError {
  readonly kind: (typeof CLIENT_ERRORS)[EnvelopeErrorKey]['fault'];

  constructor(key: EnvelopeErrorKey, message: string) {
    super(key, message);
    this.kind = CLIENT_ERRORS[key].fault;
  }
}

/** Depth 4 parameters, 5 array items, 6 item fields: deeper content is ignored. */
export const MAX_KEPT_DEPTH = 6;

export const DTD_PROHIBITED = 'DTD is prohibited in this XML document.';

/** `soap:Envelope` → prefix `soap`, local `Envelope` (split at the first colon, as both readers do). */
export function splitName(name: string): { prefix: string; local: string } {
  const colon = name.indexOf(':');
  return colon < 0 ? { prefix: '', local: name } : { prefix: name.slice(0, colon), local: name.slice(colon + 1) };
}

/** The SOAP version of the root element, or the VersionMismatch fault ASMX gives. */
export function envelopeVersion(name: string, local: string, uri: string): SoapVersion {
  if (local !== 'Envelope') {
    throw new EnvelopeError('rootNotEnvelope', clientText('rootNotEnvelope', { name }));
  }
  if (uri === SOAP11_NS) return '1.1';
  if (uri === SOAP12_NS) return '1.2';
  throw new EnvelopeError('versionMismatch', clientText('versionMismatch', { namespace: uri }));
}

export function noBodyError(): EnvelopeError {
  return new EnvelopeError('noBody', clientText('noBody'));
}

export function notAnEnvelopeError(): EnvelopeError {
  return new EnvelopeError('noEnvelope', clientText('noEnvelope'));
}

/** `xsi:nil` value test: only XML Schema instance defines a `nil` attribute, under any prefix. */
export function isNilName(name: string): boolean {
  return name === 'nil' || name.endsWith(':nil');
}

export function isNilTrue(value: string): boolean {
  const v = value.trim();
  return v === 'true' || v === '1';
}
