import proxyaddr from 'proxy-addr';
import type { OperationDef } from '../../shared/catalogue/index.js';
import type { Config } from '../../shared/config/index.js';
import type { Logger } from '../../shared/runtime/logger.js';
import { deadlineIn } from '../../shared/util/deadline.js';
import { ClientError, type ClientErrorKey, type ClientErrorParams } from '../errors/registry.js';
import type { CallContext } from '../service/context.js';
import type { Exchange, ProxyTrust, RejectReason } from '../transport/exchange.js';
import { TEXT_PLAIN } from '../transport/media-types.js';
import { readCookie } from '../transport/request-headers.js';
import { Status, statusLine } from '../transport/status.js';
import type { OperationService } from '../service/service.js';
import { TodayAt, type DecodedCall, type Today } from './arguments.js';

/** The answer to every failure that is ours, never the client's (docs/protocol.md §Errors). */
export const INTERNAL_ERROR = ClientError.of('internalError');

/** A registry error as one `text/plain` line: the answer wherever there is no fault to write. */
export function sendErrorLine<K extends ClientErrorKey>(ex: Exchange, key: K, ...params: ClientErrorParams<K>): void {
  const error = ClientError.of(key, ...params);
  ex.send(statusLine(error.status), TEXT_PLAIN, `${error.message}\r\n`);
}

/**
 * What one binding family contributes to a call: how it reads arguments and writes answers. The
 * rest of a call (BindingCore) is the same for all of them.
 *
 * `Frame` is what an answer depends on besides the operation (SOAP: the envelope's version; HTTP:
 * nothing), `Input` what the binding read of the request (SOAP: the Body element's children; HTTP:
 * the form fields), `Writer` the result writer it renders once per operation.
 */
export interface BindingCodec<Frame, Input, Writer> {
  /** Names the binding in the log line of an internal error. */
  readonly name: string;
  /** The operation's arguments; throws when the client sent something that does not read. */
  decode(op: OperationDef, input: Input, today: Today): DecodedCall;
  /** Answers what `decode` threw when the client is at fault; false for an error of ours. */
  refuse(ex: Exchange, frame: Frame, err: unknown): boolean;
  /** Renders what is constant in an operation's answers (BindingCore keeps one per operation). */
  writer(op: OperationDef): Writer;
  contentType(frame: Frame): string;
  /** The body of a successful call's answer (bytes: see soap/answer-bytes.ts for how long they stay valid). */
  encode(writer: Writer, frame: Frame, result: unknown): string | Uint8Array;
  /** Answers a registry error the operation layer threw, or INTERNAL_ERROR for an error of ours. */
  fault(ex: Exchange, frame: Frame, error: ClientError): void;
}

/** What every binding needs of the gateway. */
export interface BindingDeps {
  readonly service: OperationService;
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: () => number;
  /** The Set-Cookie value that carries a new session id. */
  readonly cookieHeader: (sessionId: string) => string;
  /** Counts a request refused while reading it (gateway_rejected_requests_total). */
  readonly rejected: (reason: RejectReason) => void;
}

/**
 * Decode → invoke → encode, the part of a call every binding shares: the call context (clock,
 * session cookie, client address through TRUSTED_PROXIES, the extra fields), the session cookie a
 * Login sets, one result writer per operation, and the mapping of a ClientError and of an error of
 * ours to the binding's fault. A binding finds the operation and reads the request; then `call`.
 */
export class BindingCore<Frame, Input, Writer> {
  private readonly trust: ProxyTrust;
  private readonly writers = new Map<string, Writer>();
  private readonly failed: string;
  private readonly today: TodayAt;

  constructor(
    private readonly codec: BindingCodec<Frame, Input, Writer>,
    private readonly deps: BindingDeps,
  ) {
    this.trust = proxyaddr.compile(deps.config.service.trustedProxies);
    this.failed = `${codec.name} request failed`;
    this.today = new TodayAt(deps.config.service.timeZone);
  }

  /** Runs `op` with what the request carried and answers it; never throws. */
  call(ex: Exchange, frame: Frame, op: OperationDef, input: Input): void {
    const { config, clock } = this.deps;
    ex.operation = op.name;
    const now = clock();
    let decoded: DecodedCall;
    try {
      decoded = this.codec.decode(op, input, this.today.at(now));
    } catch (err) {
      if (err instanceof ClientError) {
        // Kept with the fault's text (which value could not be read), under no SystemUser: none was read.
        const address = ex.clientAddress(this.trust);
        this.deps.service.refusedUnread(op.name, now, () => address, err);
      }
      if (!this.codec.refuse(ex, frame, err)) this.internalError(ex, frame, err);
      return;
    }
    const ctx: CallContext = {
      operation: op.name,
      now,
      deadline: deadlineIn(config.events.appendTimeoutMs),
      sessionId: readCookie(ex.header('cookie'), config.sessions.cookieName),
      extras: decoded.extras,
      clientAddress: () => ex.clientAddress(this.trust),
      newSessionId: null,
      provider: null,
    };
    this.deps.service.start(
      op,
      decoded.args,
      ctx,
      (result) => this.answer(ex, frame, op, ctx, result),
      (err: unknown) => (err instanceof ClientError ? this.codec.fault(ex, frame, err) : this.internalError(ex, frame, err)),
    );
  }

  /** 413 while the body streams in (BODY_LIMIT_BYTES), the same text in every binding. */
  tooLarge(ex: Exchange): void {
    sendErrorLine(ex, 'bodyTooLarge', { limit: this.deps.config.service.bodyLimitBytes });
  }

  /** Logs an error of ours and answers the binding's Server fault; never a stack trace. */
  internalError(ex: Exchange, frame: Frame, err: unknown): void {
    this.deps.logger.error({ err }, this.failed);
    this.codec.fault(ex, frame, INTERNAL_ERROR);
  }

  private answer(ex: Exchange, frame: Frame, op: OperationDef, ctx: CallContext, result: unknown): void {
    let body: string | Uint8Array;
    try {
      body = this.codec.encode(this.writer(op), frame, result);
    } catch (err) {
      this.internalError(ex, frame, err);
      return;
    }
    const headers: [string, string][] | undefined = ctx.newSessionId === null ? undefined : [['Set-Cookie', this.deps.cookieHeader(ctx.newSessionId)]];
    ex.send(Status.ok, this.codec.contentType(frame), body, headers);
  }

  private writer(op: OperationDef): Writer {
    let w = this.writers.get(op.name);
    if (w === undefined) {
      w = this.codec.writer(op);
      this.writers.set(op.name, w);
    }
    return w;
  }
}
