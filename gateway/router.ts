import type { Config } from '../shared/config/index.js';
import type { Logger } from '../shared/runtime/logger.js';
import { sendErrorLine, type BindingDeps } from './bindings/core.js';
import { BINDING_TABLE, type BindingPlace, type RequestBinding } from './bindings/table.js';
import type { ServiceDescription } from './metadata/description.js';
import { renderHelpPage, renderOperationPage } from './metadata/help-page.js';
import { clientText, CLIENT_ERRORS } from './errors/registry.js';
import type { Exchange } from './transport/exchange.js';
import { TEXT_PLAIN, TEXT_XML } from './transport/media-types.js';
import { Status, statusLine } from './transport/status.js';

interface RouterOptions {
  readonly deps: BindingDeps;
  readonly logger: Logger;
  /** What ?wsdl and ?disco serve. */
  readonly description: ServiceDescription;
  /** How clients reach this listener: the scheme of the addresses the WSDL, disco and help page write (default http). */
  readonly scheme?: 'http' | 'https';
}

const HTML = 'text/html; charset=utf-8';

/**
 * Routes every request of the public port (docs/protocol.md §Routing; docs/architecture.md
 * §Request lifecycle). The service path is matched case-insensitively: `{path}` GET or HEAD → help
 * page / ?wsdl / ?disco / ?op=; `{path}` and `{path}/Op` otherwise → the binding BINDING_TABLE names
 * for the place and method. A HEAD gets the headers of the GET, never a body (Exchange.send).
 */
export class Router {
  private readonly config: Config;
  private readonly logger: Logger;
  private readonly description: ServiceDescription;
  private readonly rejected: BindingDeps['rejected'];
  private readonly base: string;
  private readonly scheme: 'http' | 'https';
  /** Per place, the binding for each method. */
  private readonly bindings: Record<BindingPlace, Map<string, RequestBinding>> = { service: new Map(), operation: new Map() };
  /** The Allow header of a 405 at each place: the table's methods, and GET for the metadata at `{path}`. */
  private readonly allow: Record<BindingPlace, [string, string][]>;

  constructor({ deps, logger, description, scheme = 'http' }: RouterOptions) {
    this.config = deps.config;
    this.scheme = scheme;
    this.logger = logger;
    this.description = description;
    this.rejected = deps.rejected;
    this.base = deps.config.service.path.toLowerCase();
    for (const entry of BINDING_TABLE) {
      const binding = entry.create(deps);
      for (const method of entry.methods) {
        if (this.bindings[entry.place].has(method)) throw new Error(`Two bindings take ${method} at the ${entry.place} place.`);
        this.bindings[entry.place].set(method, binding);
      }
    }
    const allowed = (place: BindingPlace, extra: readonly string[]): [string, string][] => [
      ['Allow', [...new Set([...extra, ...this.bindings[place].keys()])].sort().join(', ')],
    ];
    this.allow = { service: allowed('service', ['GET']), operation: allowed('operation', []) };
  }

  /** Answers `ex` or hands it to a binding; never throws (an error of ours is a 500 line). */
  route(ex: Exchange): void {
    try {
      if (ex.ambiguousLength) {
        this.rejected('bad_content_length');
        ex.refuse(statusLine(CLIENT_ERRORS.badContentLength.status), clientText('badContentLength'));
        return;
      }
      const lower = ex.path.toLowerCase();
      if (lower === this.base || lower === `${this.base}/`) this.atService(ex);
      else if (lower.startsWith(`${this.base}/`)) this.atOperation(ex);
      else sendErrorLine(ex, 'notFound');
    } catch (err) {
      this.logger.error({ err }, 'request failed');
      sendErrorLine(ex, 'internalError');
    }
  }

  private atService(ex: Exchange): void {
    const binding = this.bindings.service.get(ex.method);
    if (binding !== undefined) binding.handle(ex, '');
    else if (ex.method === 'GET' || ex.method === 'HEAD') this.metadata(ex);
    else this.methodNotAllowed(ex, 'service');
  }

  private atOperation(ex: Exchange): void {
    const pathInfo = decodeComponent(ex.path.slice(this.base.length));
    if (pathInfo === null) {
      this.badEscape(ex);
      return;
    }
    const binding = this.bindings.operation.get(ex.method);
    if (binding !== undefined) binding.handle(ex, pathInfo.slice(1));
    else if (ex.method === 'HEAD') {
      // ASMX has no HEAD handler for {path}/Op: it fails the request before any operation runs.
      sendErrorLine(ex, 'headOnOperation', { path: pathInfo });
    } else this.methodNotAllowed(ex, 'operation');
  }

  private methodNotAllowed(ex: Exchange, place: BindingPlace): void {
    const { status } = CLIENT_ERRORS.methodNotAllowed;
    ex.send(statusLine(status), TEXT_PLAIN, `${clientText('methodNotAllowed')}\r\n`, this.allow[place]);
  }

  /** A %-escape that is not UTF-8 (`%zz`, `%C0%BC`) is the client's error: 400, counted, no stack trace. */
  private badEscape(ex: Exchange): void {
    this.rejected('bad_escape');
    sendErrorLine(ex, 'badEscape');
  }

  private serviceUrl(ex: Exchange): string {
    return `${this.config.service.publicUrl ?? `${this.scheme}://${ex.header('host') || `localhost:${this.config.service.port}`}`}${this.config.service.path}`;
  }

  private metadata(ex: Exchange): void {
    ex.binding = 'metadata';
    const q = ex.query;
    const ql = q.toLowerCase();
    const opts = { namespace: this.config.service.namespace, serviceUrl: this.serviceUrl(ex) };
    if (ql === 'wsdl' || ql.startsWith('wsdl=') || ql.startsWith('wsdl&')) {
      ex.send(Status.ok, TEXT_XML, this.description.wsdl(opts.serviceUrl));
    } else if (ql === 'disco' || ql.startsWith('disco&')) {
      ex.send(Status.ok, TEXT_XML, this.description.disco(opts.serviceUrl));
    } else if (ql.startsWith('op=')) {
      const operation = decodeComponent(q.slice(3).split('&')[0] ?? '');
      if (operation === null) {
        this.badEscape(ex);
        return;
      }
      const page = renderOperationPage({ ...opts, operation });
      if (page === null) sendErrorLine(ex, 'unknownOperationPage');
      else ex.send(Status.ok, HTML, page);
    } else {
      ex.send(Status.ok, HTML, renderHelpPage(opts));
    }
  }
}

/** decodeURIComponent that answers null instead of throwing on a malformed escape. */
function decodeComponent(text: string): string | null {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}
