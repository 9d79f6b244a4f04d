import type { KafkaAdmin } from '../shared/backends/kafka/client.js';
import { groupLag } from '../shared/backends/kafka/group-positions.js';
import { type WorkerLogger } from './log.js';
import { errorMessage } from '../shared/util/error-message.js';

interface LagMonitorOptions {
  topic: string;
  groupId: string;
  intervalMs: number;
  logger: WorkerLogger;
  /** Told each partition's lag at every measurement. */
  report?: (partition: number, lag: number) => void;
}

/**
 * Group lag per partition (high watermark − committed offset, or − low watermark before the first
 * commit), measured every intervalMs through the admin client, one measurement at a time (with the
 * broker down one takes seconds). A failure keeps the last figures and is logged once, until a
 * measurement works again.
 */
export class LagMonitor {
  lag: Record<number, number> = {};
  private timer: NodeJS.Timeout | null = null;
  private measuring = false;
  private failing = false;

  constructor(
    private readonly admin: KafkaAdmin,
    private readonly options: LagMonitorOptions,
  ) {}

  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => void this.measure(), this.options.intervalMs);
    this.timer.unref();
    void this.measure();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  async measure(): Promise<void> {
    if (this.measuring) return;
    this.measuring = true;
    const { topic, groupId } = this.options;
    try {
      const lag: Record<number, number> = {};
      for (const [partition, n] of await groupLag(this.admin, topic, groupId)) {
        lag[partition] = n;
        this.options.report?.(partition, n);
      }
      this.lag = lag;
      if (this.failing) this.options.logger.info({ lag }, 'consumer lag measured again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.options.logger.warn({ err: errorMessage(err) }, 'could not measure consumer lag (logged once until it works again)');
      this.failing = true;
    } finally {
      this.measuring = false;
    }
  }
}
