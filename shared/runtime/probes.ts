import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { sendJson, sendReply } from './http-reply.js';
import type { Logger } from './logger.js';
import { createHttpServer, reloadHttpServer, schemeOf, type ServerTls } from './tls.js';
import { errorMessage } from '../util/error-message.js';
import { LISTENERS } from './port-check.js';
import { listenFailure } from './start-error.js';

/**
 * /healthz, /readyz and /metrics, answered alike by every process: the gateway's admin server
 * (behind its routing and token) and the worker's probe server (startProbeServer).
 *
 * - /healthz: 200 `{"status":"ok"}` while the process serves at all;
 * - /readyz: 200 `{"status":"ok"}`, or 503 `{"status":"unavailable","reason":"…"}` naming why;
 * - /metrics: 200, the Prometheus text.
 */
export type ReadinessState = { ready: true } | { ready: false; reason: string };

/** The check behind /readyz: ready, or the reason it is not. */
export type Readiness = () => Promise<ReadinessState>;

export const METRICS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type ProbeReply =
  | { status: 200; json: { status: 'ok' } }
  | { status: 503; json: { status: 'unavailable'; reason: string } }
  | { status: 200; text: string; contentType: string };

interface ProbeHandlers {
  healthz: () => Promise<ProbeReply>;
  /** Never fails: a check that throws is a not-ready answer with the error as its reason. */
  readyz: () => Promise<ProbeReply>;
  /** Fails as `metrics` does (the server answers 500, or 404 where metrics are off). */
  metrics: () => Promise<ProbeReply>;
}

const OK = { status: 200, json: { status: 'ok' } } as const;

export function probeHandlers(readiness: Readiness, metrics: () => Promise<string>, logger: Logger): ProbeHandlers {
  return {
    healthz: () => Promise.resolve(OK),
    async readyz() {
      let state: ReadinessState;
      try {
        state = await readiness();
      } catch (err) {
        logger.warn({ err }, 'the readiness check failed');
        state = { ready: false, reason: `the readiness check failed: ${errorMessage(err)}` };
      }
      return state.ready ? OK : { status: 503, json: { status: 'unavailable', reason: state.reason } };
    },
    async metrics() {
      return { status: 200, text: await metrics(), contentType: METRICS_TYPE };
    },
  };
}

interface ProbeServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  readiness: Readiness;
  metrics: () => Promise<string>;
  logger: Logger;
  /** HTTPS with the process's certificate (TLS_CERT_FILE), as every listener of the process; null: HTTP. */
  tls: ServerTls | null;
}

export interface ProbeServer {
  /** http(s)://host:port */
  readonly url: string;
  /** Serves the certificate files as they are now to new connections (no-op without TLS). */
  reloadTls(): void;
  close(): Promise<void>;
}

const PROBES = ['/healthz', '/readyz', '/metrics'] as const;
const ALLOWED = 'GET, HEAD';

/**
 * A server with only the probes, for a process without the admin API (the worker). It answers as
 * the admin server does: GET and HEAD (the headers of the GET), 405 with Allow otherwise, 404 for
 * any other path, errors as `{"error": "…"}`. It has no token: bind it where only the scraper and
 * the orchestrator reach it.
 */
export async function startProbeServer(options: ProbeServerOptions): Promise<ProbeServer> {
  const { logger } = options;
  const handlers = probeHandlers(options.readiness, options.metrics, logger);
  const byPath = new Map<string, () => Promise<ProbeReply>>([
    [PROBES[0], handlers.healthz],
    [PROBES[1], handlers.readyz],
    [PROBES[2], handlers.metrics],
  ]);
  const server = createHttpServer(options.tls, (req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const handler = byPath.get(path);
    if (handler === undefined) {
      sendJson(res, 404, { error: `No such route: ${path}` });
    } else if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendJson(res, 405, { error: `Method ${req.method ?? ''} not allowed here; use ${ALLOWED}.` }, { Allow: ALLOWED });
    } else {
      handler().then(
        (reply) => sendReply(res, reply),
        (err: unknown) => {
          logger.error({ err, path }, 'probe failed');
          sendJson(res, 500, { error: 'Internal error; the log has the details.' });
        },
      );
    }
  });
  server.listen(options.port, options.host);
  try {
    await once(server, 'listening');
  } catch (err) {
    throw listenFailure(err, LISTENERS.admin, options.host, options.port) ?? err;
  }
  const { port } = server.address() as AddressInfo;
  const url = `${schemeOf(options.tls)}://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  logger.info({ url }, 'probes and metrics listening');
  return {
    url,
    reloadTls: () => {
      if (options.tls !== null) reloadHttpServer(server, options.tls);
    },
    // A probe in flight at shutdown is cut: nothing waits on its answer then.
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
