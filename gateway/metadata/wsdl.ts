/**
 * The service description (`GET {path}?wsdl`), generated from the operation catalogue in exactly
 * the shape ASP.NET ASMX produces for a `Service` class with SOAP 1.1, SOAP 1.2, HTTP GET and
 * HTTP POST enabled (docs/protocol.md §Metadata):
 *
 * - XML declaration, then `wsdl:definitions` with ASMX's namespace declarations, in ASMX's order;
 * - operations everywhere in the catalogue's order, the deployed service's declaration order;
 * - one inline `s:schema` (elementFormDefault="qualified"): for each operation the wrapper
 *   element `Op` followed by the named types it references (depth first, each once), then
 *   `OpResponse` and the types it references; finally the root elements of the HTTP bindings'
 *   results (`boolean`, `int`, `Comando`, `ArrayOfVehiculo`), in order of first use;
 * - messages: all `OpSoapIn/OpSoapOut`, then all `OpHttpGetIn/Out`, then all `OpHttpPostIn/Out`;
 * - port types `ServiceSoap`, `ServiceHttpGet`, `ServiceHttpPost`; bindings `ServiceSoap`,
 *   `ServiceSoap12` (both on port type ServiceSoap), `ServiceHttpGet`, `ServiceHttpPost`;
 *   service `Service` with its four ports.
 *
 * Like .NET's XmlTextWriter (Formatting.Indented, Indentation = 2) on Windows, lines end in CRLF,
 * the declaration is followed by a line break and the document has no trailing line break.
 */
import {
  httpBindable,
  isArrayParam,
  operationList,
  type ArrayType,
  type ComplexType,
  type OperationDef,
  type Param,
  type ResultType,
  type ScalarField,
  type ScalarType,
} from '../../shared/catalogue/index.js';
import { escapeXmlAttr, escapeXmlText } from './xml-escape.js';

export interface MetadataOptions {
  /** XML namespace of the service (ends with a slash, e.g. `http://tempuri.org/`). */
  readonly namespace: string;
  /** Absolute URL of the endpoint, e.g. `http://localhost:8080/service.asmx`. */
  readonly serviceUrl: string;
}

/** Line terminator of ASMX's metadata documents (XmlTextWriter on Windows). */
const NEWLINE = '\r\n';

/** The `<?xml ...?>` declaration ASMX writes before every XML document. */
export const XML_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>';

/** Names of the generated WSDL parts, also used by the disco document and the help page. */
export const SERVICE_NAME = 'Service';
export const PORT = {
  soap: 'ServiceSoap',
  soap12: 'ServiceSoap12',
  httpGet: 'ServiceHttpGet',
  httpPost: 'ServiceHttpPost',
} as const;

const NS = {
  wsdl: 'http://schemas.xmlsoap.org/wsdl/',
  s: 'http://www.w3.org/2001/XMLSchema',
  soap12: 'http://schemas.xmlsoap.org/wsdl/soap12/',
  http: 'http://schemas.xmlsoap.org/wsdl/http/',
  mime: 'http://schemas.xmlsoap.org/wsdl/mime/',
  soap: 'http://schemas.xmlsoap.org/wsdl/soap/',
  tm: 'http://microsoft.com/wsdl/mime/textMatching/',
  soapenc: 'http://schemas.xmlsoap.org/soap/encoding/',
  soapHttpTransport: 'http://schemas.xmlsoap.org/soap/http',
} as const;

// ---------------------------------------------------------------------------------------------
// Schema conventions of XmlSerializer, shared with the help page.

/** A named schema type of the catalogue: `Comando`, `Vehiculo`, `ArrayOfPEvento`, ... */
type NamedType = ComplexType | ArrayType;

/** One `<s:element>` particle of a sequence, as XmlSerializer exports it. */
interface ElementParticle {
  readonly name: string;
  /** Qualified schema type: `s:string`, `tns:ArrayOfPEvento`, ... */
  readonly type: string;
  readonly minOccurs: 0 | 1;
  readonly maxOccurs: '1' | 'unbounded';
  readonly nillable: boolean;
}

/**
 * XmlSerializer: value types (int, double, boolean, dateTime) are `minOccurs="1"`; reference
 * types (string, classes, arrays) are `minOccurs="0"` unless nillable (then the element must be
 * present, possibly as xsi:nil, so `minOccurs="1"`).
 */
