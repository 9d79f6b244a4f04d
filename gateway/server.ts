import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import type { Metrics } from '../shared/metrics.js';
import { HttpBinding } from './http/binding.js';
import { Exchange, Status, TEXT_PLAIN, TEXT_XML, type RejectReason } from './http/exchange.js';
import { uWS, type us_listen_socket } from './http/uws.js';
import { serviceDescription, type ServiceDescription } from './metadata/description.js';
import { renderHelpPage, renderOperationPage } from './metadata/help-page.js';
import type { OperationService } from './service/service.js';
import { SoapBinding } from './soap/binding.js';

export interface GatewayServer {
  readonly port: number;
  /** Requests being served right now. */
  inFlight(): number;
  /** Stops accepting connections, waits for in-flight requests (up to `graceMs`). */
  close(graceMs?: number): Promise<void>;
}

export interface GatewayOptions {
  config: Config;
  service: OperationService;
  logger: Logger;
  clock?: () => number;
  /** Overrides config.port (0 = ephemeral, for tests). */
  port?: number;
  metrics?: Metrics;
  /** What ?wsdl and ?disco serve; default from config (generated, or WSDL_FILE checked now). */
  description?: ServiceDescription;
}

/**
 * Routes every request of the public port. The service path is matched case-insensitively:
 * `{path}` GET or HEAD → help page / ?wsdl / ?disco / ?op=; `{path}` POST → SOAP (with or without
 * a query string); `{path}/Op` GET/POST → HTTP bindings (docs/protocol.md §Routing). A HEAD gets
 * the headers of the GET, never a body (Exchange.send).
 */
export function startGateway({ config, service, logger, clock = Date.now, port, metrics, description }: GatewayOptions): Promise<GatewayServer> {
  const metadataDocs = description ?? serviceDescription(config);
  const cookieHeader = (id: string): string => `${config.sessionCookieName}=${id}; path=/; HttpOnly`;
  const rejected = (reason: RejectReason): void => metrics?.rejectedRequests.labels({ reason }).inc();
  const soap = new SoapBinding({ service, config, logger, clock, cookieHeader }, rejected);
  const http = new HttpBinding({ service, config, logger, clock, cookieHeader });
  /** A %-escape that is not UTF-8 (`%zz`, `%C0%BC`) is the client's error: 400, counted, no stack trace. */
  const badEscape = (ex: Exchange): void => {
    rejected('bad_escape');
    ex.send(Status.badRequest, TEXT_PLAIN, 'Bad request: the URL holds an invalid %-escape.\r\n');
  };
  const base = config.servicePath.toLowerCase();
  const open = new Set<Exchange>();
  let drained: (() => void) | null = null;
  const finished = (ex: Exchange): void => {
    open.delete(ex);
    if (metrics !== undefined) {
      metrics.recordRequest(ex.operation, ex.binding, ex.aborted ? 'aborted' : ex.status, (performance.now() - ex.startedAt) / 1000);
    }
    if (open.size === 0 && drained !== null) drained();
  };

  const serviceUrl = (ex: Exchange): string =>
    `${config.publicUrl ?? `http://${ex.header('host') || `localhost:${config.port}`}`}${config.servicePath}`;

  const metadata = (ex: Exchange): void => {
    ex.binding = 'metadata';
    const q = ex.query;
    const ql = q.toLowerCase();
    const opts = { namespace: config.namespace, serviceUrl: serviceUrl(ex) };
    if (ql === 'wsdl' || ql.startsWith('wsdl=') || ql.startsWith('wsdl&')) {
      ex.send(Status.ok, TEXT_XML, metadataDocs.wsdl(opts.serviceUrl));
    } else if (ql === 'disco' || ql.startsWith('disco&')) {
      ex.send(Status.ok, TEXT_XML, metadataDocs.disco(opts.serviceUrl));
    } else if (ql.startsWith('op=')) {
      const operation = decodeComponent(q.slice(3).split('&')[0] ?? '');
      if (operation === null) { badEscape(ex); return; }
      const page = renderOperationPage({ ...opts, operation });
      if (page === null) ex.send(Status.notFound, TEXT_PLAIN, 'Unknown operation.\r\n');
      else ex.send(Status.ok, 'text/html; charset=utf-8', page);
    } else {
      ex.send(Status.ok, 'text/html; charset=utf-8', renderHelpPage(opts));
    }
  };

  const app = uWS.App().any('/*', (res, req) => {
    const ex = new Exchange(res, req, finished);
    open.add(ex);
    try {
      if (ex.ambiguousLength) {
        rejected('bad_content_length');
        ex.refuse(Status.badRequest, 'Bad Request: conflicting or invalid Content-Length headers.');
        return;
      }
      const lower = ex.path.toLowerCase();
      if (lower === base || lower === `${base}/`) {
        if (ex.method === 'POST') soap.handle(ex);
        else if (ex.method === 'GET' || ex.method === 'HEAD') metadata(ex);
        else ex.send(Status.methodNotAllowed, TEXT_PLAIN, 'Method not allowed.\r\n', [['Allow', 'GET, POST']]);
      } else if (lower.startsWith(`${base}/`)) {
        const pathInfo = decodeComponent(ex.path.slice(base.length));
        if (pathInfo === null) badEscape(ex);
        else if (ex.method === 'GET' || ex.method === 'POST') http.handle(ex, pathInfo.slice(1));
        else if (ex.method === 'HEAD') {
          // ASMX has no HEAD handler for {path}/Op: it fails the request before any operation runs.
          ex.send(Status.serverError, TEXT_PLAIN, `Request format is unrecognized for URL unexpectedly ending in '${pathInfo}'.\r\n`);
        } else ex.send(Status.methodNotAllowed, TEXT_PLAIN, 'Method not allowed.\r\n', [['Allow', 'GET, POST']]);
      } else {
        ex.send(Status.notFound, TEXT_PLAIN, 'Not found.\r\n');
      }
    } catch (err) {
      logger.error({ err }, 'request failed');
      ex.send(Status.serverError, TEXT_PLAIN, 'Server was unable to process request. ---> An internal error occurred.\r\n');
    }
  });

  return new Promise((resolve, reject) => {
    app.listen(config.host, port ?? config.port, (token: us_listen_socket | false) => {
      if (token === false) {
        reject(new Error(`Cannot listen on ${config.host}:${port ?? config.port}.`));
        return;
      }
      const boundPort = uWS.us_socket_local_port(token);
      resolve({
        port: boundPort,
        inFlight: () => open.size,
        close: (graceMs = 10_000) =>
          new Promise<void>((resolve) => {
            uWS.us_listen_socket_close(token);
            // Then the idle keep-alive connections: a worker thread can only end once uWS holds no socket.
            const done = (): void => {
              (app as typeof app & { close(): void }).close();
              resolve();
            };
            if (open.size === 0) { done(); return; }
            const timer = setTimeout(done, graceMs);
            drained = () => {
              clearTimeout(timer);
              done();
            };
          }),
      });
    });
  });
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
