import type { Config } from '../shared/config/index.js';
import type { Logger } from '../shared/runtime/logger.js';
import type { Metrics } from '../shared/runtime/metrics.js';
import { serviceDescription, type ServiceDescription } from './metadata/description.js';
import { Router } from './router.js';
import type { OperationService } from './service/service.js';
import { prefaultYoungGeneration } from '../shared/runtime/warm-start.cjs';
import { bodyDeadlines } from './transport/body-deadline.js';
import { Exchange, type RejectReason } from './transport/exchange.js';
import { uWS, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './transport/uws.js';
import { certificateExpiry, nodeTlsOptions, serverTlsFromConfig, type ServerTls } from '../shared/runtime/tls.js';

export interface GatewayServer {
  readonly port: number;
  /** The plain-HTTP listener beside TLS (HTTP_PORT), or null. */
  readonly httpPort: number | null;
  /** Requests being served right now. */
  inFlight(): number;
  /**
   * Reads TLS_CERT_FILE and TLS_KEY_FILE again: new connections get the new certificate, open ones
   * keep theirs until they close (no-op without TLS). Rejects, serving the old one, when the files are bad.
   */
  reloadTls(): Promise<void>;
  /** Stops accepting connections, waits for in-flight requests (up to `graceMs`). */
  close(graceMs?: number): Promise<void>;
}

interface GatewayOptions {
  config: Config;
  service: OperationService;
  logger: Logger;
  clock?: () => number;
  /** Overrides config.service.port (0 = ephemeral, for tests). */
  port?: number;
  /** Overrides config.service.httpPort (0 = ephemeral; only with TLS). */
  httpPort?: number;
  metrics?: Metrics;
  /** What ?wsdl and ?disco serve; default from config (generated, or WSDL_FILE checked now). */
  description?: ServiceDescription;
}

type App = TemplatedApp & { close(): void };

function listenOn(app: TemplatedApp, host: string, port: number, what: string): Promise<us_listen_socket> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (token: us_listen_socket | false) => {
      if (token === false) reject(new Error(`Cannot listen on ${host}:${port} (${what}).`));
      else resolve(token);
    });
  });
}

/** uWS's TLS app of the files as they are now; uWS says only "App construction failed", so the files are checked first. */
function sslApp(tls: ServerTls): App {
  nodeTlsOptions(tls);
  return uWS.SSLApp({ cert_file_name: tls.certFile, key_file_name: tls.keyFile });
}

/**
 * Listens on the public port (HTTPS with TLS_CERT_FILE/TLS_KEY_FILE, TLS 1.2+; plain HTTP otherwise)
 * and, with TLS, on HTTP_PORT in plain HTTP if set; hands every request to the Router; `close`
 * drains in-flight requests.
 */
export async function startGateway({ config, service, logger, clock = Date.now, port, httpPort, metrics, description }: GatewayOptions): Promise<GatewayServer> {
  // Before any request: the young generation's pages faulted in now rather than under the first
  // seconds of load (shared/runtime/warm-start.cjs; only in a process launched for serving).
  const prefaulted = prefaultYoungGeneration();
  if (prefaulted !== null) logger.debug(prefaulted, 'young generation faulted in');
  const tls = serverTlsFromConfig(config);
  // ASP.NET's cookie, byte for byte; over TLS also `Secure`, so a browser or client never sends the
  // session id back over a plain connection (the id alone authenticates Login-less calls).
  const cookieHeader = (id: string): string => `${config.sessions.cookieName}=${id}; path=/; HttpOnly`;
  const secureCookieHeader = (id: string): string => `${cookieHeader(id)}; Secure`;
  const rejected = (reason: RejectReason): void => metrics?.rejectedRequests.labels({ reason }).inc();
  bodyDeadlines.onDrop = () => rejected('slow_body');
  // Connections, counted as uWS opens and closes them (it closes none for idleness: body-deadline.ts).
  let connections = 0;
  const counted = (app: App): App => app.filter((_res, change) => void (connections += Number(change)));
  if (metrics !== undefined) metrics.openConnectionsSource = () => connections;
  const described = description ?? serviceDescription(config.service);
  // A count, not a Set of exchanges: a Set's rebuilt tables keep whole answered requests alive
  // through scavenges (shared/util/int-map.ts says how). Exchange.finish calls `finished` once.
  let open = 0;
  let drained: (() => void) | null = null;
  const finished = (ex: Exchange): void => {
    open--;
    if (metrics !== undefined) {
      metrics.recordRequest(ex.operation, ex.binding, ex.aborted ? 'aborted' : ex.status, (performance.now() - ex.startedAt) / 1000);
    }
    if (open === 0 && drained !== null) drained();
  };
  const handlerFor = (scheme: 'http' | 'https') => {
    const deps = { service, config, logger, clock, cookieHeader: scheme === 'https' ? secureCookieHeader : cookieHeader, rejected };
    const router = new Router({ deps, logger, description: described, scheme });
    return (res: HttpResponse, req: HttpRequest): void => {
      const ex = new Exchange(res, req, finished);
      open++;
      router.route(ex);
    };
  };
  const secureHandler = tls === null ? null : handlerFor('https');
  const plainHandler = handlerFor('http');
  if (tls !== null && metrics !== undefined) metrics.tlsCertificateExpiry.set({ certificate: 'public' }, certificateExpiry(tls));

  const host = config.service.host;
  // Every app ever listening: a reloaded certificate is a new app on the same port (SO_REUSEPORT),
  // the old one stops accepting but serves its open connections until they close.
  const apps: App[] = [];
  const listening: us_listen_socket[] = [];
  const mainApp = counted(tls === null || secureHandler === null ? uWS.App().any('/*', plainHandler) : sslApp(tls).any('/*', secureHandler));
  apps.push(mainApp);
  let mainToken = await listenOn(mainApp, host, port ?? config.service.port, tls === null ? 'PORT' : 'PORT, TLS');
  listening.push(mainToken);
  const boundPort = uWS.us_socket_local_port(mainToken);
  let boundHttpPort: number | null = null;
  const wantHttp = tls === null ? null : (httpPort ?? config.service.httpPort);
  if (wantHttp !== null) {
    const plainApp = counted(uWS.App().any('/*', plainHandler));
    apps.push(plainApp);
    const token = await listenOn(plainApp, host, wantHttp, 'HTTP_PORT');
    listening.push(token);
    boundHttpPort = uWS.us_socket_local_port(token);
  }

  let reloading: Promise<void> = Promise.resolve();
  return {
    port: boundPort,
    httpPort: boundHttpPort,
    inFlight: () => open,
    reloadTls: () => {
      reloading = reloading.then(async () => {
        if (tls === null || secureHandler === null) return;
        const fresh = counted(sslApp(tls).any('/*', secureHandler));
        const token = await listenOn(fresh, host, boundPort, 'PORT, TLS reload');
        apps.push(fresh);
        uWS.us_listen_socket_close(mainToken);
        listening.splice(listening.indexOf(mainToken), 1, token);
        mainToken = token;
        if (metrics !== undefined) metrics.tlsCertificateExpiry.set({ certificate: 'public' }, certificateExpiry(tls));
      });
      return reloading;
    },
    close: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        for (const token of listening) uWS.us_listen_socket_close(token);
        // Then the idle keep-alive connections: a worker thread can only end once uWS holds no socket.
        const done = (): void => {
          for (const app of apps) app.close();
          resolve();
        };
        if (open === 0) { done(); return; }
        const timer = setTimeout(done, graceMs);
        drained = () => {
          clearTimeout(timer);
          done();
        };
      }),
  };
}
