import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';
import { bodyDeadlines, type ArrivingBody } from './body-deadline.js';
import type { HttpRequest, HttpResponse } from './uws.js';

/**
 * One request/response pair on uWebSockets.js. uWS hands out the request object only during the
 * synchronous handler, detaches body buffers after each callback and forbids touching an
 * aborted response: this wrapper captures what we need up front and guards every write.
 */
type HeaderName = 'content-type' | 'content-length' | 'soapaction' | 'cookie' | 'host' | 'x-forwarded-for';

/** Why a request was refused before any operation ran (gateway_rejected_requests_total). */
export type RejectReason = 'unknown_charset' | 'invalid_encoding' | 'bad_escape' | 'bad_content_length' | 'slow_body';

/** Which hops of X-Forwarded-For to believe (proxy-addr's compiled trust function). */
export type ProxyTrust = (address: string, hop: number) => boolean;

export class Exchange implements ArrivingBody {
  aborted = false;
  done = false;
  /** The body's current 10 s window (body-deadline.ts): set when its reading starts. */
  bodyWindowStart = 0;
  bodyWindowBytes = 0;
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

/** State of one header walk (`readHeaders`): module-level so the walk allocates no closure. */
let walkFirstLength: string | null = null;
let walkAmbiguous = false;
let walkInto: Record<HeaderName, string> | null = null;
/** Bit per kept header the walk has met: the first line of each wins, as uWS's getHeader answers. */
let walkSeen = 0;

/** The bit of a header `Exchange` keeps, or 0 (uWS hands names lower-cased). */
function keptBit(name: string): number {
  switch (name) {
    case 'content-type':
      return 1;
    case 'content-length':
      return 2;
    case 'soapaction':
      return 4;
    case 'cookie':
      return 8;
    case 'host':
      return 16;
    case 'x-forwarded-for':
      return 32;
    default:
      return 0;
  }
}

function visitHeader(name: string, value: string): void {
  if (walkInto !== null) {
    const bit = keptBit(name);
    if (bit !== 0 && (walkSeen & bit) === 0) {
      walkSeen |= bit;
      walkInto[name as HeaderName] = value;
    }
  }
  if (name !== 'content-length') return;
  if (walkFirstLength === null) {
    walkFirstLength = value;
    if (!isDigits(value)) walkAmbiguous = true;
  } else if (value !== walkFirstLength) {
    walkAmbiguous = true;
  }
}

function isDigits(value: string): boolean {
  if (value.length === 0) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/**
 * True when the body's length is in doubt: two Content-Length lines that differ, or one that is
 * not a number (empty included). uWS frames the body by the first line, a proxy in front may use
 * another, and what one reads as body the other reads as the next request. uWS itself closes the
 * connection, unanswered, on a lone non-numeric value and on Content-Length with
 * Transfer-Encoding; the rest only a walk over every header line finds (bench/header-scan.ts).
 */
export function lengthIsAmbiguous(req: HttpRequest): boolean {
  return readHeaders(req, null);
}

/**
 * One walk over the request's header lines: fills `into` with the first value of each header it
 * names (what getHeader would answer, without a native call per header: the walk meets every line
 * anyway) and answers `lengthIsAmbiguous`.
 */
function readHeaders(req: HttpRequest, into: Record<HeaderName, string> | null): boolean {
  walkFirstLength = null;
  walkAmbiguous = false;
  walkInto = into;
  walkSeen = 0;
  req.forEach(visitHeader);
  walkInto = null;
  return walkAmbiguous;
}

export const Status = {
  ok: '200 OK',
  badRequest: '400 Bad Request',
  notFound: '404 Not Found',
  methodNotAllowed: '405 Method Not Allowed',
  tooLarge: '413 Payload Too Large',
  unsupportedMediaType: '415 Unsupported Media Type',
  serverError: '500 Internal Server Error',
  unavailable: '503 Service Unavailable',
} as const;

const STATUS_LINES: ReadonlyMap<number, string> = new Map(Object.values(Status).map((line) => [Number(line.slice(0, 3)), line]));

/** `413` → `413 Payload Too Large`: the status line of a code in `Status`. */
export function statusLine(code: number): string {
  const line = STATUS_LINES.get(code);
  if (line === undefined) throw new Error(`No status line for ${code}.`);
  return line;
}

export const TEXT_PLAIN = 'text/plain; charset=utf-8';
export const TEXT_XML = 'text/xml; charset=utf-8';

interface MediaType {
  readonly type: string;
  readonly params: ReadonlyMap<string, string>;
}

/** Parsed Content-Type values: nearly every request of a client repeats the same few. */
const mediaTypes = new Map<string, MediaType>();
const MEDIA_TYPES_KEPT = 256;
/** Longer values (a long SOAP 1.2 action) are parsed every time rather than kept. */
const MEDIA_TYPE_KEPT_LENGTH = 256;

/** Parses `type/subtype; a=b; c="d"` into the lower-cased base type and its parameters. */
export function parseMediaType(value: string): MediaType {
  const known = mediaTypes.get(value);
  if (known !== undefined) return known;
  const parsed = parseMediaTypeNow(value);
  if (value.length <= MEDIA_TYPE_KEPT_LENGTH) {
    // Bounded whatever clients send: past the cap, start over (the common values come back at once).
    if (mediaTypes.size >= MEDIA_TYPES_KEPT) mediaTypes.clear();
    mediaTypes.set(value, parsed);
  }
  return parsed;
}

function parseMediaTypeNow(value: string): MediaType {
  const parts = value.split(';');
  const params = new Map<string, string>();
  for (const p of parts.slice(1)) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    params.set(p.slice(0, eq).trim().toLowerCase(), p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1'));
  }
  return { type: (parts[0] ?? '').trim().toLowerCase(), params };
}

export function readCookie(header: string, name: string): string | null {
  if (header === '') return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** Receives a request body as it streams in. `fail` gets anything `chunk` or `end` threw. */
export interface BodySink {
  chunk(data: Uint8Array, last: boolean): void;
  end(): void;
  tooLarge(): void;
  fail(err: unknown): void;
}

/**
 * Streams the request body into `sink`, enforcing `limit` while streaming (a declared
 * Content-Length over the limit is refused before any byte is read) and the pace it must arrive
 * at (body-deadline.ts). Never throws into uWS:
 * an exception escaping a native callback would take the process down.
 */
export function readBody(ex: Exchange, limit: number, sink: BodySink): void {
  const declared = Number(ex.header('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    sink.tooLarge();
    return;
  }
  let received = 0;
  let stopped = false;
  bodyDeadlines.start(ex);
  ex.res.onData((ab, isLast) => {
    if (stopped || ex.done) return;
    received += ab.byteLength;
    bodyDeadlines.progress(ex, ab.byteLength, isLast);
    if (received > limit) {
      stopped = true;
      sink.tooLarge();
      return;
    }
    try {
      sink.chunk(new Uint8Array(ab), isLast);
      if (isLast) sink.end();
    } catch (err) {
      stopped = true;
      sink.fail(err);
    }
  });
}
