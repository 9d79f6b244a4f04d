import type { ServerResponse } from 'node:http';
import type { OperatorTokenStore } from '../../shared/backends/operators.js';
import type { Logger } from '../../shared/runtime/logger.js';
import { errorMessage } from '../../shared/util/error-message.js';

/** How often the tokens of open live streams are checked: a revoked token's stream ends within about this. */
const STREAM_RECHECK_MS = 500;

/**
 * A live event stream outlives the request that opened it, so the per-request token check alone
 * would let a revoked or expired token keep watching. The tokens behind open streams are looked up
 * again every STREAM_RECHECK_MS (once per distinct token, at most ADMIN_STREAMS_MAX streams), and
 * the streams of one no longer valid are ended. A store that cannot answer ends nothing: the next
 * check decides.
 */
export class StreamRevocation {
  private readonly watched = new Map<ServerResponse, string>();
  private timer: NodeJS.Timeout | null = null;
  private checking = false;

  constructor(
    private readonly tokens: OperatorTokenStore,
    private readonly clock: () => number,
    private readonly logger: Logger,
  ) {}

  /** Ends `res` once the token with this hash is revoked or expired. */
  watch(res: ServerResponse, tokenHash: string): void {
    this.watched.set(res, tokenHash);
    res.once('close', () => this.watched.delete(res));
    if (this.timer === null) {
      this.timer = setInterval(() => void this.check(), STREAM_RECHECK_MS);
      this.timer.unref();
    }
  }

  close(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.watched.clear();
  }

  private async check(): Promise<void> {
    if (this.watched.size === 0) {
      this.close();
      return;
    }
    if (this.checking) return;
    this.checking = true;
    try {
      const now = this.clock();
      for (const hash of new Set(this.watched.values())) {
        const token = await this.tokens.use(hash, now);
        if (token !== null && (token.expiresAt === null || token.expiresAt > now)) continue;
        for (const [res, h] of this.watched) {
          if (h !== hash) continue;
          this.watched.delete(res);
          res.end();
        }
        this.logger.info({ identity: token?.name ?? null }, 'admin: live stream ended, its token is no longer valid');
      }
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'admin: could not recheck the tokens of live streams');
    } finally {
      this.checking = false;
    }
  }
}
