import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BackendUnavailableError, type Backends } from '../../shared/backends/types.js';
import type { Config } from '../../shared/config/index.js';
import { FailureLog } from '../../shared/runtime/failure-log.js';
import type { Logger } from '../../shared/runtime/logger.js';
import { LISTENERS } from '../../shared/runtime/port-check.js';
import { listenFailure } from '../../shared/runtime/start-error.js';
import { createHttpServer, reloadHttpServer, schemeOf, serverTlsFromConfig } from '../../shared/runtime/tls.js';
import { AdminAccess } from './access.js';
import { AuditTrail, fieldNames, newCallAudit, targetOfParams, type CallAudit } from './audit-trail.js';
import { loadConsoleAssets } from './console-assets.js';
import { AdminError } from './errors.js';
import { parseJsonObject, readBody, sendError, sendReply } from './http.js';
import { allowedKeys, allows, checkRoutes, isMutating, isPublic, routeKey } from './roles.js';
import type { AdminDeps, Method, Reply, Route } from './route.js';
import { adminRoutes, matchRoute } from './routes.js';
import { StreamHub } from './stream-hub.js';
import { StreamRevocation } from './stream-revocation.js';

export { resolveAdminToken } from './auth.js';

export interface AdminServer {
  readonly port: number;
  readonly url: string;
  /** Live event streams open now. */
  readonly liveStreams: number;
  /** Serves TLS_CERT_FILE / TLS_KEY_FILE as they are now to new connections (no-op without TLS). */
  reloadTls(): void;
  close(): Promise<void>;
}

interface AdminServerOptions {
  config: Config;
  backends: Backends;
  logger: Logger;
  /** The bootstrap administrator's token (ADMIN_TOKEN, see resolveAdminToken); named operators' tokens are in the store. */
  token: string;
  clock?: () => number;
  /** Overrides config.admin.port; 0 = ephemeral. */
  port?: number;
  /** Text for GET /metrics; without it that route answers 404. */
  metrics?: () => Promise<string>;
  /** GET /admin/refusals; without it that route answers an empty list. */
  refusals?: AdminDeps['refusals'];
  /** How the overview names the deployment mode (default embedded). */
  mode?: 'embedded' | 'scale-out';
  /** Interval of the SSE keep-alive comment (default 15 s; tests shorten it). */
  streamKeepAliveMs?: number;
  /** Unsent output past which a stream's reader is cut as too slow (default 1 MiB). */
  streamBacklogBytes?: number;
  /** How often live streams are written (default 500 ms; tests shorten it). */
  streamFlushMs?: number;
}

/** SSE comment lines keep proxies and clients from timing an idle stream out. */
const KEEP_ALIVE_MS = 15_000;
/** A stream whose client reads slower than events arrive is cut past this much unsent output. */
const STREAM_BACKLOG_BYTES = 1024 * 1024;

/**
 * On every answer (API, probes, errors, console): no MIME sniffing of a JSON error that echoes a
 * path, no framing, no referrer, nothing loaded by another origin. The console's page sets its own
 * Content-Security-Policy over the default here, which allows nothing (an API answer is never a page).
 */
const SECURITY_HEADERS: readonly (readonly [string, string])[] = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
];

