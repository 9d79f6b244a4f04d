import type { Admin } from 'kafkajs';
import { errorText, type WorkerLogger } from './log.js';

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
    private readonly admin: Admin,
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
      const [high, groups] = await Promise.all([this.admin.fetchTopicOffsets(topic), this.admin.fetchOffsets({ groupId, topics: [topic] })]);
      const committed = new Map<number, string>();
      for (const t of groups) if (t.topic === topic) for (const p of t.partitions) committed.set(p.partition, p.offset);
      const lag: Record<number, number> = {};
      for (const p of high) {
        const c = committed.get(p.partition);
        const from = c === undefined || c === '-1' ? Number(p.low) : Number(c);
        lag[p.partition] = Math.max(0, Number(p.high) - from);
        this.options.report?.(p.partition, lag[p.partition]!);
      }
      this.lag = lag;
      if (this.failing) this.options.logger.info({ lag }, 'consumer lag measured again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.options.logger.warn({ err: errorText(err) }, 'could not measure consumer lag (logged once until it works again)');
      this.failing = true;
    } finally {
      this.measuring = false;
    }
  }
}