function minOccursFor(isValueType: boolean, nillable: boolean): 0 | 1 {
  return isValueType || nillable ? 1 : 0;
}

function isValueType(type: ScalarType): boolean {
  return type !== 'string';
}

function scalarParticle(field: ScalarField): ElementParticle {
  const nillable = field.nillable === true;
  return {
    name: field.name,
    type: `s:${field.type}`,
    minOccurs: minOccursFor(isValueType(field.type), nillable),
    maxOccurs: '1',
    nillable,
  };
}

function paramParticle(param: Param): ElementParticle {
  if (isArrayParam(param)) {
    return { name: param.name, type: `tns:${param.type.name}`, minOccurs: 0, maxOccurs: '1', nillable: false };
  }
  return scalarParticle(param);
}

function resultParticle(op: OperationDef): ElementParticle {
  const name = `${op.name}Result`;
  const r = op.result;
  if (r.kind === 'scalar') {
    return { name, type: `s:${r.type}`, minOccurs: 1, maxOccurs: '1', nillable: false };
  }
  return { name, type: `tns:${r.type.name}`, minOccurs: 0, maxOccurs: '1', nillable: false };
}

/** The repeated item of an `ArrayOfX`: class items are nillable, value-type items are not. */
function arrayItemParticle(array: ArrayType): ElementParticle {
  const item = array.item;
  if (typeof item === 'string') {
    return {
      name: item,
      type: `s:${item}`,
      minOccurs: 0,
      maxOccurs: 'unbounded',
      nillable: !isValueType(item),
    };
  }
  return { name: item.name, type: `tns:${item.name}`, minOccurs: 0, maxOccurs: 'unbounded', nillable: true };
}

/** Particles of a named type's sequence. */
function typeParticles(t: NamedType): ElementParticle[] {
  return t.kind === 'complex' ? t.fields.map(scalarParticle) : [arrayItemParticle(t)];
}

/** Named types a named type refers to directly (array -> its class item). */
function typeReferences(t: NamedType): NamedType[] {
  return t.kind === 'array' && typeof t.item !== 'string' ? [t.item] : [];
}

function paramReferences(params: readonly Param[]): NamedType[] {
  const refs: NamedType[] = [];
  for (const p of params) if (isArrayParam(p)) refs.push(p.type);
  return refs;
}

function resultReferences(result: ResultType): NamedType[] {
  return result.kind === 'scalar' ? [] : [result.type];
}

/**
 * The top-level element the HTTP GET/POST bindings return (`<boolean>`, `<int>`, `<Comando>`,
 * `<ArrayOfVehiculo>`): value types are not nillable, classes and arrays are.
 */
export function httpRootElement(result: ResultType): { name: string; type: string; nillable: boolean } {
  if (result.kind === 'scalar') return { name: result.name, type: `s:${result.type}`, nillable: false };
  return { name: result.name, type: `tns:${result.type.name}`, nillable: true };
}

/** The SOAPAction of an operation: the namespace followed by the operation name. */
export function soapActionFor(namespace: string, operation: string): string {
  return namespace + operation;
}

// ---------------------------------------------------------------------------------------------
// Writer

/** Accumulates indented lines (two spaces per level), as XmlTextWriter does. */
export class IndentedLines {
  private readonly lines: string[] = [];
  private depth = 0;

  /** A line at the current depth. */
  line(text: string): this {
    this.lines.push('  '.repeat(this.depth) + text);
    return this;
  }

  /** A start tag at the current depth; following lines go one level deeper. */
  open(text: string): this {
    this.line(text);
    this.depth++;
    return this;
  }

  /** An end tag one level up. */
  close(text: string): this {
    this.depth--;
    this.line(text);
    return this;
  }

  /** A line with no indentation (the XML declaration). */
  raw(text: string): this {
    this.lines.push(text);
    return this;
  }

  join(newline: string = NEWLINE): string {
    return this.lines.join(newline);
  }
}

function particleTag(p: ElementParticle): string {
  const nillable = p.nillable ? ' nillable="true"' : '';
  return `<s:element minOccurs="${p.minOccurs}" maxOccurs="${p.maxOccurs}" name="${escapeXmlAttr(p.name)}"${nillable} type="${escapeXmlAttr(p.type)}" />`;
}

