/**
 * `WSDL_FILE`: a deployment's captured WSDL, served verbatim (its documentation texts, its order,
 * its prefixes) with only the `location` of each port address rewritten to the request's URL or
 * PUBLIC_URL. At start the file is checked against the operation catalogue: a WSDL that promises
 * clients an operation, a parameter or a type the gateway does not serve refuses the start.
 * See docs/protocol.md §Metadata.
 */
import { readFileSync } from 'node:fs';
import {
  httpBindable,
  isArrayParam,
  operationList,
  type ArrayType,
  type ComplexType,
  type OperationDef,
} from '../../shared/catalogue/index.js';
import { ConfigError } from '../../shared/config/index.js';
import { escapeXmlAttr } from './xml-escape.js';
import { childrenNamed, parseXmlTree, resolveQName, XmlParseError, type Span, type XmlElement } from './xml-tree.js';
import { errorMessage } from '../../shared/util/error-message.js';

const WSDL = 'http://schemas.xmlsoap.org/wsdl/';
const XSD = 'http://www.w3.org/2001/XMLSchema';
const SOAP = 'http://schemas.xmlsoap.org/wsdl/soap/';
const SOAP12 = 'http://schemas.xmlsoap.org/wsdl/soap12/';
const HTTP = 'http://schemas.xmlsoap.org/wsdl/http/';
const ADDRESS_NAMESPACES = new Set([SOAP, SOAP12, HTTP]);

interface CapturedWsdl {
  /** The file's text with every port address `location` set to `serviceUrl`. */
  render(serviceUrl: string): string;
  /** Local names of the bindings of the SOAP 1.1 and SOAP 1.2 ports, in document order (for ?disco). */
  readonly soapBindings: readonly string[];
}

/** Reads, checks and prepares `path`; throws ConfigError naming every difference found. */
export function loadCapturedWsdl(path: string, namespace: string): CapturedWsdl {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw new ConfigError(`WSDL_FILE ${path} cannot be read: ${errorMessage(err)}`);
  }
  return parseCapturedWsdl(bytes, namespace, `WSDL_FILE ${path}`);
}

/** The checks and preparation of loadCapturedWsdl on bytes already read; `label` names the source in errors. */
export function parseCapturedWsdl(bytes: Uint8Array, namespace: string, label: string): CapturedWsdl {
  let text: string;
  try {
    // ignoreBOM keeps a byte order mark in the text, so it is served back as it was.
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new ConfigError(`${label} is not valid UTF-8.`);
  }
  let doc;
  try {
    doc = parseXmlTree(text);
  } catch (err) {
    if (err instanceof XmlParseError) throw new ConfigError(`${label} is not well-formed XML: ${err.message}`);
    throw err;
  }
  const encoding = doc.declaredEncoding?.toLowerCase() ?? 'utf-8';
  if (encoding !== 'utf-8' && encoding !== 'utf8') {
    throw new ConfigError(`${label} declares encoding="${doc.declaredEncoding}"; it is served as UTF-8, so save it as UTF-8.`);
  }
  const defs = doc.root;
  if (defs.uri !== WSDL || defs.local !== 'definitions') {
    throw new ConfigError(`${label} is not a WSDL 1.1 document (its root is <${defs.name}>).`);
  }
  const target = defs.attrs.get('targetNamespace') ?? '';
  if (target !== namespace) {
    throw new ConfigError(`${label} has targetNamespace "${target}" but SERVICE_NAMESPACE is "${namespace}"; they must be the same.`);
  }
  const differences = new WsdlChecker(defs, namespace).differences();
  if (differences.length > 0) {
    throw new ConfigError(`${label} does not describe the service this gateway serves: ${differences.join('; ')}.`);
  }
  const ports = portAddresses(defs);
  return {
    render: renderer(text, ports.map((p) => p.location)),
    soapBindings: ports.filter((p) => p.kind !== HTTP).map((p) => p.binding),
  };
}

interface PortAddress {
  readonly kind: string;
  readonly binding: string;
  readonly location: Span;
}

