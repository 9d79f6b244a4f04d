import { credentialParam, findOperation, retryLater, type Answer, type ArgumentBag, type OperationDef } from '../../shared/catalogue/index.js';
import { BackendUnavailableError, type Provider } from '../../shared/backends/types.js';
import type { Config } from '../../shared/config/index.js';
import type { Metrics } from '../../shared/runtime/metrics.js';
import { Authenticator } from './auth.js';
import { CLIENT_ERRORS, ClientError } from '../errors/registry.js';
import type { RefusalNote } from './auth.js';
import { RefusalLog } from './refusals.js';
import { errorMessage } from '../../shared/util/error-message.js';
import { authenticated, type AuthenticatedCall, type CallContext } from './context.js';
import { EventIngest } from './ingest.js';
import { createHandlers, type Handlers, type ServiceBackends } from './handlers.js';
import type { RateLimiter } from './rate-limit.js';
import { OperationLimits } from './limits.js';
import { Sessions } from './sessions.js';

type AnyHandler = (args: ArgumentBag, ctx: CallContext) => Promise<unknown>;

/** What the pipeline needs of one operation, derived once from its catalogue entry. */
interface PreparedOperation {
  readonly op: OperationDef;
  readonly limits: OperationLimits;
  readonly handler: AnyHandler;
  /** The parameters carrying SystemUser and Password (`credential` in the catalogue), if any. */
  readonly systemUserParam: string | undefined;
  readonly passwordParam: string | undefined;
}

/**
 * The operation layer: every binding decodes a call into catalogue arguments and calls `invoke`.
 * Bindings never see backends; handlers never see HTTP.
 *
 * `invoke` runs the same stages for every operation, driven by its catalogue entry:
 *   1. authentication: credentials (within their limits) or the session cookie resolve the provider;
 *      failing that, the operation's `refusals.notAuthenticated` answer;
 *   2. limits: every string's maxLength and every array's maxItems; a value over its limit gets the
 *      `refusals.invalid` answer (for a batch, item by item: the other items go ahead);
 *   3. the handler, with the provider in its context;
 *   4. a backend that cannot be reached is answered "retry later": -5 for each event of the insert
 *      family (clients retry on negative codes), a Server fault saying so for the rest.
 */
export class OperationService {
  private readonly prepared = new Map<string, PreparedOperation>();
  private readonly auth: Authenticator;
  private readonly sessions: Sessions;
  /** Why this thread refused providers' calls, newest kept (refusals.ts). */
  readonly refusals: RefusalLog;

  constructor(
    private readonly backends: ServiceBackends,
    config: Config,
    options: { metrics?: Metrics; rateLimiter?: RateLimiter; refusals?: RefusalLog } = {},
  ) {
    this.auth = new Authenticator(backends, config.logins, options.metrics);
    this.sessions = new Sessions(backends.sessions, config.sessions.timeoutMs);
    this.refusals = options.refusals ?? new RefusalLog();
    const ingest = new EventIngest(backends, {
      timeZone: config.service.timeZone,
      rateLimitEventsPerSecond: config.events.rateLimitPerSecond,
      appendTimeoutMs: config.events.appendTimeoutMs,
      refusals: this.refusals,
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
      ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
    });
    const handlers = createHandlers({ backends, config, auth: this.auth, sessions: this.sessions, ingest, refusals: this.refusals });
    for (const name of Object.keys(handlers) as (keyof Handlers)[]) {
      const op = findOperation(name);
      if (op === undefined) throw new Error(`Handler ${name} has no catalogue entry.`);
      if (op.authentication !== 'none' && op.refusals === undefined) throw new Error(`${name} declares no refusals.`);
      const systemUserParam = credentialParam(op, 'systemUser');
      const passwordParam = credentialParam(op, 'password');
      if (op.authentication === 'credentials' && (systemUserParam === undefined || passwordParam === undefined)) {
        throw new Error(`${name} authenticates by credentials but declares no credential parameters.`);
      }
      // Credentials' limits are part of authenticating: over-long ones are "not authenticated".
      const credentials = new Set([systemUserParam, passwordParam].filter((p) => p !== undefined));
      this.prepared.set(name, { op, limits: new OperationLimits(op, credentials), handler: handlers[name] as AnyHandler, systemUserParam, passwordParam });
    }
  }

