/**
 * The discovery document (`GET {path}?disco`), as ASMX writes it: XmlSerializer output of a
 * DiscoveryDocument through an indented XmlTextWriter (two spaces, CRLF), with a `contractRef`
 * to the WSDL and one `soap` entry per SOAP binding (SOAP 1.1 and SOAP 1.2). The HTTP GET/POST
 * bindings are not listed, as in ASMX. With WSDL_FILE the bindings are those of the captured WSDL.
 */
import { escapeXmlAttr } from './xml-escape.js';
import { IndentedLines, PORT, XML_DECLARATION, type MetadataOptions } from './wsdl.js';

const DISCO_NS = 'http://schemas.xmlsoap.org/disco/';
const DISCO_SCL_NS = 'http://schemas.xmlsoap.org/disco/scl/';
const DISCO_SOAP_NS = 'http://schemas.xmlsoap.org/disco/soap/';

interface DiscoOptions extends MetadataOptions {
  /** Local names of the SOAP 1.1 and 1.2 bindings to list; default the generated WSDL's. */
  readonly soapBindings?: readonly string[];
}

export function renderDisco(opts: DiscoOptions): string {
  const url = escapeXmlAttr(opts.serviceUrl);
  const ns = escapeXmlAttr(opts.namespace);
  const w = new IndentedLines();
  w.raw(XML_DECLARATION);
  w.open(
    `<discovery xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="${DISCO_NS}">`,
  );
  w.line(`<contractRef ref="${url}?wsdl" docRef="${url}" xmlns="${DISCO_SCL_NS}" />`);
  (opts.soapBindings ?? [PORT.soap, PORT.soap12]).forEach((binding, i) => {
    const q = `q${i + 1}`;
    w.line(`<soap address="${url}" xmlns:${q}="${ns}" binding="${q}:${escapeXmlAttr(binding)}" xmlns="${DISCO_SOAP_NS}" />`);
  });
  w.close('</discovery>');
  return w.join();
}