const METHODS: readonly Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const WITH_BODY: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);
/** HEAD is answered as GET. */
const methodOf = (req: IncomingMessage): Method => (req.method === 'HEAD' ? 'GET' : req.method ?? '') as Method;

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
  const access = new AdminAccess({
    bootstrapToken: token,
    stores: backends.operators,
    policy: { maxFailures: config.logins.lockoutMaxFailures, windowMs: config.logins.lockoutWindowMs, lockMs: config.logins.lockoutDurationMs },
    logger,
  });
  const trail = new AuditTrail({ store: backends.operators.audit, logger, retentionMs: config.admin.auditRetentionMs, clock });
  const revocation = new StreamRevocation(backends.operators.tokens, clock, logger);
  const consoleAssets = loadConsoleAssets(logger, undefined, config.admin.mapTileUrl);
  const streams = new StreamHub({
    feed: backends.feed,
    logger,
    maxStreams: config.admin.streamsMax,
    eventsPerSecond: config.admin.streamEventsPerSecond,
    keepAliveMs: opts.streamKeepAliveMs ?? KEEP_ALIVE_MS,
    backlogBytes: opts.streamBacklogBytes ?? STREAM_BACKLOG_BYTES,
    ...(opts.streamFlushMs === undefined ? {} : { flushMs: opts.streamFlushMs }),
  });
  let routes: Route[] = [];
  routes = adminRoutes({
    allowedFor: (role) => allowedKeys(role, routes),
    config,
    backends,
    logger,
    clock,
    streams,
    mode: opts.mode ?? 'embedded',
    ...(opts.metrics === undefined ? {} : { metrics: opts.metrics }),
    ...(opts.refusals === undefined ? {} : { refusals: opts.refusals }),
  });
  checkRoutes(routes);
  void trail.checkDurability();

  /**
   * Finds the route, tells who is calling (access.ts) and whether their role may call it (roles.ts),
   * then runs the handler. `call` collects what the audit trail records of it.
   */
  async function dispatch(req: IncomingMessage, call: CallAudit, address: string): Promise<Reply> {
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

    // Everything but the probes needs a token, unknown paths included (they reveal nothing).
    if (match === undefined || !isPublic(match.route)) {
      const auth = await access.authenticate(req.headers, address, clock());
      const unauthorized = (): AdminError => AdminError.of('unauthorized');
      const locked = (until: number): AdminError => AdminError.of('lockedOut', { retryAfter: Math.max(1, Math.ceil((until - clock()) / 1000)) });
      if (auth.kind === 'missing') throw unauthorized();
      if (auth.kind === 'locked') throw locked(auth.until);
      if (auth.kind === 'refused') {
        call.recorded = true;
        if (match !== undefined) call.route = routeKey(methodOf(req), match.route.pattern);
        call.detail = { reason: auth.reason, ...(auth.identity === null ? {} : { token: auth.identity }), ...(auth.lockedUntil === null ? {} : { lockedUntil: new Date(auth.lockedUntil).toISOString() }) };
        throw auth.lockedUntil === null ? unauthorized() : locked(auth.lockedUntil);
      }
      call.principal = auth.principal;
      call.recorded = isMutating(req.method ?? '');
    }
    if (segments === null) throw AdminError.of('badPathEncoding');
    if (match === undefined) throw AdminError.of('noSuchRoute', { path: rawPath });

    const method = methodOf(req);
    const handler = METHODS.includes(method) ? match.route.handlers[method] : undefined;
    if (handler === undefined) {
      const allowed: string[] = METHODS.filter((m) => match.route.handlers[m] !== undefined);
      if (allowed.includes('GET')) allowed.push('HEAD');
      throw AdminError.of('methodNotAllowed', { method: req.method ?? '', allowed: allowed.join(', ') });
    }
    const key = routeKey(method, match.route.pattern);
    call.route = key;
    call.target = targetOfParams(match.params);
    const need = handler.role;
    const principal = call.principal;
    if (need !== 'public' && (principal === null || !allows(principal.role, need))) {
      call.recorded = true;
      const who = principal === null ? 'no identity was given' : `${principal.identity} is ${principal.role === 'operator' ? 'an' : 'a'} ${principal.role}`;
      throw AdminError.of('forbidden', { route: key, role: need, who });
    }

    let body: Promise<Record<string, unknown>> | null = null;
    return handler.run({
      params: match.params,
      query,
      principal,
      audit: call,
      body: () => {
        if (!WITH_BODY.has(method)) return Promise.resolve({});
        body ??= readBody(req, match.route.bodyLimit)
          .then(parseJsonObject)
          .then((parsed) => {
            call.changes ??= fieldNames(parsed);
            return parsed;
          });
        return body;
      },
    });
  }

  // A store that is down fails every request that needs it: logged once, then a count now and then.
  const storeFailures = new FailureLog(logger, 'admin: store unavailable; requests that need it answer 503');

  /** The status an error is answered with (and recorded as); the answer itself is sent by `fail`. */
  function statusOf(err: unknown): number {
    if (err instanceof AdminError) return err.status;
    return err instanceof BackendUnavailableError ? 503 : 500;
  }

  function fail(req: IncomingMessage, res: ServerResponse, requestId: string, err: unknown): void {
    // Only a connection that is really gone is left unanswered. (req.destroyed is no test of
    // that: a request whose body was read to the end is destroyed too.)
    if (res.headersSent || res.destroyed || res.socket?.destroyed === true) {
      if (!res.writableEnded) res.destroy();
      return;
    }
    if (err instanceof AdminError) {
      sendError(res, err);
      return;
    }
    if (err instanceof BackendUnavailableError) {
      storeFailures.failed(err, { requestId, method: req.method, path: (req.url ?? '').split('?')[0] });
      sendError(res, AdminError.of('storeUnavailable', { requestId }));
      return;
    }
    logger.error({ requestId, err, method: req.method, path: (req.url ?? '').split('?')[0] }, 'admin: request failed');
    sendError(res, AdminError.of('internalError', { requestId }));
  }

  function send(req: IncomingMessage, res: ServerResponse, reply: Reply, call: CallAudit): void {
    if ('stream' in reply) {
      // The client may have left while the stream was being set up; HEAD gets the head alone.
      if (res.destroyed || res.socket?.destroyed === true) reply.stream.release();
      else if (req.method === 'HEAD') {
        reply.stream.release();
        res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store' });
        res.end();
      } else {
        reply.stream.attach(res);
        const hash = call.principal?.tokenHash ?? null;
        if (hash !== null) revocation.watch(res, hash);
      }
      return;
    }
    sendReply(res, reply);
  }

  /** Runs the call, records it in the audit trail when it is one to record, then answers. */
  async function respond(req: IncomingMessage, res: ServerResponse, requestId: string, call: CallAudit): Promise<void> {
    const address = req.socket.remoteAddress ?? 'unknown';
    let outcome: { reply: Reply } | { error: unknown };
    try {
      outcome = { reply: await dispatch(req, call, address) };
    } catch (error) {
      outcome = { error };
    }
    if (call.recorded) await trail.record(call, 'reply' in outcome ? outcome.reply.status : statusOf(outcome.error), address, requestId);
    if ('reply' in outcome) send(req, res, outcome.reply, call);
    else fail(req, res, requestId, outcome.error);
  }

  // With TLS_CERT_FILE the admin API and console are HTTPS only, as every listener of the process.
  const tls = serverTlsFromConfig(config);
  const server = createHttpServer(tls, (req, res) => {
    const started = process.hrtime.bigint();
    // Every answer carries an id that is also in the log line about it.
    const requestId = randomUUID();
    res.setHeader('X-Request-Id', requestId);
    for (const [name, value] of SECURITY_HEADERS) res.setHeader(name, value);
    const call = newCallAudit(req.method ?? '', (req.url ?? '').split('?')[0] ?? '');
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const path = (req.url ?? '').split('?')[0];
      const entry = { requestId, method: req.method, path, status: res.statusCode, ms: Math.round(ms * 10) / 10, identity: call.principal?.identity ?? null };
      if (req.method === 'GET' && res.statusCode < 400) logger.debug(entry, 'admin request');
      else logger.info(entry, 'admin request');
      if (res.statusCode < 500 && path?.startsWith('/admin/') === true) storeFailures.ok();
    });
    // The console's page and assets are public (they hold no data); all else is the API.
    if (consoleAssets.serve(req, res)) return;
    respond(req, res, requestId, call).catch((err: unknown) => fail(req, res, requestId, err));
  });
  // Slow or stuck clients must not hold connections forever.
  server.requestTimeout = 30_000;
  server.headersTimeout = 15_000;
  server.keepAliveTimeout = 5_000;

  const host = config.admin.host;
  const wanted = opts.port ?? config.admin.port;
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => {
      streams.close();
      trail.close();
      revocation.close();
      reject(listenFailure(err, LISTENERS.admin, host, wanted) ?? err);
    };
    server.once('error', onError);
    server.listen(wanted, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  server.on('error', (err) => logger.error({ err }, 'admin: server error'));

  const port = (server.address() as AddressInfo).port;
  const url = `${schemeOf(tls)}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  logger.info({ url }, 'admin API listening');

  let closing: Promise<void> | null = null;
  return {
    port,
    url,
    get liveStreams() {
      return streams.size;
    },
    reloadTls() {
      if (tls !== null) reloadHttpServer(server, tls);
    },
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeIdleConnections();
        streams.close();
        trail.close();
        revocation.close();
      });
      return closing;
    },
  };
}