function writeSequence(w: IndentedLines, particles: readonly ElementParticle[]): void {
  if (particles.length === 0) {
    w.line('<s:complexType />');
    return;
  }
  w.open('<s:complexType>');
  w.open('<s:sequence>');
  for (const p of particles) w.line(particleTag(p));
  w.close('</s:sequence>');
  w.close('</s:complexType>');
}

function writeNamedType(w: IndentedLines, t: NamedType, written: Set<string>): void {
  if (written.has(t.name)) return;
  written.add(t.name);
  w.open(`<s:complexType name="${escapeXmlAttr(t.name)}">`);
  w.open('<s:sequence>');
  for (const p of typeParticles(t)) w.line(particleTag(p));
  w.close('</s:sequence>');
  w.close('</s:complexType>');
  for (const ref of typeReferences(t)) writeNamedType(w, ref, written);
}

function writeWrapperElement(w: IndentedLines, name: string, particles: readonly ElementParticle[]): void {
  w.open(`<s:element name="${escapeXmlAttr(name)}">`);
  writeSequence(w, particles);
  w.close('</s:element>');
}

function writeSchema(w: IndentedLines, ops: readonly OperationDef[], httpOps: readonly OperationDef[], ns: string): void {
  const written = new Set<string>();
  w.open(`<s:schema elementFormDefault="qualified" targetNamespace="${escapeXmlAttr(ns)}">`);
  for (const op of ops) {
    writeWrapperElement(w, op.name, op.params.map(paramParticle));
    for (const t of paramReferences(op.params)) writeNamedType(w, t, written);
    writeWrapperElement(w, `${op.name}Response`, [resultParticle(op)]);
    for (const t of resultReferences(op.result)) writeNamedType(w, t, written);
  }
  const roots = new Set<string>();
  for (const op of httpOps) {
    const root = httpRootElement(op.result);
    if (roots.has(root.name)) continue;
    roots.add(root.name);
    const nillable = root.nillable ? ' nillable="true"' : '';
    w.line(`<s:element name="${escapeXmlAttr(root.name)}"${nillable} type="${escapeXmlAttr(root.type)}" />`);
    for (const t of resultReferences(op.result)) writeNamedType(w, t, written);
  }
  w.close('</s:schema>');
}

type HttpVerb = 'Get' | 'Post';

function writeMessages(w: IndentedLines, ops: readonly OperationDef[], httpOps: readonly OperationDef[]): void {
  for (const op of ops) {
    const name = escapeXmlAttr(op.name);
    w.open(`<wsdl:message name="${name}SoapIn">`);
    w.line(`<wsdl:part name="parameters" element="tns:${name}" />`);
    w.close('</wsdl:message>');
    w.open(`<wsdl:message name="${name}SoapOut">`);
    w.line(`<wsdl:part name="parameters" element="tns:${name}Response" />`);
    w.close('</wsdl:message>');
  }
  for (const verb of ['Get', 'Post'] as const satisfies readonly HttpVerb[]) {
    for (const op of httpOps) {
      const name = escapeXmlAttr(op.name);
      if (op.params.length === 0) {
        w.line(`<wsdl:message name="${name}Http${verb}In" />`);
      } else {
        w.open(`<wsdl:message name="${name}Http${verb}In">`);
        for (const p of op.params) w.line(`<wsdl:part name="${escapeXmlAttr(p.name)}" type="s:string" />`);
        w.close('</wsdl:message>');
      }
      w.open(`<wsdl:message name="${name}Http${verb}Out">`);
      w.line(`<wsdl:part name="Body" element="tns:${escapeXmlAttr(httpRootElement(op.result).name)}" />`);
      w.close('</wsdl:message>');
    }
  }
}

function writeDocumentation(w: IndentedLines, text: string): void {
  if (text === '') return;
  w.line(`<wsdl:documentation xmlns:wsdl="${NS.wsdl}">${escapeXmlText(text)}</wsdl:documentation>`);
}

function writePortType(w: IndentedLines, portType: string, suffix: string, ops: readonly OperationDef[]): void {
  w.open(`<wsdl:portType name="${portType}">`);
  for (const op of ops) {
    const name = escapeXmlAttr(op.name);
    w.open(`<wsdl:operation name="${name}">`);
    writeDocumentation(w, op.documentation);
    w.line(`<wsdl:input message="tns:${name}${suffix}In" />`);
    w.line(`<wsdl:output message="tns:${name}${suffix}Out" />`);
    w.close('</wsdl:operation>');
  }
  w.close('</wsdl:portType>');
}