/** Every `wsdl:service/wsdl:port/{soap,soap12,http}:address/@location`, in document order. */
function portAddresses(defs: XmlElement): PortAddress[] {
  const out: PortAddress[] = [];
  for (const service of childrenNamed(defs, WSDL, 'service')) {
    for (const port of childrenNamed(service, WSDL, 'port')) {
      const binding = resolveQName(port, port.attrs.get('binding') ?? '')?.local ?? '';
      for (const address of port.children) {
        const location = address.spans.get('location');
        if (address.local === 'address' && ADDRESS_NAMESPACES.has(address.uri) && location !== undefined) {
          out.push({ kind: address.uri, binding, location });
        }
      }
    }
  }
  return out;
}

/** Splits the text around the location values once; each request only joins the pieces. */
function renderer(text: string, spans: readonly Span[]): (serviceUrl: string) => string {
  const pieces: string[] = [];
  const quotes: string[] = [];
  let at = 0;
  for (const span of spans) {
    pieces.push(text.slice(at, span.start));
    quotes.push(text[span.end] ?? '"');
    at = span.end;
  }
  const tail = text.slice(at);
  return (serviceUrl) => {
    let out = '';
    pieces.forEach((piece, i) => {
      out += piece + (quotes[i] === "'" ? escapeXmlAttr(serviceUrl).replace(/'/g, '&apos;') : escapeXmlAttr(serviceUrl));
    });
    return out + tail;
  };
}

/** Compares the WSDL's operations, parameters and types with the catalogue. */
class WsdlChecker {
  private readonly elements = new Map<string, XmlElement>();
  private readonly types = new Map<string, XmlElement>();
  private readonly found: string[] = [];

  constructor(
    private readonly defs: XmlElement,
    private readonly namespace: string,
  ) {
    for (const types of childrenNamed(defs, WSDL, 'types')) {
      for (const schema of childrenNamed(types, XSD, 'schema')) {
        if (schema.attrs.get('targetNamespace') !== namespace) continue;
        for (const e of childrenNamed(schema, XSD, 'element')) this.elements.set(e.attrs.get('name') ?? '', e);
        for (const t of childrenNamed(schema, XSD, 'complexType')) this.types.set(t.attrs.get('name') ?? '', t);
      }
    }
  }

  differences(): string[] {
    const soapPortType = this.portTypesOfAddress(SOAP)[0];
    if (soapPortType === undefined) {
      this.found.push('it has no SOAP 1.1 port (wsdl:port with soap:address) whose binding and portType it defines');
    } else {
      const declared = this.operationsOf(soapPortType);
      for (const op of operationList) {
        const wsdlOp = declared.get(op.name);
        if (wsdlOp === undefined) this.found.push(`operation ${op.name} is missing`);
        else this.checkSoapOperation(op, wsdlOp);
      }
      for (const name of declared.keys()) {
        if (!operationList.some((op) => op.name === name)) this.found.push(`operation ${name} is not served by the gateway`);
      }
    }
    for (const portType of this.portTypesOfAddress(HTTP)) this.checkHttpOperations(portType);
    this.checkTypes();
    return [...new Set(this.found)]; // the HTTP GET and POST port types repeat the same findings
  }

  private qnameTarget(node: XmlElement, attr: string): string | null {
    const q = resolveQName(node, node.attrs.get(attr) ?? '');
    return q !== null && q.uri === this.namespace ? q.local : null;
  }

  private named(local: string, name: string | null): XmlElement | null {
    if (name === null) return null;
    return childrenNamed(this.defs, WSDL, local).find((n) => n.attrs.get('name') === name) ?? null;
  }

  /** The portTypes behind the ports whose address is in `addressNs` (those it defines), in document order. */
  private portTypesOfAddress(addressNs: string): XmlElement[] {
    const out: XmlElement[] = [];
    for (const service of childrenNamed(this.defs, WSDL, 'service')) {
      for (const port of childrenNamed(service, WSDL, 'port')) {
        if (!port.children.some((c) => c.uri === addressNs && c.local === 'address')) continue;
        const binding = this.named('binding', this.qnameTarget(port, 'binding'));
        const portType = binding === null ? null : this.named('portType', this.qnameTarget(binding, 'type'));
        if (portType !== null) out.push(portType);
      }
    }
    return out;
  }

  private operationsOf(portType: XmlElement): Map<string, XmlElement> {
    return new Map(childrenNamed(portType, WSDL, 'operation').map((o) => [o.attrs.get('name') ?? '', o]));
  }

  /** The parts of the message an operation's input or output refers to. */
  private parts(operation: XmlElement, direction: 'input' | 'output'): XmlElement[] {
    const io = childrenNamed(operation, WSDL, direction)[0];
    const message = io === undefined ? null : this.named('message', this.qnameTarget(io, 'message'));
    return message === null ? [] : childrenNamed(message, WSDL, 'part');
  }

  /** Names of the elements of a schema element's or complexType's sequence; null if there is none. */
  private sequenceNames(node: XmlElement): string[] {
    const complex = node.local === 'complexType' ? node : childrenNamed(node, XSD, 'complexType')[0];
    const sequence = complex === undefined ? undefined : childrenNamed(complex, XSD, 'sequence')[0];
    return sequence === undefined ? [] : childrenNamed(sequence, XSD, 'element').map((e) => e.attrs.get('name') ?? '');
  }

  private wrapper(operation: XmlElement, direction: 'input' | 'output'): XmlElement | null {
    const part = this.parts(operation, direction)[0];
    return part === undefined ? null : (this.elements.get(this.qnameTarget(part, 'element') ?? '') ?? null);
  }

  private checkSoapOperation(op: OperationDef, wsdlOp: XmlElement): void {
    const input = this.wrapper(wsdlOp, 'input');
    if (input === null) {
      this.found.push(`${op.name}: its input element is not defined in the schema`);
    } else {
      this.compareNames(`${op.name}: parameter`, op.params.map((p) => p.name), this.sequenceNames(input));
    }
    const output = this.wrapper(wsdlOp, 'output');
    const result = `${op.name}Result`;
    if (output === null) this.found.push(`${op.name}: its output element is not defined in the schema`);
    else this.compareNames(`${op.name}: result element`, [result], this.sequenceNames(output));
  }

  private checkHttpOperations(portType: XmlElement): void {
    for (const [name, wsdlOp] of this.operationsOf(portType)) {
      const op = operationList.find((o) => o.name === name);
      if (op === undefined) continue; // already reported for the SOAP port type
      if (!httpBindable(op)) {
        this.found.push(`operation ${name} is bound to HTTP GET/POST but the gateway serves it over SOAP only`);
        continue;
      }
      const parts = this.parts(wsdlOp, 'input').map((p) => p.attrs.get('name') ?? '');
      this.compareNames(`${name} (HTTP): parameter`, op.params.map((p) => p.name), parts);
    }
  }

  private checkTypes(): void {
    const seen = new Map<string, ComplexType | ArrayType>();
    const add = (t: ComplexType | ArrayType): void => {
      seen.set(t.name, t);
      if (t.kind === 'array' && typeof t.item !== 'string') add(t.item);
    };
    for (const op of operationList) {
      for (const p of op.params) if (isArrayParam(p)) add(p.type);
      if (op.result.kind !== 'scalar') add(op.result.type);
    }
    for (const t of seen.values()) {
      const declared = this.types.get(t.name);
      if (declared === undefined) {
        this.found.push(`type ${t.name} is missing`);
        continue;
      }
      const expected = t.kind === 'complex' ? t.fields.map((f) => f.name) : [typeof t.item === 'string' ? t.item : t.item.name];
      this.compareNames(`type ${t.name}: element`, expected, this.sequenceNames(declared));
    }
  }

  /** Reports names the gateway reads but the WSDL lacks, and names the WSDL has but the gateway ignores. */
  private compareNames(what: string, expected: readonly string[], actual: readonly string[]): void {
    for (const name of expected) if (!actual.includes(name)) this.found.push(`${what} ${name} is missing`);
    for (const name of actual) if (!expected.includes(name)) this.found.push(`${what} ${name} is not served by the gateway`);
  }
}