  operation(name: string): OperationDef | undefined {
    return findOperation(name);
  }

  /** `args` must have been decoded for `op` (the compiled decoders of gateway/bindings/soap/compiled/ and gateway/bindings/form/form-argument-decoder.ts), which makes the casts sound. */
  invoke(op: OperationDef, args: ArgumentBag, ctx: CallContext): Promise<unknown> {
    return new Promise((resolve, reject) => this.start(op, args, ctx, resolve, reject));
  }

  /**
   * `invoke` for the bindings: the answer goes to `done`, an error that is not a backend's
   * unavailability to `failed`. Callbacks, not a promise per layer: a call answered from memory up
   * to the event log's append costs no promise of its own.
   */
  start(op: OperationDef, args: ArgumentBag, ctx: CallContext, done: (result: unknown) => void, failed: (err: unknown) => void): void {
    const prepared = this.prepared.get(op.name);
    if (prepared === undefined) {
      failed(new Error(`No handler for ${op.name}.`));
      return;
    }
    let result: unknown;
    try {
      result = this.run(prepared, args, ctx);
    } catch (err) {
      this.settleFailure(prepared, args, ctx, err, done, failed);
      return;
    }
    if (result instanceof Promise) result.then(done, (err: unknown) => this.settleFailure(prepared, args, ctx, err, done, failed));
    else done(result);
  }

  /** A binding could not read a value of the call (a fault before any provider is known): kept with the fault's text. */
  refusedUnread(operation: string, now: number, clientAddress: () => string, err: ClientError): void {
    this.refusals.record(null, { operation, now, clientAddress }, faultAnswer(err), err.message);
  }

  /** A backend that cannot be reached is answered "retry later"; anything else is passed on. */
  private settleFailure(prepared: PreparedOperation, args: ArgumentBag, ctx: CallContext, err: unknown, done: (result: unknown) => void, failed: (err: unknown) => void): void {
    if (!(err instanceof BackendUnavailableError)) {
      failed(err);
      return;
    }
    const later = retryLater(prepared.op);
    this.refusals.record(this.systemUserOf(prepared, args, ctx), ctx, answerText(later), `a backend is unavailable (${errorMessage(err)}): the client retries`);
    let result: unknown;
    try {
      result = answer(later, args);
    } catch (refusal) {
      failed(refusal);
      return;
    }
    done(result);
  }

  /** Whose call it is: the provider once known, else the SystemUser it named. */
  private systemUserOf(prepared: PreparedOperation, args: ArgumentBag, ctx: CallContext): string | null {
    return ctx.provider?.systemUser ?? stringArg(args, prepared.systemUserParam);
  }

  /** The refusal answer for a call not authenticated, kept with its reason. */
  private notAuthenticated(prepared: PreparedOperation, args: ArgumentBag, ctx: CallContext, note: RefusalNote, refusal: Answer): unknown {
    this.refusals.record(note.systemUser ?? this.systemUserOf(prepared, args, ctx), ctx, answerText(refusal), note.reason ?? 'not authenticated');
    return answer(refusal, args);
  }

  /**
   * The stages in order. Synchronous as far as memory can answer (a cached provider, credentials
   * verified before, no lock), so the common call costs the handler's own promise and no more;
   * otherwise authentication waits on the stores.
   */
  private run(prepared: PreparedOperation, args: ArgumentBag, ctx: CallContext): unknown {
    const { op, handler } = prepared;
    const refusals = op.refusals;
    if (op.authentication === 'none' || refusals === undefined) return handler(args, ctx);
    const known = this.authenticateNow(prepared, args, ctx);
    if (known !== undefined) return this.authorised(prepared, args, ctx, known);
    const note: RefusalNote = { reason: null };
    return this.authenticate(prepared, args, ctx, note).then((provider) =>
      provider === null ? this.notAuthenticated(prepared, args, ctx, note, refusals.notAuthenticated) : this.authorised(prepared, args, ctx, provider),
    );
  }