function writeSoapBinding(w: IndentedLines, binding: string, prefix: 'soap' | 'soap12', ops: readonly OperationDef[], ns: string): void {
  w.open(`<wsdl:binding name="${binding}" type="tns:${PORT.soap}">`);
  w.line(`<${prefix}:binding transport="${NS.soapHttpTransport}" />`);
  for (const op of ops) {
    w.open(`<wsdl:operation name="${escapeXmlAttr(op.name)}">`);
    w.line(`<${prefix}:operation soapAction="${escapeXmlAttr(soapActionFor(ns, op.name))}" style="document" />`);
    w.open('<wsdl:input>');
    w.line(`<${prefix}:body use="literal" />`);
    w.close('</wsdl:input>');
    w.open('<wsdl:output>');
    w.line(`<${prefix}:body use="literal" />`);
    w.close('</wsdl:output>');
    w.close('</wsdl:operation>');
  }
  w.close('</wsdl:binding>');
}

function writeHttpBinding(w: IndentedLines, binding: string, verb: 'GET' | 'POST', ops: readonly OperationDef[]): void {
  w.open(`<wsdl:binding name="${binding}" type="tns:${binding}">`);
  w.line(`<http:binding verb="${verb}" />`);
  for (const op of ops) {
    const name = escapeXmlAttr(op.name);
    w.open(`<wsdl:operation name="${name}">`);
    w.line(`<http:operation location="/${name}" />`);
    w.open('<wsdl:input>');
    w.line(verb === 'GET' ? '<http:urlEncoded />' : '<mime:content type="application/x-www-form-urlencoded" />');
    w.close('</wsdl:input>');
    w.open('<wsdl:output>');
    w.line('<mime:mimeXml part="Body" />');
    w.close('</wsdl:output>');
    w.close('</wsdl:operation>');
  }
  w.close('</wsdl:binding>');
}

function writePort(w: IndentedLines, port: string, addressPrefix: 'soap' | 'soap12' | 'http', location: string): void {
  w.open(`<wsdl:port name="${port}" binding="tns:${port}">`);
  w.line(`<${addressPrefix}:address location="${location}" />`);
  w.close('</wsdl:port>');
}

/** Renders the WSDL document for the catalogue. */
export function renderWsdl(opts: MetadataOptions): string {
  const ns = opts.namespace;
  const nsAttr = escapeXmlAttr(ns);
  const location = escapeXmlAttr(opts.serviceUrl);
  const ops = operationList;
  const httpOps = ops.filter(httpBindable);
  const hasHttp = httpOps.length > 0;

  const w = new IndentedLines();
  w.raw(XML_DECLARATION);
  w.open(
    `<wsdl:definitions xmlns:s="${NS.s}" xmlns:soap12="${NS.soap12}" xmlns:http="${NS.http}" xmlns:mime="${NS.mime}"` +
      ` xmlns:tns="${nsAttr}" xmlns:soap="${NS.soap}" xmlns:tm="${NS.tm}" xmlns:soapenc="${NS.soapenc}"` +
      ` targetNamespace="${nsAttr}" xmlns:wsdl="${NS.wsdl}">`,
  );
  w.open('<wsdl:types>');
  writeSchema(w, ops, httpOps, ns);
  w.close('</wsdl:types>');
  writeMessages(w, ops, httpOps);
  writePortType(w, PORT.soap, 'Soap', ops);
  if (hasHttp) {
    writePortType(w, PORT.httpGet, 'HttpGet', httpOps);
    writePortType(w, PORT.httpPost, 'HttpPost', httpOps);
  }
  writeSoapBinding(w, PORT.soap, 'soap', ops, ns);
  writeSoapBinding(w, PORT.soap12, 'soap12', ops, ns);
  if (hasHttp) {
    writeHttpBinding(w, PORT.httpGet, 'GET', httpOps);
    writeHttpBinding(w, PORT.httpPost, 'POST', httpOps);
  }
  w.open(`<wsdl:service name="${SERVICE_NAME}">`);
  writePort(w, PORT.soap, 'soap', location);
  writePort(w, PORT.soap12, 'soap12', location);
  if (hasHttp) {
    writePort(w, PORT.httpGet, 'http', location);
    writePort(w, PORT.httpPost, 'http', location);
  }
  w.close('</wsdl:service>');
  w.close('</wsdl:definitions>');
  return w.join();
}
