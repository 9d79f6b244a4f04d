import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BackendUnavailableError, type Backends } from '../../shared/backends/types.js';
import type { Config } from '../../shared/config.js';
import type { Logger } from '../../shared/logger.js';
import { bearerChecker } from './auth.js';
import { loadConsoleAssets } from './console-assets.js';
import { HttpError, parseJsonObject, readBody, sendError, sendReply } from './http.js';
import { adminRoutes, matchRoute, type EventStream, type Method, type Route } from './routes.js';

export { resolveAdminToken, ADMIN_TOKEN_FILE, type ResolvedAdminToken } from './auth.js';

export interface AdminServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

export interface AdminServerOptions {
  config: Config;
  backends: Backends;
  logger: Logger;
  /** Bearer token every route but /healthz and /readyz requires (see resolveAdminToken). */
  token: string;
  clock?: () => number;
  /** Overrides config.adminPort; 0 = ephemeral. */
  port?: number;
  /** Text for GET /metrics; without it that route answers 404. */
  metrics?: () => Promise<string>;
  /** How the overview names the deployment mode (default embedded). */
  mode?: 'embedded' | 'distributed';
  /** Interval of the SSE keep-alive comment (default 15 s; tests shorten it). */
  streamKeepAliveMs?: number;
  /** Unsent output past which a stream's reader is cut as too slow (default 1 MiB). */
  streamBacklogBytes?: number;
}

/** SSE comment lines keep proxies and clients from timing an idle stream out. */
const KEEP_ALIVE_MS = 15_000;
/** A stream whose client reads slower than events arrive is cut past this much unsent output. */
const STREAM_BACKLOG_BYTES = 1024 * 1024;

const METHODS: readonly Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const WITH_BODY: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);

/** Splits the raw path (before any decoding, so %2F stays inside its segment) and decodes each segment. */
function pathSegments(rawPath: string): string[] | null {
  const parts = rawPath.split('/').slice(1);
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop(); // one trailing slash is fine
  try {
    return parts.map((p) => decodeURIComponent(p));
  } catch {
    return null;
  }
}

/**
 * The operators' JSON API (docs/protocol.md §Operators) on its own port, bound to ADMIN_HOST (loopback by
 * default), behind a bearer token. node:http is enough here: this port is not the hot path.
 */
