import { escapeXmlText, stripInvalidXmlChars } from '../../metadata/xml-escape.js';
import { XML_DECL, XSD_NS, XSI_NS } from '../result-xml.js';
import type { FaultCode } from '../../errors/registry.js';
import { SOAP11_NS, SOAP12_NS, type SoapVersion } from './envelope.js';

/** Envelope framing and faults, byte-exact with ASMX: one line, prefix always `soap`. */
const head = (ns: string): string =>
  `${XML_DECL}<soap:Envelope xmlns:soap="${ns}" xmlns:xsi="${XSI_NS}" xmlns:xsd="${XSD_NS}"><soap:Body>`;
const TAIL = '</soap:Body></soap:Envelope>';
const HEAD = { '1.1': head(SOAP11_NS), '1.2': head(SOAP12_NS) } as const;

export const SOAP_CONTENT_TYPE = {
  '1.1': 'text/xml; charset=utf-8',
  '1.2': 'application/soap+xml; charset=utf-8',
} as const;

export function envelope(version: SoapVersion, body: string): string {
  return HEAD[version] + body + TAIL;
}

const SOAP12_CODE: Record<FaultCode, string> = { Client: 'Sender', Server: 'Receiver', VersionMismatch: 'VersionMismatch' };

export function faultEnvelope(version: SoapVersion, code: FaultCode, message: string): string {
  // Fault texts can quote what the client sent (a SOAPAction, an element name).
  const text = escapeXmlText(stripInvalidXmlChars(message));
  if (version === '1.1') {
    return envelope(version, `<soap:Fault><faultcode>soap:${code}</faultcode><faultstring>${text}</faultstring><detail /></soap:Fault>`);
  }
  return envelope(
    version,
    `<soap:Fault><soap:Code><soap:Value>soap:${SOAP12_CODE[code]}</soap:Value></soap:Code><soap:Reason><soap:Text xml:lang="en">${text}</soap:Text></soap:Reason><soap:Detail /></soap:Fault>`,
  );
}
