import { XmlEnvelopeScanner } from '../../../gateway/bindings/soap/scanner/scanner.js';
import type { Cursor } from '../../../gateway/bindings/soap/scanner/cursor.js';
import { MAX_KEPT_DEPTH, type SoapEnvelope, type SoapVersion, type XmlNode } from '../../../gateway/bindings/soap/envelope.js';
import { attribute, EnvelopeLevels, isNil } from '../../../gateway/bindings/soap/scanner/envelope-levels.js';
import type { StartTag } from '../../../gateway/bindings/soap/scanner/tags.js';

type Container = { children: XmlNode[] };

/**
 * The reference sink: what the SOAP binding kept of a document before operations were compiled,
 * a node tree of the operation's subtree to MAX_KEPT_DEPTH with the text of each element (null
 * for xsi:nil), its namespace taken from its own declaration or the Envelope's. The compiled path
 * (gateway/bindings/soap/compiled/) is proven equal to this plus decodeSoapArguments
 * (soap-arguments.ts beside this file). Test and bench code only.
 */
export class EnvelopeBuilder extends EnvelopeLevels<SoapEnvelope> {
  /** The element that character data at the current depth belongs to, or null when it is not kept. */
  textTarget: XmlNode | null = null;
  private operation: SoapEnvelope['operation'] = null;
  /**
   * Kept elements by depth, 4 to MAX_KEPT_DEPTH; null = ignored subtree. A packed array of one
   * element type, always MAX_KEPT_DEPTH + 1 long (deeper elements are never kept).
   */
  private readonly nodes: (XmlNode | null)[] = new Array<XmlNode | null>(MAX_KEPT_DEPTH + 1).fill(null);
  /** Namespace declarations of the Envelope: prefix ('' for the default) → URI. */
  private readonly rootNamespaces = new Map<string, string>();

  text(text: string): void {
    const node = this.textTarget;
    // Only an element whose text is not nil becomes the target (see openKept()).
    if (node !== null) node.text = node.text! + text;
  }

  protected clear(): void {
    this.textTarget = null;
    this.operation = null;
    this.nodes.fill(null);
    this.rootNamespaces.clear();
  }

  protected openEnvelope(tag: StartTag): void {
    for (let k = 0; k < tag.count; k++) {
      if (tag.attrNameIs(k, 'xmlns')) this.rootNamespaces.set('', tag.attrValue(k));
      else if (tag.attrNameStarts(k, 'xmlns:')) this.rootNamespaces.set(tag.attrName(k).slice(6), tag.attrValue(k));
    }
  }

  protected openOperation(tag: StartTag): void {
    this.textTarget = null;
    const prefix = tag.prefix();
    const own = attribute(tag, prefix === '' ? 'xmlns' : `xmlns:${prefix}`);
    this.operation = { name: tag.localName(), namespace: own ?? this.rootNamespaces.get(prefix) ?? '', children: [] };
  }

  protected openKept(tag: StartTag, _c: Cursor, depth: number): void {
    this.textTarget = null;
    const parent: Container | null = depth === 4 ? this.operation : this.nodes[depth - 1]!;
    if (parent === null) {
      this.nodes[depth] = null;
      return;
    }
    const node: XmlNode = { name: tag.localName(), text: isNil(tag) ? null : '', children: [] };
    parent.children.push(node);
    this.nodes[depth] = node;
    if (node.text !== null) {
      this.textTarget = node;
      this.keepsText = true;
    }
  }

  protected closeKept(depth: number): void {
    this.nodes[depth] = null;
  }

  protected keepsTextAt(depth: number): boolean {
    const node = this.nodes[depth] ?? null;
    this.textTarget = node !== null && node.text !== null ? node : null;
    return this.textTarget !== null;
  }

  protected result(version: SoapVersion): SoapEnvelope {
    return { version, operation: this.operation };
  }
}

/** The scanner with the reference sink: the operation's subtree as a node tree (SoapEnvelope). */
export class EnvelopeScanner extends XmlEnvelopeScanner<SoapEnvelope> {
  constructor() {
    super(new EnvelopeBuilder());
  }
}
