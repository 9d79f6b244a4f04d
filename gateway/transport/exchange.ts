import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';
import type { ArrivingBody } from './body-deadline.js';
import { TEXT_PLAIN } from './media-types.js';
import { readHeaders, type HeaderName } from './request-headers.js';
import type { HttpRequest, HttpResponse } from './uws.js';

/** Why a request was refused before any operation ran (gateway_rejected_requests_total). */
export type RejectReason = 'unknown_charset' | 'invalid_encoding' | 'bad_escape' | 'bad_content_length' | 'slow_body';

/** Which hops of X-Forwarded-For to believe (proxy-addr's compiled trust function). */
export type ProxyTrust = (address: string, hop: number) => boolean;

/**
 * One request/response pair on uWebSockets.js. uWS hands out the request object only during the
 * synchronous handler, detaches body buffers after each callback and forbids touching an
 * aborted response: this wrapper captures what we need up front (the header walk:
 * request-headers.ts) and guards every write. Its body is read by request-body.ts.
 */
export class Exchange implements ArrivingBody {
  aborted = false;
  done = false;
  /** The body's current 10 s window (body-deadline.ts): set when its reading starts. */
  bodyWindowStart = 0;
  bodyWindowBytes = 0;
  /** Links of the list of bodies arriving, kept by body-deadline.ts. */
  bodyPrev: ArrivingBody | null = null;
  bodyNext: ArrivingBody | null = null;
  /** For metrics and logs: set by the binding once it knows them. */
  operation = '-';
  binding = 'other';
  status = '';
  readonly startedAt = performance.now();
  readonly method: string;
  readonly path: string;
  readonly query: string;
  /** Content-Length lines that differ or one that is not a number: see `lengthIsAmbiguous`. */
  readonly ambiguousLength: boolean;
  /** The only request headers any route reads, copied while uWS still lends the request. */
  private readonly headers: Readonly<Record<HeaderName, string>>;

  constructor(
    readonly res: HttpResponse,
    req: HttpRequest,
    private readonly onFinish: (ex: Exchange) => void,
  ) {
    this.method = req.getMethod().toUpperCase();
    this.path = req.getUrl();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- uWS answers undefined when the URL has no query (measured), whatever its typings say
    this.query = req.getQuery() ?? '';
    const headers: Record<HeaderName, string> = { 'content-type': '', 'content-length': '', soapaction: '', cookie: '', host: '', 'x-forwarded-for': '' };
    this.ambiguousLength = readHeaders(req, headers);
    this.headers = headers;
    res.onAborted(() => {
      this.aborted = true;
      this.finish();
    });
  }

  private address: string | null = null;

  /**
   * The client's address: the socket's peer, or, when that peer is a trusted proxy, the last
   * X-Forwarded-For hop not trusted (proxy-addr's rules, as Express applies them). Read lazily:
   * only authentication needs it.
   */
  clientAddress(trust: ProxyTrust): string {
    if (this.address === null) {
      const peer = this.aborted || this.done ? '' : Buffer.from(this.res.getRemoteAddressAsText()).toString('latin1');
      const forwarded = this.headers['x-forwarded-for'];
      const request = { socket: { remoteAddress: peer }, connection: { remoteAddress: peer }, headers: forwarded === '' ? {} : { 'x-forwarded-for': forwarded } };
      this.address = proxyaddr(request as unknown as IncomingMessage, trust) || 'unknown';
    }
    return this.address;
  }

  /** '' when absent (uWS does not tell absent from empty; no route needs the difference). */
  header(name: HeaderName): string {
    return this.headers[name];
  }

  /** Closes the connection without an answer (a body that arrives too slowly). */
  drop(): void {
    if (this.done || this.aborted) return;
    this.res.close();
  }

  /** Sends a complete response unless one was sent already or the client went away. */
  send(status: string, contentType: string | null, body: string | Uint8Array, extraHeaders?: readonly [string, string][]): void {
    this.respond(status, contentType, body, extraHeaders, false);
  }

  /**
   * Answers one text/plain line and closes the connection without reading the body: when the
   * request's framing is in doubt, nothing after it on the connection can be trusted.
   */
  refuse(status: string, message: string): void {
    this.respond(status, TEXT_PLAIN, `${message}\r\n`, undefined, true);
  }

  private respond(status: string, contentType: string | null, body: string | Uint8Array, extraHeaders: readonly [string, string][] | undefined, close: boolean): void {
    if (this.done || this.aborted) return;
    this.status = status.slice(0, 3);
    this.res.cork(() => {
      this.res.writeStatus(status);
      if (contentType !== null) this.res.writeHeader('Content-Type', contentType);
      if (extraHeaders) for (const [k, v] of extraHeaders) this.res.writeHeader(k, v);
      if (this.method === 'HEAD') {
        // The headers a GET would get, never a body (a body after HEAD desynchronizes a kept-alive
        // connection). The length goes in as a header: uWS's endWithoutBody(length) closes the
        // connection instead of keeping it alive. A refusal, which must hang up, ends with an
        // empty body instead: endWithoutBody(length, true) waits for the body it announced.
        if (close) {
          this.res.end('', true);
        } else {
          this.res.writeHeader('Content-Length', String(Buffer.byteLength(body)));
          this.res.endWithoutBody();
        }
      } else {
        this.res.end(body, close);
      }
    });
    this.finish();
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.onFinish(this);
  }
}
