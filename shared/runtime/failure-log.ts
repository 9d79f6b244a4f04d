import { errorMessage } from '../util/error-message.js';

/** What FailureLog writes to: a pino logger or any object with these two methods. */
export interface FailureLogger {
  warn(o: object, m: string): void;
  info(o: object, m: string): void;
}

/**
 * A dependency that fails again and again, logged quietly: once when it breaks, then at most once
 * every `everyMs` with the number of failures since the last line, and once when it works again
 * (how long it failed, how many failures in all). A stalled engine answers every call with the
 * same timeout; a line per call drowned the log (143 lines in 20 s from the admin overview alone)
 * and told nothing the first one did not.
 */
export class FailureLog {
  private since: number | null = null;
  private lastLine = 0;
  private unlogged = 0;
  private total = 0;

  constructor(
    private readonly logger: FailureLogger,
    /** What is failing, as the message of every line: "Kafka sends fail", "ClickHouse insert failed". */
    private readonly what: string,
    private readonly everyMs = 5000,
    private readonly now: () => number = Date.now,
  ) {}

  /** True from the first failure until the next success. */
  get failing(): boolean {
    return this.since !== null;
  }

  /** When the failures since the last success began (this log's clock), null while it works. */
  get failingSince(): number | null {
    return this.since;
  }

  /** Failures since the last success. */
  get failures(): number {
    return this.total;
  }

  /** One failure: logged now if it is the first or the last line is `everyMs` old, else counted. */
  failed(error?: unknown, fields: object = {}): void {
    const now = this.now();
    this.total++;
    const detail = error === undefined ? {} : { err: errorMessage(error) };
    if (this.since === null) {
      this.since = now;
      this.lastLine = now;
      this.unlogged = 0;
      this.logger.warn({ ...fields, ...detail }, this.what);
      return;
    }
    this.unlogged++;
    if (now - this.lastLine >= this.everyMs) {
      this.logger.warn({ ...fields, ...detail, failuresSinceLastLine: this.unlogged, failingForMs: now - this.since }, `${this.what} (still)`);
      this.lastLine = now;
      this.unlogged = 0;
    }
  }

  /** A success: logged once if it ends a run of failures. */
  ok(fields: object = {}): void {
    if (this.since === null) return;
    const now = this.now();
    this.logger.info({ ...fields, failures: this.total, failedForMs: now - this.since }, `${this.what}: recovered`);
    this.since = null;
    this.total = 0;
    this.unlogged = 0;
  }
}
