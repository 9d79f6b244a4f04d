import { pino } from 'pino';
import type { BindingDeps } from '../../gateway/bindings/core.js';
import { serviceDescription } from '../../gateway/metadata/description.js';
import { Router } from '../../gateway/router.js';
import type { OperationService } from '../../gateway/service/service.js';
import { Exchange } from '../../gateway/transport/exchange.js';
import type { HttpRequest, HttpResponse } from '../../gateway/transport/uws.js';
import { loadConfig, type Config } from '../../shared/config/index.js';

/** One HTTP request as the router sees it: the request line's parts, the headers, the body bytes. */
export interface WireRequest {
  readonly method: string;
  /** Path and query, as on the request line. */
  readonly target: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
}

export interface WireReply {
  /** `200 OK` */
  readonly status: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
}

type DataHandler = (chunk: ArrayBuffer, isLast: boolean) => void;

/**
 * The part of uWS's request and response the transport uses, over a request held in memory: the
 * router, the bindings and the operation layer run exactly as behind a socket, without one.
 */
function fakeUws(request: WireRequest, reply: (r: WireReply) => void): { req: HttpRequest; res: HttpResponse; deliver: () => void } {
  const q = request.target.indexOf('?');
  const headers = request.headers.map(([k, v]) => [k.toLowerCase(), v] as const);
  const out: [string, string][] = [];
  let status = '200 OK';
  const body: { onData: DataHandler | null } = { onData: null };
  const req = {
    getMethod: () => request.method.toLowerCase(),
    getUrl: () => (q < 0 ? request.target : request.target.slice(0, q)),
    getQuery: () => (q < 0 ? undefined : request.target.slice(q + 1)),
    getHeader: (name: string) => headers.find(([k]) => k === name)?.[1] ?? '',
    forEach: (visit: (key: string, value: string) => void) => {
      for (const [k, v] of headers) visit(k, v);
    },
  };
  const res = {
    onAborted: () => res,
    onData: (handler: DataHandler) => {
      body.onData = handler;
      return res;
    },
    cork: (work: () => void) => {
      work();
      return res;
    },
    writeStatus: (line: string) => {
      status = line;
      return res;
    },
    writeHeader: (key: string, value: string) => {
      out.push([key, value]);
      return res;
    },
    end: (body: string = '') => {
      reply({ status, headers: out, body: Buffer.from(body, 'utf8') });
      return res;
    },
    endWithoutBody: () => {
      reply({ status, headers: out, body: Buffer.alloc(0) });
      return res;
    },
    getRemoteAddressAsText: () => new TextEncoder().encode('203.0.113.9').buffer,
  };
  const deliver = (): void => {
    const handler = body.onData;
    if (handler === null) return;
    const copy = new Uint8Array(request.body.byteLength);
    copy.set(request.body);
    handler(copy.buffer, true);
  };
  return { req: req as unknown as HttpRequest, res: res as unknown as HttpResponse, deliver };
}

export interface InProcessGateway {
  readonly config: Config;
  send(request: WireRequest): Promise<WireReply>;
}

/** The router and bindings of the public port over `service`, called without a socket. */
export function inProcessGateway(service: OperationService, clock: () => number, env: Record<string, string> = {}): InProcessGateway {
  const config = loadConfig({ ADMIN_TOKEN: 'test-token', ...env });
  const deps: BindingDeps = {
    service,
    config,
    logger: pino({ level: 'silent' }),
    clock,
    cookieHeader: (id) => `${config.sessions.cookieName}=${id}; path=/; HttpOnly`,
    rejected: () => undefined,
  };
  const router = new Router({ deps, logger: deps.logger, description: serviceDescription(config.service) });
  return {
    config,
    send: (request) =>
      new Promise<WireReply>((resolve) => {
        const { req, res, deliver } = fakeUws(request, resolve);
        router.route(new Exchange(res, req, () => undefined));
        deliver();
      }),
  };
}
