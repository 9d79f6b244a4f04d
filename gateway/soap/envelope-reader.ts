import { SaxesParser, type SaxesTagPlain } from 'saxes';

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
export class XmlSyntaxError extends Error {}

/** Well-formed but not a SOAP envelope this service understands. */
export class EnvelopeError extends Error {
  constructor(
    message: string,
    readonly kind: 'VersionMismatch' | 'Client',
  ) {
    super(message);
  }
}

// Depth 4 parameters, 5 array items, 6 item fields: deeper content is ignored.
const MAX_KEPT_DEPTH = 6;

/**
 * Streaming reader of one SOAP envelope: `write` each decoded chunk as it arrives, then `end`.
 * It keeps only the operation element's subtree (headers are skipped), matching elements by
 * local name with any prefix. A reader is reusable after `end` succeeds (see ReaderPool).
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
      this.fail(new XmlSyntaxError('DTD is prohibited in this XML document.'));
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
    if (this.error !== null) throw this.error;
    this.parser.write(chunk);
    if (this.error !== null) throw this.error;
  }

  end(): SoapEnvelope {
    if (this.error !== null) throw this.error;
    this.parser.close();
    if (this.error !== null) throw this.error;
    if (this.version === null) throw new EnvelopeError('The root element is not a SOAP Envelope.', 'VersionMismatch');
    if (!this.bodyDepthSeen) throw new EnvelopeError('The SOAP message has no Body element.', 'Client');
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

function splitName(name: string): { prefix: string; local: string } {
  const colon = name.indexOf(':');
  return colon < 0 ? { prefix: '', local: name } : { prefix: name.slice(0, colon), local: name.slice(colon + 1) };
}

function envelopeVersion(name: string, local: string, uri: string): SoapVersion {
  if (local !== 'Envelope') {
    throw new EnvelopeError(`The root element ${name} is not a SOAP Envelope.`, 'VersionMismatch');
  }
  if (uri === SOAP11_NS) return '1.1';
  if (uri === SOAP12_NS) return '1.2';
  throw new EnvelopeError(
    `Possible SOAP version mismatch: Envelope namespace ${uri} was unexpected. Expecting ${SOAP11_NS}.`,
    'VersionMismatch',
  );
}

/** `xsi:nil="true"` under any prefix (only XML Schema instance defines a `nil` attribute). */
function isNil(tag: SaxesTagPlain): boolean {
  for (const key in tag.attributes) {
    if (key === 'nil' || key.endsWith(':nil')) {
      const v = (tag.attributes[key] ?? '').trim();
      return v === 'true' || v === '1';
    }
  }
  return false;
}

/** Readers are reused across requests; one that saw an error is dropped (saxes can't reset it). */
export class ReaderPool {
  private readonly free: EnvelopeReader[] = [];
  constructor(private readonly max = 256) {}

  acquire(): EnvelopeReader {
    return this.free.pop() ?? new EnvelopeReader();
  }

  release(reader: EnvelopeReader): void {
    if (this.free.length < this.max) this.free.push(reader);
  }
}
