import type { Cursor } from './cursor.js';
import {
  envelopeVersion,
  isNilTrue,
  MAX_KEPT_DEPTH,
  noBodyError,
  notAnEnvelopeError,
  SOAP11_NS,
  SOAP12_NS,
  splitName,
  type SoapVersion,
} from '../envelope.js';
import type { StartTag } from './tags.js';

// Module-local copies: an imported binding is read through its module cell on every use (see
// scanner.ts), and these are read per element.
const KEPT_DEPTH = MAX_KEPT_DEPTH;
const SOAP11 = SOAP11_NS;
const SOAP12 = SOAP12_NS;

/** What the scanner feeds a document's elements and text into, and what it asks for at the end. */
export interface EnvelopeSink<E> {
  /** Whether text at the current depth is kept (the scanner makes strings only then). */
  readonly keepsText: boolean;
  reset(): void;
  open(tag: StartTag, c: Cursor): void;
  close(): void;
  text(text: string): void;
  finish(): E;
}

/**
 * The SOAP rules above the operation's parameters, shared by every sink so that they cannot
 * drift apart: the Envelope's namespace gives the version (its prefix resolved from its own
 * declarations); headers are skipped; the first element inside the first Body is the operation.
 * A subclass keeps what it needs of the operation's subtree (depths 4 to MAX_KEPT_DEPTH): the node
 * tree of the reference (EnvelopeBuilder) or the slots of a compiled operation (CallBuilder).
 */
export abstract class EnvelopeLevels<E> implements EnvelopeSink<E> {
  depth = 0;
  keepsText = false;
  /** Whether the element open at depth 3 is the operation (the first Body child). */
  protected inOperation = false;
  private inBody = false;
  private bodySeen = false;
  private operationSeen = false;
  private version: SoapVersion | null = null;

  /** The Envelope's start tag, for a sink that needs its declarations (the version is read here). */
  protected abstract openEnvelope(tag: StartTag): void;
  /** The first Body child opens (depth 3). */
  protected abstract openOperation(tag: StartTag): void;
  /** An element at depth 4..MAX_KEPT_DEPTH inside the operation opens; it sets keepsText. */
  protected abstract openKept(tag: StartTag, c: Cursor, depth: number): void;
  /** The element at `depth` (4..MAX_KEPT_DEPTH) inside the operation closed. */
  protected abstract closeKept(depth: number): void;
  /** Whether the open element at `depth` (4..MAX_KEPT_DEPTH) inside the operation takes text. */
  protected abstract keepsTextAt(depth: number): boolean;
  /** What the sink built, once the envelope rules passed. */
  protected abstract result(version: SoapVersion): E;
  /** Clears the subclass's state for the next document. */
  protected abstract clear(): void;
  abstract text(text: string): void;

  reset(): void {
    this.depth = 0;
    this.keepsText = false;
    this.inBody = false;
    this.bodySeen = false;
    this.operationSeen = false;
    this.version = null;
    this.inOperation = false;
    this.clear();
  }

  open(tag: StartTag, c: Cursor): void {
    const depth = ++this.depth;
    this.keepsText = false;
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
      this.inOperation = !this.operationSeen;
      if (this.inOperation) {
        this.operationSeen = true;
        this.openOperation(tag);
      }
      return;
    }
    if (this.inOperation && depth <= KEPT_DEPTH) this.openKept(tag, c, depth);
  }

  close(): void {
    const depth = this.depth--;
    if (depth === 2) this.inBody = false;
    if (depth === 3) this.inOperation = false;
    else if (this.inOperation && depth >= 4 && depth <= KEPT_DEPTH) this.closeKept(depth);
    const now = this.depth;
    this.keepsText = this.inOperation && now >= 4 && now <= KEPT_DEPTH && this.keepsTextAt(now);
  }

  finish(): E {
    if (this.version === null) throw notAnEnvelopeError();
    if (!this.bodySeen) throw noBodyError();
    return this.result(this.version);
  }

  /**
   * The version from the Envelope's own declaration of its prefix (the last one written, as a
   * map of its declarations would keep): only that value becomes a string, and in the common case
   * neither the name nor any other attribute does.
   */
  private openRoot(tag: StartTag, c: Cursor): void {
    this.openEnvelope(tag);
    let uri: string | undefined;
    for (let k = 0; k < tag.count; k++) if (tag.declaresOwnPrefix(k)) uri = tag.attrValue(k);
    if (uri !== undefined && tag.localIs('Envelope')) {
      if (uri === SOAP11) this.version = '1.1';
      else if (uri === SOAP12) this.version = '1.2';
    }
    if (this.version === null) this.refuseRoot(tag, c, uri);
  }

  /** Not a SOAP Envelope we read: the fault (or syntax error) the reference gives for it. */
  private refuseRoot(tag: StartTag, c: Cursor, uri: string | undefined): void {
    const name = tag.name();
    const { prefix, local } = splitName(name);
    if (uri === undefined && prefix !== '') c.fail(tag.colon, `unbound namespace prefix: "${prefix}".`);
    this.version = envelopeVersion(name, local, uri ?? '');
  }
}

/** The value of the attribute named exactly `name`, or undefined. */
export function attribute(tag: StartTag, name: string): string | undefined {
  for (let k = 0; k < tag.count; k++) if (tag.attrNameIs(k, name)) return tag.attrValue(k);
  return undefined;
}

/** The first attribute called `nil` under any prefix decides (as EnvelopeReader's isNil). */
export function isNil(tag: StartTag): boolean {
  for (let k = 0; k < tag.count; k++) if (tag.attrIsNil(k)) return isNilTrue(tag.attrValue(k));
  return false;
}
