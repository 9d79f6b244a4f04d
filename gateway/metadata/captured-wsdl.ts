/**
 * `WSDL_FILE`: a deployment's captured WSDL, served verbatim (its documentation texts, its order,
 * its prefixes) with only the `location` of each port address rewritten to the request's URL or
 * PUBLIC_URL. At start the file is compared with the gateway's own WSDL (wsdl-contract.ts): the
 * file is the clients' contract, so the gateway must serve all it declares, and a start is refused
 * naming each operation, binding, parameter or type member it declares that the gateway does not
 * serve; what the gateway serves beyond it (a newer gateway's operations and fields) is listed for
 * a line in the start's log. See docs/protocol.md §Metadata.
 */
import { readFileSync } from 'node:fs';
import { findOperation, isArrayParam } from '../../shared/catalogue/index.js';
import { ConfigError } from '../../shared/config/index.js';
import { errorMessage } from '../../shared/util/error-message.js';
import { renderWsdl } from './wsdl.js';
import { compareContracts, contractOf, HTTP, SOAP, SOAP12, WSDL, type FactPath, type Facts } from './wsdl-contract.js';
import { escapeXmlAttr } from './xml-escape.js';
import { childrenNamed, parseXmlTree, resolveQName, XmlParseError, type Span, type XmlElement } from './xml-tree.js';

const ADDRESS_NAMESPACES = new Set([SOAP, SOAP12, HTTP]);

interface CapturedWsdl {
  /** The file's text with every port address `location` set to `serviceUrl`. */
  render(serviceUrl: string): string;
  /** Local names of the bindings of the SOAP 1.1 and SOAP 1.2 ports, in document order (for ?disco). */
  readonly soapBindings: readonly string[];
  /** What the gateway serves that the file does not declare, one entry per topmost difference. */
  readonly beyond: readonly string[];
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
  const { notServed, beyond } = againstTheGateway(defs, namespace);
  if (notServed.length > 0) {
    throw new ConfigError(
      `${label} declares what this gateway does not serve: ${notServed.join('; ')} (a captured WSDL may declare less than the gateway serves, never more).`,
    );
  }
  const ports = portAddresses(defs);
  return {
    render: renderer(text, ports.map((p) => p.location)),
    soapBindings: ports.filter((p) => p.kind !== HTTP).map((p) => p.binding),
    beyond,
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

/** The gateway's own contract in `namespace`: its generated WSDL read as a captured one is. */
function servedContract(namespace: string): Facts {
  return contractOf(parseXmlTree(renderWsdl({ namespace, serviceUrl: 'http://localhost/' })).root, namespace);
}

/**
 * The file's facts the gateway does not serve (why the start is refused), and the gateway's facts
 * the file lacks (what it serves beyond it), each as one readable entry.
 */
function againstTheGateway(defs: XmlElement, namespace: string): { notServed: string[]; beyond: string[] } {
  const captured = contractOf(defs, namespace);
  const comparison = compareContracts(captured, servedContract(namespace));
  const notServed: string[] = [];
  if (![...captured.keys()].some((label) => label.startsWith('operation '))) {
    notServed.push('it declares no operation (no wsdl:port whose binding and portType it defines)');
  }
  const extraOperations = topLabels(comparison.notServed.map((f) => f.path));
  for (const f of comparison.notServed) {
    if (saidOfItsOperation(f.path, extraOperations)) continue;
    notServed.push(f.served === undefined ? f.path.join(': ') : `${f.path.join(': ')} is ${f.captured ?? 'missing'} in the file, ${f.served ?? 'missing'} in the gateway`);
  }
  const missingOperations = topLabels(comparison.beyond);
  const beyond: string[] = [];
  for (const path of comparison.beyond) {
    if (saidOfItsOperation(path, missingOperations)) continue;
    const required = requiredOverHttp(path);
    if (required === null) beyond.push(path.join(': '));
    else notServed.push(required);
  }
  return { notServed, beyond: beyond.sort() };
}

function topLabels(paths: readonly FactPath[]): Set<string> {
  return new Set(paths.flatMap((path) => (path.length === 1 && path[0] !== undefined ? [path[0]] : [])));
}

/** `binding K: operation X` when `operation X` is said already: an operation is named once, not again per binding. */
function saidOfItsOperation(path: FactPath, operations: ReadonlySet<string>): boolean {
  return path.length === 2 && path[0]?.startsWith('binding ') === true && path[1] !== undefined && operations.has(path[1]);
}

/**
 * A parameter an HTTP GET or POST binding of the file lacks is beyond it when it is a string;
 * any other is required over HTTP (`missingParameter`), so that binding's clients would fail.
 */
function requiredOverHttp(path: FactPath): string | null {
  const [binding, operation, parameter] = path;
  if (binding?.startsWith('binding HTTP ') !== true || operation === undefined || parameter === undefined) return null;
  const param = findOperation(operation.slice('operation '.length))?.params.find((p) => `parameter ${p.name}` === parameter);
  if (param === undefined || isArrayParam(param) || param.type === 'string') return null;
  return `${path.join(': ')} is missing, and the gateway requires it over HTTP GET and POST (it is not a string)`;
}
