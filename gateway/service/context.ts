import type { Provider } from '../../shared/backends/types.js';
import type { Deadline } from '../../shared/util/deadline.js';

/** What a handler knows about the call, independent of the binding that carried it. */
export interface CallContext {
  /** The catalogue operation being called. */
  readonly operation: string;
  readonly now: number;
  /**
   * When the call must be answered (APPEND_TIMEOUT_MS from its start): every store call it makes
   * gets what is left of it, so their waits add up to this, not to one timeout each.
   */
  readonly deadline: Deadline;
  /** Value of the session cookie, if the request carried one. */
  readonly sessionId: string | null;
  /** Fields sent that the operation does not declare (see gateway/bindings/arguments.ts). */
  readonly extras: ReadonlyMap<string, string>;
  /** The caller's address (the socket's, or X-Forwarded-For from a trusted proxy); read lazily. */
  readonly clientAddress: () => string;
  /** Set by a successful Login: the binding sends it as the session cookie. */
  newSessionId: string | null;
  /**
   * Null until the call pipeline resolves the provider (then the call is an AuthenticatedCall).
   * Declared from the start so that setting it does not reshape the object on every request.
   */
  provider: Provider | null;
}

/** The context of an operation whose provider the call pipeline has resolved. */
export interface AuthenticatedCall extends CallContext {
  provider: Provider;
}

/** The context, now known to be `provider`'s call. */
export function authenticated(ctx: CallContext, provider: Provider): AuthenticatedCall {
  ctx.provider = provider;
  return ctx as AuthenticatedCall;
}

