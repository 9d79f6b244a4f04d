/**
 * What a WSDL document promises its clients, read alike from a deployment's captured WSDL and from
 * the gateway's generated one, so that the two compare fact by fact (captured-wsdl.ts): the
 * bindings and the operations each carries, each operation's wrapper elements, parameters and
 * result, the HTTP bindings' parts, and the members of every named type. Names that can differ
 * between two documents without changing the contract (prefixes, the class, binding, port type
 * and message names, documentation, order) are not facts; element types are, as details.
 */
import { childrenNamed, resolveQName, type XmlElement } from './xml-tree.js';

export const WSDL = 'http://schemas.xmlsoap.org/wsdl/';
export const XSD = 'http://www.w3.org/2001/XMLSchema';
export const SOAP = 'http://schemas.xmlsoap.org/wsdl/soap/';
export const SOAP12 = 'http://schemas.xmlsoap.org/wsdl/soap12/';
export const HTTP = 'http://schemas.xmlsoap.org/wsdl/http/';

/** One promise of a document and the promises under it, by label ("operation Login", "parameter SystemUser"). */
export interface Fact {
  /** What two documents can disagree on under one label: an element's type, a wrapper element's name. */
  readonly detail: string | null;
  readonly under: Facts;
}
export type Facts = ReadonlyMap<string, Fact>;

/** A fact's place: its labels from the top ("binding HTTP GET", "operation Login", "parameter Password"). */
export type FactPath = readonly string[];

/** Where two documents part. */
export interface ContractComparison {
  /** Facts of the captured file the served one lacks, or holds with another detail (then `served` says which). */
  readonly notServed: readonly { readonly path: FactPath; readonly captured: string | null; readonly served?: string | null }[];
  /** Facts of the served document the captured one lacks: the topmost of each branch only. */
  readonly beyond: readonly FactPath[];
}

/** The facts of a WSDL 1.1 `definitions` element whose target namespace is `namespace`. */
export function contractOf(defs: XmlElement, namespace: string): Facts {
  return new ContractReader(defs, namespace).read();
}

/** Compares the captured document's facts with the served one's, branch by branch. */
export function compareContracts(captured: Facts, served: Facts): ContractComparison {
  const notServed: { path: FactPath; captured: string | null; served?: string | null }[] = [];
  const beyond: FactPath[] = [];
  const walk = (mine: Facts, theirs: Facts, at: FactPath): void => {
    for (const [label, fact] of mine) {
      const path = [...at, label];
      const other = theirs.get(label);
      if (other === undefined) {
        notServed.push({ path, captured: fact.detail });
        continue;
      }
      if (other.detail !== fact.detail) notServed.push({ path, captured: fact.detail, served: other.detail });
      walk(fact.under, other.under, path);
    }
    for (const label of theirs.keys()) if (!mine.has(label)) beyond.push([...at, label]);
  };
  walk(captured, served, []);
  return { notServed, beyond };
}

type MutableFacts = Map<string, { detail: string | null; under: MutableFacts }>;

/** The facts under `label` in `facts`, added on first sight (a later sight keeps the first detail). */
function factIn(facts: MutableFacts, label: string, detail: string | null = null): MutableFacts {
  let fact = facts.get(label);
  if (fact === undefined) {
    fact = { detail, under: new Map() };
    facts.set(label, fact);
  }
  return fact.under;
}

class ContractReader {
  private readonly elements = new Map<string, XmlElement>();
  private readonly types = new Map<string, XmlElement>();

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

  read(): Facts {
    const facts: MutableFacts = new Map();
    for (const service of childrenNamed(this.defs, WSDL, 'service')) {
      for (const port of childrenNamed(service, WSDL, 'port')) this.readPort(facts, port);
    }
    for (const [name, type] of this.types) {
      const members = factIn(facts, `type ${name}`);
      for (const e of this.sequence(type)) factIn(members, `element ${e.attrs.get('name') ?? ''}`, this.typeOf(e));
    }
    return facts;
  }

