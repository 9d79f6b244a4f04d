import type { Config } from '../shared/config/index.js';
import type { Logger } from '../shared/runtime/logger.js';
import type { Metrics } from '../shared/runtime/metrics.js';
import { serviceDescription, type ServiceDescription } from './metadata/description.js';
import { Router } from './router.js';
import type { OperationService } from './service/service.js';
import { Exchange, type RejectReason } from './transport/exchange.js';
import { uWS, type us_listen_socket } from './transport/uws.js';

export interface GatewayServer {
  readonly port: number;
  /** Requests being served right now. */
  inFlight(): number;
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
  metrics?: Metrics;
  /** What ?wsdl and ?disco serve; default from config (generated, or WSDL_FILE checked now). */
  description?: ServiceDescription;
}

/** Listens on the public port and hands every request to the Router; `close` drains in-flight requests. */
export function startGateway({ config, service, logger, clock = Date.now, port, metrics, description }: GatewayOptions): Promise<GatewayServer> {
  const cookieHeader = (id: string): string => `${config.sessions.cookieName}=${id}; path=/; HttpOnly`;
  const rejected = (reason: RejectReason): void => metrics?.rejectedRequests.labels({ reason }).inc();
  const router = new Router({
    deps: { service, config, logger, clock, cookieHeader, rejected },
    logger,
    description: description ?? serviceDescription(config.service),
  });
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

  const app = uWS.App().any('/*', (res, req) => {
    const ex = new Exchange(res, req, finished);
    open++;
    router.route(ex);
  });

  return new Promise((resolve, reject) => {
    app.listen(config.service.host, port ?? config.service.port, (token: us_listen_socket | false) => {
      if (token === false) {
        reject(new Error(`Cannot listen on ${config.service.host}:${port ?? config.service.port}.`));
        return;
      }
      const boundPort = uWS.us_socket_local_port(token);
      resolve({
        port: boundPort,
        inFlight: () => open,
        close: (graceMs = 10_000) =>
          new Promise<void>((resolve) => {
            uWS.us_listen_socket_close(token);
            // Then the idle keep-alive connections: a worker thread can only end once uWS holds no socket.
            const done = (): void => {
              (app as typeof app & { close(): void }).close();
              resolve();
            };
            if (open === 0) { done(); return; }
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
