import { SaxesParser, type SaxesTagPlain } from 'saxes';
import {
  DTD_PROHIBITED,
  envelopeVersion,
  isNilName,
  isNilTrue,
  MAX_KEPT_DEPTH,
  noBodyError,
  notAnEnvelopeError,
  splitName,
  XmlSyntaxError,
  type SoapEnvelope,
  type SoapVersion,
  type XmlNode,
} from '../../gateway/bindings/soap/envelope.js';

/**
 * Streaming reader of one SOAP envelope on saxes: `write` each decoded chunk as it arrives, then
 * `end`. It keeps only the operation element's subtree (headers are skipped), matching elements
 * by local name with any prefix. The gateway reads bodies with the byte scanner
 * (gateway/bindings/soap/scanner/); this reader, kept with the tests, is the oracle the scanner is
 * proven equal to (test/unit/gateway/bindings/soap/scanner/scanner-differential.unit.test.ts, npm run diff:scanner). Production code never
 * imports it.
 *
 * saxes runs without its namespace processing, which cost a third of the parse (bench/parse.ts):
 * the only namespaces that matter are the Envelope's, declared on the Envelope itself (it is the
 * root), and the operation element's, resolved from its own or the Envelope's declarations.
 */
export class EnvelopeReader {
  private readonly parser: SaxesParser<{ xmlns: false; position: true }>;
  /** Namespace declarations of the Envelope: prefix ('' for the default) → URI. */
  private rootNamespaces = new Map<string, string>();
  private depth = 0;
  private inBody = false;
  private bodyDepthSeen = false;
  private version: SoapVersion | null = null;
  private operation: SoapEnvelope['operation'] = null;
  /** Open kept containers by depth (3 = operation element); null = ignored subtree. */
  private readonly nodes: ({ children: XmlNode[] } | XmlNode | null | undefined)[] = [];
  private error: Error | null = null;

  constructor() {
    this.parser = new SaxesParser({ xmlns: false, position: true });
    this.parser.on('doctype', () => {
      this.fail(new XmlSyntaxError(DTD_PROHIBITED));
    });
    this.parser.on('opentag', (tag) => {
      try {
        this.open(tag);
      } catch (err) {
        this.fail(err instanceof Error ? err : new Error(String(err)));
      }
    });
    this.parser.on('closetag', () => this.close());
    this.parser.on('text', (text) => this.text(text));
    this.parser.on('cdata', (text) => this.text(text));
    this.parser.on('error', (err) => {
      this.fail(new XmlSyntaxError(err.message));
    });
  }

  write(chunk: string): void {
    this.throwIfFailed();
    this.parser.write(chunk);
    this.throwIfFailed();
  }

  /** The parser reports errors through a callback; this surfaces the first one to the caller. */
  private throwIfFailed(): void {
    if (this.error !== null) throw this.error;
  }

  end(): SoapEnvelope {
    this.throwIfFailed();
    this.parser.close();
    this.throwIfFailed();
    if (this.version === null) throw notAnEnvelopeError();
    if (!this.bodyDepthSeen) throw noBodyError();
    const envelope: SoapEnvelope = { version: this.version, operation: this.operation };
    this.reset();
    return envelope;
  }

  private reset(): void {
    this.depth = 0;
    this.inBody = false;
    this.bodyDepthSeen = false;
    this.version = null;
    this.operation = null;
    this.nodes.length = 0;
    this.rootNamespaces = new Map();
    this.error = null;
  }

  private fail(err: Error): void {
    if (this.error === null) this.error = err;
    // Stop the parser from doing more work on this document.
    throw err;
  }

  private open(tag: SaxesTagPlain): void {
    const depth = ++this.depth;
    const { prefix, local } = splitName(tag.name);
    if (depth === 1) {
      for (const name in tag.attributes) {
        if (name === 'xmlns') this.rootNamespaces.set('', tag.attributes[name] ?? '');
        else if (name.startsWith('xmlns:')) this.rootNamespaces.set(name.slice(6), tag.attributes[name] ?? '');
      }
      const uri = this.rootNamespaces.get(prefix);
      if (uri === undefined && prefix !== '') throw new XmlSyntaxError(`1:${tag.name.length + 1}: unbound namespace prefix: "${prefix}".`);
      this.version = envelopeVersion(tag.name, local, uri ?? '');
      return;
    }
    if (depth === 2) {
      if (local === 'Body' && !this.bodyDepthSeen) {
        this.inBody = true;
        this.bodyDepthSeen = true;
      }
      return;
    }
    if (!this.inBody) return;
    if (depth === 3) {
      // Only the first Body child is the call; later siblings are ignored.
      if (this.operation === null) {
        const own = tag.attributes[prefix === '' ? 'xmlns' : `xmlns:${prefix}`];
        this.operation = { name: local, namespace: own ?? this.rootNamespaces.get(prefix) ?? '', children: [] };
        this.nodes[3] = this.operation;
      } else this.nodes[3] = null;
      return;
    }
    const parent = this.nodes[depth - 1];
    if (depth > MAX_KEPT_DEPTH || parent === null || parent === undefined) {
      this.nodes[depth] = null;
      return;
    }
    const node: XmlNode = { name: local, text: isNil(tag) ? null : '', children: [] };
    parent.children.push(node);
    this.nodes[depth] = node;
  }

  private close(): void {
    const depth = this.depth--;
    if (depth === 2) this.inBody = false;
    if (depth >= 3) this.nodes[depth] = null;
  }

  private text(text: string): void {
    if (!this.inBody || this.depth < 4) return;
    const node = this.nodes[this.depth];
    if (node !== null && node !== undefined && 'text' in node && node.text !== null) node.text += text;
  }
}

/** `xsi:nil="true"` under any prefix (only XML Schema instance defines a `nil` attribute). */
function isNil(tag: SaxesTagPlain): boolean {
  for (const key in tag.attributes) {
    if (isNilName(key)) return isNilTrue(tag.attributes[key] ?? '');
  }
  return false;
}
