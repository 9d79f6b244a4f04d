import type { Exchange } from '../transport/exchange.js';
import type { BindingDeps } from './core.js';
import { FormBinding } from './form/form-binding.js';
import { SoapBinding } from './soap/soap-binding.js';

/**
 * Where on the service path a binding answers: `service` is `{path}` itself (the operation is
 * named inside the request), `operation` is `{path}/Op` (the operation is the last path segment).
 */
export type BindingPlace = 'service' | 'operation';

/** One binding family, ready to take the requests the router gives it. */
export interface RequestBinding {
  /** `pathName` is what follows `{path}/`, %-decoded ('' at the `service` place). Never throws for a client's error. */
  handle(ex: Exchange, pathName: string): void;
}

interface BindingEntry {
  /** For reading only: the binding's name in this table and in docs/architecture.md. */
  readonly name: string;
  readonly place: BindingPlace;
  /** The HTTP methods it takes at its place; the router answers 405 for the others. */
  readonly methods: readonly string[];
  readonly create: (deps: BindingDeps) => RequestBinding;
}

/**
 * Every binding the public port serves, the one list the router reads (gateway/router.ts). A new
 * binding is a folder under gateway/bindings/ and one entry here (docs/architecture.md §Adding a
 * binding). At most one entry per (place, method).
 */
export const BINDING_TABLE: readonly BindingEntry[] = [
  // SOAP 1.1 and 1.2: POST {path}, routed by SOAPAction / Content-Type action / the Body element.
  { name: 'soap', place: 'service', methods: ['POST'], create: (deps) => new SoapBinding(deps) },
  // HTTP GET and HTTP POST form: {path}/Op, arguments from the query or an urlencoded body.
  { name: 'form', place: 'operation', methods: ['GET', 'POST'], create: (deps) => new FormBinding(deps) },
];
