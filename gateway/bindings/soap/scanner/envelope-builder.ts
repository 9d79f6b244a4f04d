import type { Cursor } from './cursor.js';
import {
  envelopeVersion,
  isNilTrue,
  MAX_KEPT_DEPTH,
  noBodyError,
  notAnEnvelopeError,
  splitName,
  type SoapEnvelope,
  type SoapVersion,
  type XmlNode,
} from '../envelope.js';
import type { StartTag } from './tags.js';

type Container = { children: XmlNode[] };

/**
 * What the SOAP binding keeps of a document, built from the scanner's element events with the
 * rules of the saxes-based EnvelopeReader: the Envelope's namespace gives the version (its prefix
 * resolved from its own declarations); headers are skipped; the first element inside the first
 * Body is the operation, its namespace taken from its own declaration or the Envelope's; its
 * subtree is kept to MAX_KEPT_DEPTH with the text of each element (null for xsi:nil).
 */
export class EnvelopeBuilder {
  depth = 0;
  /** The element that character data at the current depth belongs to, or null when it is not kept. */
  textTarget: XmlNode | null = null;
  private inBody = false;
  private bodySeen = false;
  private version: SoapVersion | null = null;
  private operation: SoapEnvelope['operation'] = null;
  /** Whether the element open at depth 3 is the operation (the first Body child). */
  private inOperation = false;
  /**
   * Kept elements by depth, 4 to MAX_KEPT_DEPTH; null = ignored subtree. A packed array of one
   * element type, always MAX_KEPT_DEPTH + 1 long (deeper elements are never kept).
   */
  private readonly nodes: (XmlNode | null)[] = new Array<XmlNode | null>(MAX_KEPT_DEPTH + 1).fill(null);
  /** Namespace declarations of the Envelope: prefix ('' for the default) → URI. */
  private readonly rootNamespaces = new Map<string, string>();

  reset(): void {
    this.depth = 0;
    this.textTarget = null;
    this.inBody = false;
    this.bodySeen = false;
    this.version = null;
    this.operation = null;
    this.inOperation = false;
    this.nodes.fill(null);
    this.rootNamespaces.clear();
  }

  open(tag: StartTag, c: Cursor): void {
    const depth = ++this.depth;
    this.textTarget = null;
    if (depth === 1) {
      this.openRoot(tag, c);
      return;
    }
    if (depth === 2) {
      if (!this.bodySeen && tag.localIs('Body')) this.inBody = this.bodySeen = true;
      return;
    }
    if (!this.inBody) return;
    if (depth === 3) {
      // Only the first Body child is the call; later siblings are ignored.
      this.inOperation = this.operation === null;
      if (this.inOperation) {
        const prefix = tag.prefix();
        const own = attribute(tag, prefix === '' ? 'xmlns' : `xmlns:${prefix}`);
        this.operation = { name: tag.localName(), namespace: own ?? this.rootNamespaces.get(prefix) ?? '', children: [] };
      }
      return;
    }
    if (depth > MAX_KEPT_DEPTH) return;
    const parent: Container | null = depth === 4 ? (this.inOperation ? this.operation : null) : this.nodes[depth - 1]!;
    if (parent === null) {
      this.nodes[depth] = null;
      return;
    }
    const node: XmlNode = { name: tag.localName(), text: isNil(tag) ? null : '', children: [] };
    parent.children.push(node);
    this.nodes[depth] = node;
    if (node.text !== null) this.textTarget = node;
  }

  close(): void {
    const depth = this.depth--;
    if (depth === 2) this.inBody = false;
    if (depth === 3) this.inOperation = false;
    else if (depth >= 4 && depth <= MAX_KEPT_DEPTH) this.nodes[depth] = null;
    const parent = this.inBody && this.depth >= 4 && this.depth <= MAX_KEPT_DEPTH ? this.nodes[this.depth]! : null;
    this.textTarget = parent !== null && parent.text !== null ? parent : null;
  }

  text(text: string): void {
    const node = this.textTarget;
    // Only an element whose text is not nil becomes the target (see open()).
    if (node !== null) node.text = node.text! + text;
  }

  finish(): SoapEnvelope {
    if (this.version === null) throw notAnEnvelopeError();
    if (!this.bodySeen) throw noBodyError();
    return { version: this.version, operation: this.operation };
  }

  private openRoot(tag: StartTag, c: Cursor): void {
    for (let k = 0; k < tag.count; k++) {
      if (tag.attrNameIs(k, 'xmlns')) this.rootNamespaces.set('', tag.attrValue(k));
      else if (tag.attrNameStarts(k, 'xmlns:')) this.rootNamespaces.set(tag.attrName(k).slice(6), tag.attrValue(k));
    }
    const name = tag.name();
    const { prefix, local } = splitName(name);
    const uri = this.rootNamespaces.get(prefix);
    if (uri === undefined && prefix !== '') c.fail(tag.colon, `unbound namespace prefix: "${prefix}".`);
    this.version = envelopeVersion(name, local, uri ?? '');
  }
}

/** The value of the attribute named exactly `name`, or undefined. */
function attribute(tag: StartTag, name: string): string | undefined {
  for (let k = 0; k < tag.count; k++) if (tag.attrNameIs(k, name)) return tag.attrValue(k);
  return undefined;
}

/** The first attribute called `nil` under any prefix decides (as EnvelopeReader's isNil). */
function isNil(tag: StartTag): boolean {
  for (let k = 0; k < tag.count; k++) if (tag.attrIsNil(k)) return isNilTrue(tag.attrValue(k));
  return false;
}
