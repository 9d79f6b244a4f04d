import { FailureLog } from '../shared/runtime/failure-log.js';
import type { LoaderOptions, LoaderStats } from './loader-types.js';
import { errorMessage } from '../shared/util/error-message.js';

/** A partition's offsets stored in ClickHouse and not yet committed to Kafka. */
export interface PartitionOffsets {
  partition: number;
  /** The next offset to read once committed (a failed commit is retried with the next batch, or by commitTimer). */
  pendingCommit: bigint | null;
  commitTimer: NodeJS.Timeout | null;
}

export interface OffsetCommitsContext {
  topic: string;
  commit: LoaderOptions['commit'];
  logger: LoaderOptions['logger'];
  stats: LoaderStats;
  /** How long a commit that failed, with no batch after it, waits before it is tried again. */
  retryAfterMs: number;
  isAssigned(partition: number): boolean;
  isRunning(): boolean;
  /** Runs `work` as the partition's one flush in flight; false (nothing run) when one is in flight. */
  runAsFlush(partition: number, work: () => Promise<void>): boolean;
}

/**
 * The last step of storing a batch: commit the partition's offset, only after its rows are in
 * ClickHouse. Only the partition's flush commits it, one commit at a time, so its committed offset
 * never goes back; a commit that fails is retried with the next batch or, when no batch comes, by
 * a timer of its own that runs as a flush.
 */
export class OffsetCommits {
  private readonly failures: FailureLog;

  constructor(private readonly context: OffsetCommitsContext) {
    this.failures = new FailureLog(context.logger, 'offset commit failed; retried with the next batch');
  }

  /** Offsets before `next` are stored: commit up to there (never back). */
  async stored(q: PartitionOffsets, next: bigint): Promise<void> {
    if (q.pendingCommit === null || next > q.pendingCommit) q.pendingCommit = next;
    await this.commitPending(q);
  }

  /** Commits the partition's stored offset while it is still assigned; a failure is retried later. */
  async commitPending(q: PartitionOffsets): Promise<void> {
    const { context } = this;
    const offset = q.pendingCommit;
    if (offset === null) return;
    if (!context.isAssigned(q.partition)) {
      q.pendingCommit = null;
      return;
    }
    try {
      await context.commit([{ topic: context.topic, partition: q.partition, offset: offset.toString() }]);
    } catch (err) {
      context.stats.commitFailures++;
      this.failures.failed(errorMessage(err), { partitions: [q.partition] });
      this.retryLater(q);
      return;
    }
    this.failures.ok();
    context.stats.commits++;
    context.stats.committed[q.partition] = offset.toString();
    if (q.pendingCommit === offset) q.pendingCommit = null;
  }

  cancelRetry(q: PartitionOffsets): void {
    if (q.commitTimer !== null) clearTimeout(q.commitTimer);
    q.commitTimer = null;
  }

  /**
   * A partition whose commit failed and that gets no next batch (ingest stopped) would keep its
   * lag: try again after a while, as a flush of its own, so commits stay one at a time per partition.
   */
  private retryLater(q: PartitionOffsets): void {
    const { context } = this;
    if (q.commitTimer !== null || !context.isRunning()) return;
    q.commitTimer = setTimeout(() => {
      q.commitTimer = null;
      if (q.pendingCommit === null || !context.isRunning()) return;
      context.runAsFlush(q.partition, () => this.commitPending(q));
    }, context.retryAfterMs);
    q.commitTimer.unref();
  }
}