  /** A port's binding, and its port type's operations as that binding carries them. */
  private readPort(facts: MutableFacts, port: XmlElement): void {
    const binding = this.named('binding', this.qnameTarget(port, 'binding'));
    const portType = binding === null ? null : this.named('portType', this.qnameTarget(binding, 'type'));
    if (binding === null || portType === null) return; // clients cannot have been generated from it
    const kind = bindingKind(port, binding);
    const bound = factIn(facts, `binding ${kind}`);
    for (const operation of childrenNamed(portType, WSDL, 'operation')) {
      const name = operation.attrs.get('name') ?? '';
      const abstract = factIn(facts, `operation ${name}`);
      const carried = factIn(bound, `operation ${name}`);
      if (kind === 'SOAP 1.1' || kind === 'SOAP 1.2') this.readWrappers(abstract, operation);
      else if (kind.startsWith('HTTP ')) this.readParts(carried, operation);
    }
  }

  /** SOAP: the wrapper elements of the input and output, and the elements of their sequences. */
  private readWrappers(facts: MutableFacts, operation: XmlElement): void {
    for (const [direction, member] of [
      ['input', 'parameter'],
      ['output', 'result'],
    ] as const) {
      const part = this.parts(operation, direction)[0];
      const wrapper = part === undefined ? null : (this.elements.get(this.qnameTarget(part, 'element') ?? '') ?? null);
      factIn(facts, `${direction} element`, wrapper?.attrs.get('name') ?? null);
      if (wrapper === null) continue;
      for (const e of this.sequence(wrapper)) factIn(facts, `${member} ${e.attrs.get('name') ?? ''}`, this.typeOf(e));
    }
  }

  /** HTTP GET and POST: the input's parts (one per parameter) and the output's root element. */
  private readParts(facts: MutableFacts, operation: XmlElement): void {
    for (const part of this.parts(operation, 'input')) factIn(facts, `parameter ${part.attrs.get('name') ?? ''}`, this.qnameText(part, 'type'));
    const body = this.parts(operation, 'output')[0];
    if (body !== undefined) factIn(facts, 'result element', this.qnameText(body, 'element'));
  }

  private qnameTarget(node: XmlElement, attr: string): string | null {
    const q = resolveQName(node, node.attrs.get(attr) ?? '');
    return q !== null && q.uri === this.namespace ? q.local : null;
  }

  /** A QName attribute as the facts spell it whatever the prefixes: `xs:int`, a local name in the target namespace, else `{uri}local`. */
  private qnameText(node: XmlElement, attr: string): string | null {
    const raw = node.attrs.get(attr);
    if (raw === undefined) return null;
    const q = resolveQName(node, raw);
    if (q === null) return raw;
    if (q.uri === XSD) return `xs:${q.local}`;
    return q.uri === this.namespace ? q.local : `{${q.uri}}${q.local}`;
  }

  /** An element's type; one declared inline has none to name. */
  private typeOf(element: XmlElement): string {
    return this.qnameText(element, 'type') ?? 'an inline type';
  }

  private named(local: string, name: string | null): XmlElement | null {
    if (name === null) return null;
    return childrenNamed(this.defs, WSDL, local).find((n) => n.attrs.get('name') === name) ?? null;
  }

  /** The parts of the message an operation's input or output refers to. */
  private parts(operation: XmlElement, direction: 'input' | 'output'): XmlElement[] {
    const io = childrenNamed(operation, WSDL, direction)[0];
    const message = io === undefined ? null : this.named('message', this.qnameTarget(io, 'message'));
    return message === null ? [] : childrenNamed(message, WSDL, 'part');
  }

  /** The elements of a schema element's or complexType's sequence. */
  private sequence(node: XmlElement): XmlElement[] {
    const complex = node.local === 'complexType' ? node : childrenNamed(node, XSD, 'complexType')[0];
    const sequence = complex === undefined ? undefined : childrenNamed(complex, XSD, 'sequence')[0];
    return sequence === undefined ? [] : childrenNamed(sequence, XSD, 'element');
  }
}

/** `SOAP 1.1`, `SOAP 1.2`, `HTTP GET`, `HTTP POST` (or another verb), from the port's address and the binding. */
function bindingKind(port: XmlElement, binding: XmlElement): string {
  const address = port.children.find((c) => c.local === 'address');
  if (address?.uri === SOAP) return 'SOAP 1.1';
  if (address?.uri === SOAP12) return 'SOAP 1.2';
  if (address?.uri === HTTP) {
    const verb = childrenNamed(binding, HTTP, 'binding')[0]?.attrs.get('verb') ?? '(no verb)';
    return `HTTP ${verb}`;
  }
  return `of port ${port.attrs.get('name') ?? ''} (neither SOAP nor HTTP)`;
}
