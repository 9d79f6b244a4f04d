import { findOperation, type ArgumentBag, type OperationDef } from '../../shared/catalogue/index.js';
import { BackendUnavailableError, type Backends } from '../../shared/backends/types.js';
import type { Config } from '../../shared/config.js';
import type { Metrics } from '../../shared/metrics.js';
import { Authenticator } from './auth.js';
import { Faults, type CallContext } from './context.js';
import { ResultCode } from './events.js';
import { EventIngest } from './events.js';
import { createHandlers, type Handlers } from './handlers.js';
import { Sessions } from './sessions.js';

/**
 * The operation layer: every binding decodes a call into catalogue arguments and calls `invoke`.
 * Bindings never see backends; handlers never see HTTP.
 */
export class OperationService {
  private readonly handlers: Handlers;

  constructor(backends: Backends, config: Config, options: { metrics?: Metrics } = {}) {
    const auth = new Authenticator(backends, config);
    const sessions = new Sessions(backends.sessions, config.sessionTimeoutMs);
    const ingest = new EventIngest(backends, {
      timeZone: config.timeZone,
      rateLimitEventsPerSecond: config.rateLimitEventsPerSecond,
      appendTimeoutMs: config.appendTimeoutMs,
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    });
    this.handlers = createHandlers({ backends, config, auth, sessions, ingest });
  }

  operation(name: string): OperationDef | undefined {
    return findOperation(name);
  }

  /**
   * `args` must have been decoded for `op` (bindings/arguments.ts), which makes the cast sound.
   * A backend that cannot be reached is answered as "retry later": -5 for each event of the
   * insert family (clients retry on negative codes), a Server fault saying so for the rest.
   */
  async invoke(op: OperationDef, args: ArgumentBag, ctx: CallContext): Promise<unknown> {
    const handler = this.handlers[op.name as keyof Handlers] as (a: ArgumentBag, c: CallContext) => Promise<unknown>;
    try {
      return await handler(args, ctx);
    } catch (err) {
      if (!(err instanceof BackendUnavailableError)) throw err;
      if (op.result.name === 'int') return ResultCode.Unavailable;
      if (op.result.name === 'ArrayOfInt') return (Array.isArray(args.Eventos) ? args.Eventos : []).map(() => ResultCode.Unavailable);
      throw Faults.unavailable();
    }
  }
}