export async function startAdminServer(opts: AdminServerOptions): Promise<AdminServer> {
  const { config, backends, token } = opts;
  const clock = opts.clock ?? Date.now;
  const logger = opts.logger.child({ component: 'admin' });
  const authorized = bearerChecker(token);
  const consoleAssets = loadConsoleAssets(logger);
  const routes: Route[] = adminRoutes({
    config,
    backends,
    logger,
    clock,
    mode: opts.mode ?? 'embedded',
    ...(opts.metrics === undefined ? {} : { metrics: opts.metrics }),
  });
  /** Open event streams, ended when the server closes (server.close waits for every connection). */
  const streams = new Set<ServerResponse>();

  function startStream(res: ServerResponse, stream: EventStream): void {
    const keepAliveMs = opts.streamKeepAliveMs ?? KEEP_ALIVE_MS;
    const backlogLimit = opts.streamBacklogBytes ?? STREAM_BACKLOG_BYTES;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      // Proxies (nginx) must pass each event on at once.
      'X-Accel-Buffering': 'no',
    });
    res.write(': stream open\n\n');
    streams.add(res);
    let stopped = false;
    /** Every exit (client gone, reader too slow, server closing) comes here once. */
    const finish = (): void => {
      clearInterval(keepAlive);
      streams.delete(res);
      if (stopped) return;
      stopped = true;
      stream.stop().catch((err: unknown) => logger.warn({ err }, 'admin: closing an event stream failed'));
    };
    // A write after the end must never reach the process as an uncaught error: one stalled browser
    // tab would stop every provider's ingest.
    const writable = (): boolean => !stopped && !res.writableEnded && !res.destroyed;
    const keepAlive = setInterval(() => {
      if (writable()) res.write(': keep-alive\n\n');
    }, keepAliveMs);
    res.on('close', finish);
    res.on('error', (err) => logger.debug({ err }, 'admin: event stream connection error'));
    stream.start((event, id, data) => {
      if (!writable()) return;
      if (res.writableLength > backlogLimit) {
        // The reader is not reading: ending politely would wait for a flush that never comes, so
        // the connection is cut and everything held for it freed.
        logger.warn({ backlog: res.writableLength }, 'admin: event stream client reads too slowly; cutting the stream');
        finish();
        res.destroy();
        return;
      }
      res.write(`event: ${event}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`);
    });
  }

  async function dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : rawUrl.slice(q + 1));
    const segments = pathSegments(rawPath);

    const candidates =
      segments === null
        ? []
        : routes.flatMap((route) => {
            const params = matchRoute(route.pattern, segments);
            return params === null ? [] : [{ route, params }];
          });
    const match = candidates[0];

    // Everything but the probes needs the token, unknown paths included (they reveal nothing).
    if (match?.route.public !== true && !authorized(req.headers)) {
      throw new HttpError(401, 'Missing or invalid bearer token.', undefined, { 'WWW-Authenticate': 'Bearer' });
    }
    if (segments === null) throw new HttpError(400, 'Malformed percent-encoding in the URL path.');
    if (match === undefined) throw new HttpError(404, `No such route: ${rawPath}`);

    const method = (req.method === 'HEAD' ? 'GET' : req.method ?? '') as Method;
    const handler = METHODS.includes(method) ? match.route.handlers[method] : undefined;
    if (handler === undefined) {
      const allowed: string[] = METHODS.filter((m) => match.route.handlers[m] !== undefined);
      if (allowed.includes('GET')) allowed.push('HEAD');
      throw new HttpError(405, `Method ${req.method ?? ''} not allowed here; use ${allowed.join(', ')}.`, undefined, {
        Allow: allowed.join(', '),
      });
    }

    let body: Promise<Record<string, unknown>> | null = null;
    const reply = await handler({
      params: match.params,
      query,
      body: () => {
        if (!WITH_BODY.has(method)) return Promise.resolve({});
        body ??= readBody(req, match.route.bodyLimit).then(parseJsonObject);
        return body;
      },
    });
    if ('stream' in reply) {
      // The client may have left while the stream was being set up.
      if (res.destroyed || res.socket?.destroyed === true) await reply.stream.stop();
      else startStream(res, reply.stream);
      return;
    }
    sendReply(res, reply);
  }

  const server = http.createServer((req, res) => {
    const started = process.hrtime.bigint();
    // Every answer carries an id that is also in the log line about it.
    const requestId = randomUUID();
    res.setHeader('X-Request-Id', requestId);
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const path = (req.url ?? '').split('?')[0];
      const entry = { requestId, method: req.method, path, status: res.statusCode, ms: Math.round(ms * 10) / 10 };
      if (req.method === 'GET' && res.statusCode < 400) logger.debug(entry, 'admin request');
      else logger.info(entry, 'admin request');
    });
    // The console's page and assets are public (they hold no data); all else is the API.
    if (consoleAssets.serve(req, res)) return;
    dispatch(req, res).catch((err: unknown) => {
      // Only a connection that is really gone is left unanswered. (req.destroyed is no test of
      // that: a request whose body was read to the end is destroyed too.)
      if (res.headersSent || res.destroyed || res.socket?.destroyed === true) {
        if (!res.writableEnded) res.destroy();
        return;
      }
      if (err instanceof HttpError) {
        sendError(res, err);
        return;
      }
      if (err instanceof BackendUnavailableError) {
        logger.warn({ requestId, err: err.message, method: req.method, path: (req.url ?? '').split('?')[0] }, 'admin: store unavailable');
        sendError(res, new HttpError(503, `The store is temporarily unavailable; retry later (request ${requestId}).`, undefined, { 'Retry-After': '5' }));
        return;
      }
      logger.error({ requestId, err, method: req.method, path: (req.url ?? '').split('?')[0] }, 'admin: request failed');
      sendError(res, new HttpError(500, `Internal error (request ${requestId}); the gateway log has the details under this id.`));
    });
  });
  // Slow or stuck clients must not hold connections forever.
  server.requestTimeout = 30_000;
  server.headersTimeout = 15_000;
  server.keepAliveTimeout = 5_000;

  const host = config.adminHost;
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(opts.port ?? config.adminPort, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  server.on('error', (err) => logger.error({ err }, 'admin: server error'));

  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  logger.info({ url }, 'admin API listening');

  let closing: Promise<void> | null = null;
  return {
    port,
    url,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeIdleConnections();
        for (const res of streams) res.end();
      });
      return closing;
    },
  };
}
