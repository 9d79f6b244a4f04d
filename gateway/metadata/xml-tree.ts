import { SaxesParser } from 'saxes';
import { errorMessage } from '../../shared/util/error-message.js';

/**
 * A small namespace-aware element tree over saxes, for reading metadata documents (a deployment's
 * captured WSDL). Every attribute keeps the span of its raw value in the source text, so a value
 * can be replaced while every other byte of the document stays as it was.
 */
export interface XmlElement {
  readonly name: string;
  readonly local: string;
  readonly uri: string;
  /** Attribute values (entities resolved), by qualified name as written. */
  readonly attrs: ReadonlyMap<string, string>;
  /** Raw value spans in the source: [start, end) between the quotes, by qualified name. */
  readonly spans: ReadonlyMap<string, Span>;
  /** Namespace bindings in scope (prefix '' is the default namespace). */
  readonly scope: Readonly<Record<string, string>>;
  readonly children: XmlElement[];
  readonly parent: XmlElement | null;
  /** Text content directly inside this element. */
  text: string;
}

export interface Span {
  readonly start: number;
  readonly end: number;
}

interface XmlDocument {
  readonly root: XmlElement;
  /** The encoding named by the XML declaration, or null without one. */
  readonly declaredEncoding: string | null;
}

export class XmlParseError extends Error {}

/** Parses a whole document; any well-formedness or namespace error throws XmlParseError. */
export function parseXmlTree(xml: string): XmlDocument {
  const parser = new SaxesParser({ xmlns: true });
  const stack: XmlElement[] = [];
  // Set by the parser's callbacks, so typed wide: TypeScript cannot see those assignments.
  let root = null as XmlElement | null;
  let declaredEncoding: string | null = null;
  let pendingSpans = new Map<string, Span>();

  parser.on('xmldecl', (decl) => {
    declaredEncoding = decl.encoding ?? null;
  });
  parser.on('attribute', (attr) => {
    // Called as the closing quote is consumed: the raw value lies between it and the previous
    // occurrence of the same quote character (a quoted value cannot contain its own delimiter).
    const close = parser.position - 1;
    const quote = xml[close] ?? '"';
    pendingSpans.set(attr.name, { start: xml.lastIndexOf(quote, close - 1) + 1, end: close });
  });
  parser.on('opentag', (tag) => {
    const parent = stack[stack.length - 1] ?? null;
    const attrs = new Map<string, string>();
    for (const a of Object.values(tag.attributes)) attrs.set(a.name, a.value);
    const node: XmlElement = {
      name: tag.name,
      local: tag.local,
      uri: tag.uri,
      attrs,
      spans: pendingSpans,
      scope: { ...(parent?.scope ?? {}), ...tag.ns },
      children: [],
      parent,
      text: '',
    };
    pendingSpans = new Map();
    if (parent !== null) parent.children.push(node);
    else root = node;
    stack.push(node);
  });
  parser.on('text', (t) => {
    const top = stack[stack.length - 1];
    if (top !== undefined) top.text += t;
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  try {
    parser.write(xml).close();
  } catch (err) {
    throw new XmlParseError(errorMessage(err));
  }
  if (root === null) throw new XmlParseError('the document has no root element');
  return { root, declaredEncoding };
}

/** Children of `node` with the given namespace and local name. */
export function childrenNamed(node: XmlElement, uri: string, local: string): XmlElement[] {
  return node.children.filter((c) => c.uri === uri && c.local === local);
}

/** Resolves a QName-valued attribute (`tns:Login`) against the namespaces in scope of `node`. */
export function resolveQName(node: XmlElement, value: string): { uri: string; local: string } | null {
  const i = value.indexOf(':');
  const prefix = i < 0 ? '' : value.slice(0, i);
  const uri = node.scope[prefix];
  if (uri === undefined) return null;
  return { uri, local: value.slice(i + 1) };
}