  /** Limits, then the handler, for a call whose provider is known. */
  private authorised(prepared: PreparedOperation, args: ArgumentBag, ctx: CallContext, provider: Provider): unknown {
    const { op, limits, handler } = prepared;
    const call = authenticated(ctx, provider);
    const check = limits.check(args);
    if (!check.callInvalid && check.invalidItems.size === 0) return handler(args, call);
    const refusals = op.refusals!;
    const invalid = refusals.invalid ?? refusals.notAuthenticated;
    if (check.callInvalid || limits.perItemParam === null) {
      this.refusals.record(provider.systemUser, ctx, answerText(invalid), limits.problem(args));
      return answer(invalid, args);
    }
    const count = (args[limits.perItemParam] as unknown[]).length;
    for (const i of check.invalidItems) this.refusals.record(provider.systemUser, ctx, answerText(invalid), `event ${i + 1} of ${count}: ${limits.perItemProblem(args, i)}`);
    return this.partialBatch(prepared, args, call, check.invalidItems, invalid);
  }

  /** A batch: the items within their limits go ahead, the others are answered on their own. */
  private async partialBatch(prepared: PreparedOperation, args: ArgumentBag, call: AuthenticatedCall, invalidItems: ReadonlySet<number>, invalid: Answer): Promise<unknown> {
    const param = prepared.limits.perItemParam!;
    const items = args[param] as unknown[];
    const valid = items.filter((_, i) => !invalidItems.has(i));
    const results = (await prepared.handler({ ...args, [param]: valid }, call)) as unknown[];
    const refused = 'value' in invalid ? invalid.value : null;
    let next = 0;
    return items.map((_, i) => (invalidItems.has(i) ? refused : results[next++]));
  }

  /** `authenticate` when memory answers it with a provider at once; undefined otherwise (a refusal included). */
  private authenticateNow(prepared: PreparedOperation, args: ArgumentBag, ctx: CallContext): Provider | undefined {
    if (prepared.op.authentication === 'credentials') {
      return this.auth.authenticateNow(stringArg(args, prepared.systemUserParam), stringArg(args, prepared.passwordParam), ctx.now, ctx.clientAddress);
    }
    const systemUser = this.sessions.resolveNow(ctx.sessionId, ctx.now);
    if (systemUser === undefined || systemUser === null) return undefined;
    const provider = this.backends.providers.peek?.(systemUser);
    return provider?.enabled === true ? provider : undefined;
  }

  private authenticate(prepared: PreparedOperation, args: ArgumentBag, ctx: CallContext, note: RefusalNote): Promise<Provider | null> {
    if (prepared.op.authentication === 'session') return this.sessionProvider(ctx, note);
    const systemUser = stringArg(args, prepared.systemUserParam);
    const password = stringArg(args, prepared.passwordParam);
    return this.auth.authenticate(systemUser, password, ctx.now, ctx.clientAddress, note, ctx.deadline);
  }

  /** The enabled provider of the request's live session, or null (`note` says why). */
  private async sessionProvider(ctx: CallContext, note: RefusalNote): Promise<Provider | null> {
    const systemUser = await this.sessions.resolve(ctx.sessionId, ctx.now, ctx.deadline);
    if (systemUser === null) {
      note.reason = `no live session: call Login first (a session ends after SESSION_TIMEOUT_MINUTES without a call, and when the gateway restarts)${ctx.sessionId === null ? '; the request sent no session cookie' : ''}`;
      return null;
    }
    const provider = await this.backends.providers.get(systemUser, ctx.deadline);
    if (provider?.enabled === true) return provider;
    note.systemUser = systemUser;
    note.reason = provider === null ? 'the provider of this session was deleted' : 'the provider of this session is disabled';
    return null;
  }
}

/** What a client got, as the refusal log writes it: `-3`, `false`, `Client fault`. */
function answerText(a: Answer): string {
  return 'fault' in a ? `${CLIENT_ERRORS[a.fault].fault} fault` : String(a.value);
}

function faultAnswer(err: ClientError): string {
  return err.fault === null ? `HTTP ${err.status}` : `${err.fault} fault`;
}

/** The value (or fault) a refusal answers with; `eachOf` repeats it for every item of a batch. */
function answer(a: Answer, args: ArgumentBag): unknown {
  if ('fault' in a) throw ClientError.of(a.fault);
  if ('eachOf' in a) {
    const items = args[a.eachOf];
    return (Array.isArray(items) ? items : []).map(() => a.value);
  }
  return a.value;
}

function stringArg(args: ArgumentBag, name: string | undefined): string | null {
  const value = name === undefined ? undefined : args[name];
  return typeof value === 'string' ? value : null;
}
