/**
 * The last resort of self-healing. Every engine client replaces a connection that stopped
 * answering and reconnects by itself; should a component still stay broken (a library bug, a
 * state no reconnection leaves) while its engine answers a fresh connection from this very
 * process, restarting the process is the only cure left, and an orchestrator restarts a process
 * that exits, not one that merely reports itself unready. So a component failing for STUCK_EXIT_SECONDS
 * while its engine answers makes the process exit 1 after one line saying which and why. An
 * engine that does not answer a fresh connection either is down or cut off: restarting would not
 * help, and the process waits (unready) for it instead.
 */
import { errorMessage } from '../util/error-message.js';

export interface WatchedComponent {
  /** What it is, for the exit line: "Kafka sends", "Redis client", "ClickHouse inserts"... */
  name: string;
  /** The engine it needs: "Kafka", "Redis", "ClickHouse". */
  engine: string;
  /** True while it works; from memory or one short call of the component's own client. */
  healthy(): boolean | Promise<boolean>;
  /**
   * When it last started failing (epoch ms, the watchdog's clock), if it keeps count itself: a
   * success between two checks then starts the clock again, which two checks that both found it
   * failing cannot tell (a worker whose inserts time out, then go in in pieces, fails and works
   * by turns). Without it, the clock starts at the first check that finds it failing.
   */
  failingSince?(): number | null;
  /** Whether the engine answers a connection made for this question alone (closed after). */
  engineAnswers(): Promise<boolean>;
}

export interface StuckWatchdogOptions {
  /** How long a component may fail; 0 disables the watchdog. */
  limitMs: number;
  /** How often the components are checked. Default 5 s. */
  everyMs?: number;
  logger: { fatal(o: object, m: string): void; warn(o: object, m: string): void };
  now?: () => number;
}


export class StuckWatchdog {
  private readonly failingSince = new Map<WatchedComponent, number>();
  private timer: NodeJS.Timeout | null = null;
  private checking = false;
  private fired = false;
  private markFailed: (err: Error) => void = () => undefined;
  /**
   * Resolves (never rejects) with the reason once a component is found stuck: the process then
   * stops as after a failed thread, and exits 1.
   */
  readonly failed: Promise<Error>;

  constructor(
    private readonly components: readonly WatchedComponent[],
    private readonly options: StuckWatchdogOptions,
  ) {
    this.failed = new Promise((resolve) => (this.markFailed = resolve));
  }

  start(): void {
    if (this.options.limitMs <= 0 || this.timer !== null) return;
    this.timer = setInterval(() => void this.check(), this.options.everyMs ?? 5000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** One round; true when it found a component stuck (and resolved `failed`). */
  async check(): Promise<boolean> {
    if (this.checking || this.fired) return false;
    this.checking = true;
    try {
      const now = this.options.now ?? Date.now;
      for (const c of this.components) {
        let healthy: boolean;
        try {
          healthy = await c.healthy();
        } catch {
          healthy = false;
        }
        if (healthy) {
          this.failingSince.delete(c);
          continue;
        }
        const since = c.failingSince?.() ?? this.failingSince.get(c) ?? now();
        this.failingSince.set(c, since);
        const failingMs = now() - since;
        if (failingMs < this.options.limitMs) continue;
        let answers: boolean;
        try {
          answers = await c.engineAnswers();
        } catch (err) {
          this.options.logger.warn({ component: c.name, err: errorMessage(err) }, `${c.name} still fails, and ${c.engine} does not answer a fresh connection either: waiting for ${c.engine}`);
          answers = false;
        }
        if (!answers) continue;
        // Healthy again meanwhile (the check took a moment)? Then nothing to do.
        if (await Promise.resolve(c.healthy()).catch(() => false)) {
          this.failingSince.delete(c);
          continue;
        }
        const seconds = Math.round(failingMs / 1000);
        const reason = `${c.name}: failing for ${seconds} s while ${c.engine} answers a fresh connection; exiting (code 1) so the supervisor restarts the process`;
        this.fired = true;
        this.stop();
        this.options.logger.fatal({ component: c.name, engine: c.engine, failingForSeconds: seconds }, reason);
        this.markFailed(new Error(reason));
        return true;
      }
      return false;
    } finally {
      this.checking = false;
    }
  }
}
