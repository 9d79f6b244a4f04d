import { TimeoutError, withTimeout } from '../../util/async.js';
import { FailureLog } from '../../runtime/failure-log.js';
import type { KafkaLogger } from './client.js';
import { isKafkaTimeout, isLeadershipError, isMessageError } from './errors.js';
import type { KeyPartitioner } from './partitioner.js';
import type { PartitionedMessage, RecordSender } from './producer.js';

/** One append call waiting for its messages. */
export interface Call {
  /** Per event: acknowledged by the broker. */
  acked: boolean[];
  remaining: number;
  resolve: () => void;
}

interface Queued {
  /** key, value and partition (set here, so the one-send-per-partition rule is exact). */
  message: PartitionedMessage;
  bytes: number;
  call: Call;
  index: number;
  /** performance.now() by which the event must be acknowledged. */
  deadline: number;
  /** performance.now() when queued (linger counts from the oldest). */
  queuedAt: number;
}

interface SendQueueOptions {
  topic: string;
  lingerMs: number;
  batchEvents: number;
  sendTimeoutMs: number;
  maxInFlightSends: number;
  maxSendBytes: number;
  failFastMs: number;
  logger: KafkaLogger;
  metrics?: { publishSeconds(seconds: number): void; batchSize(events: number): void };
}

const LEADERSHIP_ATTEMPTS = 4;
const LEADERSHIP_RETRY_MS = 100;

/**
 * The producer side of the event log: queued messages leave in micro-batches, at most one send per
 * partition in flight (a partition's messages leave in queue order), up to maxInFlightSends sends
 * on disjoint partitions together. It remembers whether the broker is failing, so appends can
 * answer unavailable at once instead of queuing behind a dead broker.
 */
export class SendQueue {
  private queue: Queued[] = [];
  /** Partitions with a send in flight. */
  private readonly busy = new Set<number>();
  private sendsInFlight = 0;
  private lingerTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private lastFailureAt = Number.NEGATIVE_INFINITY;
  private lastSuccessAt = Number.NEGATIVE_INFINITY;
  readonly counters = { sends: 0, failedSends: 0, events: 0, failedEvents: 0, peakSendsInFlight: 0, leadershipRetries: 0 };
  /** Failed sends: one line when they start, a count every few seconds, one when a send succeeds. */
  private readonly failures: FailureLog;

  constructor(
    private readonly producer: RecordSender,
    private readonly partitioner: KeyPartitioner,
    private readonly options: SendQueueOptions,
  ) {
    this.failures = new FailureLog(options.logger, 'kafka sends fail; inserts answer -5 until one succeeds');
  }

  get queued(): number {
    return this.queue.length;
  }

  /** True while the last send failed and none succeeded since. */
  get failing(): boolean {
    return this.lastFailureAt > this.lastSuccessAt;
  }

  /**
   * The broker answered a request other than a send (readiness' probe): no longer failing, unless
   * a send is in flight, whose outcome will say. The next append goes through normally.
   */
  brokerAnswered(): void {
    if (!this.failing || this.sendsInFlight > 0) return;
    this.failures.ok({ how: 'the broker answers the readiness probe' });
    this.lastSuccessAt = performance.now();
  }

  /** Broker known to be failing: one probe batch at a time, at most every failFastMs. */
  failFast(now: number): boolean {
    return this.failing && (now - this.lastFailureAt < this.options.failFastMs || this.sendsInFlight > 0);
  }

  enqueue(item: Queued): void {
    this.queue.push(item);
  }

  /** No more lingering: what is queued goes out as soon as partitions allow. */
  close(): void {
    this.closed = true;
    this.schedule();
  }

  stopTimers(): void {
    if (this.lingerTimer !== undefined) clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
  }

  /** Starts the sends that are due, or arms the linger timer for the oldest queued message. */
  schedule(): void {
    while (this.queue.length > 0 && this.sendsInFlight < this.options.maxInFlightSends && this.busy.size < this.partitioner.count) {
      const head = this.queue[0] as Queued;
      const lingerLeft = head.queuedAt + this.options.lingerMs - performance.now();
      if (this.queue.length < this.options.batchEvents && lingerLeft > 0 && !this.closed) {
        if (this.lingerTimer === undefined) {
          this.lingerTimer = setTimeout(() => {
            this.lingerTimer = undefined;
            this.schedule();
          }, Math.ceil(lingerLeft));
        }
        return;
      }
      const batch = this.takeBatch();
      if (batch.length === 0) break; // everything queued waits for a busy partition
      this.send(batch);
    }
    // Nothing to linger for now; a send that settles calls schedule() again.
    this.stopTimers();
  }

  /**
   * Takes from the queue, oldest first, the messages whose partition has no send in flight, up to
   * batchEvents and maxSendBytes; the rest keep their order. Expired messages are failed here.
   */
  private takeBatch(): Queued[] {
    const now = performance.now();
    const { batchEvents, maxSendBytes } = this.options;
    const batch: Queued[] = [];
    const expired: Queued[] = [];
    let bytes = 0;
    let i = 0;
    if (this.busy.size === 0) {
      // Common case: take a prefix.
      for (; i < this.queue.length && batch.length < batchEvents; i++) {
        const q = this.queue[i] as Queued;
        if (q.deadline <= now) {
          expired.push(q);
          continue;
        }
        if (batch.length > 0 && bytes + q.bytes > maxSendBytes) break;
        batch.push(q);
        bytes += q.bytes;
      }
      this.queue.splice(0, i);
    } else {
      const kept: Queued[] = [];
      let full = false;
      for (const q of this.queue) {
        if (full || this.busy.has(q.message.partition)) kept.push(q);
        else if (q.deadline <= now) expired.push(q);
        else if (batch.length > 0 && bytes + q.bytes > maxSendBytes) {
          full = true;
          kept.push(q);
        } else {
          batch.push(q);
          bytes += q.bytes;
          full = batch.length >= batchEvents;
        }
      }
      this.queue = kept;
    }
    if (expired.length > 0) {
      // Waited out their whole budget before a send could take them: the broker is too slow.
      this.noteFailure(new TimeoutError('no send within sendTimeoutMs'), expired.length, 0);
      this.resolveAll(expired, false);
    }
    return batch;
  }

  private send(batch: Queued[]): void {
    const started = performance.now();
    let deadline = Number.POSITIVE_INFINITY;
    const partitions = new Set<number>();
    for (const q of batch) {
      deadline = Math.min(deadline, q.deadline);
      partitions.add(q.message.partition);
    }
    for (const p of partitions) this.busy.add(p);
    this.sendsInFlight++;
    this.counters.peakSendsInFlight = Math.max(this.counters.peakSendsInFlight, this.sendsInFlight);
    this.options.metrics?.batchSize(batch.length);

    const messages = batch.map((q) => q.message);
    this.sendWithRetries(messages, deadline).then(
      () => this.settle(batch, partitions, started, null),
      (error: unknown) => this.settle(batch, partitions, started, error),
    );
  }

  /**
   * One send; again after a short pause when the broker refused it because partition leadership
   * moved (the producer then looks the leaders up again), while the deadline
   * allows. Such a refusal means the partition did not append it, and the batch's partitions stay
   * busy meanwhile, so nothing overtakes it. (Other partitions of the same request may have been
   * appended: they are published twice under the same ids, which the store absorbs.) Any other
   * error fails the send at once, so a broker that is down is answered quickly.
   */
  private async sendWithRetries(messages: PartitionedMessage[], deadline: number): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const since = performance.now();
      const sending = this.producer.send({ topic: this.options.topic, messages });
      // A send we stopped waiting for may still settle later; never leave its rejection unhandled.
      sending.catch(() => {});
      try {
        await withTimeout(sending, deadline - performance.now(), 'kafka send');
        return;
      } catch (error) {
        // No answer in time: whatever connection it went to is not to be trusted with the next one.
        if (error instanceof TimeoutError || isKafkaTimeout(error)) this.producer.timedOut?.(since);
        const pause = LEADERSHIP_RETRY_MS * 2 ** attempt;
        if (!isLeadershipError(error) || attempt + 1 >= LEADERSHIP_ATTEMPTS || performance.now() + pause >= deadline) throw error;
        this.counters.leadershipRetries++;
        this.options.logger.warn({ err: error, attempt: attempt + 1, events: messages.length }, 'kafka partition leadership moved; sending again');
        await new Promise((resolve) => setTimeout(resolve, pause));
        // A pause that ended late (a stalled event loop) leaves no time: sending now could append
        // events whose callers are answered -5, and its sure timeout would drop sound connections.
        if (performance.now() >= deadline) throw error;
      }
    }
  }

  private settle(batch: Queued[], partitions: Set<number>, started: number, error: unknown): void {
    this.sendsInFlight--;
    for (const p of partitions) this.busy.delete(p);
    const now = performance.now();
    this.options.metrics?.publishSeconds((now - started) / 1000);
    if (error === null) {
      this.failures.ok({ how: 'a send succeeded' });
      this.lastSuccessAt = now;
      this.counters.sends++;
      this.counters.events += batch.length;
    } else {
      this.counters.failedSends++;
      this.noteFailure(error, batch.length, now - started, !isMessageError(error));
    }
    this.resolveAll(batch, error === null);
    this.schedule();
  }

  /** `brokerProblem`: the broker is failing (fail fast), not just this send's content. */
  private noteFailure(error: unknown, events: number, ms: number, brokerProblem = true): void {
    if (brokerProblem) this.lastFailureAt = performance.now();
    this.counters.failedEvents += events;
    if (!brokerProblem) this.options.logger.error({ err: error, events, ms: Math.round(ms) }, 'kafka refused a send; its events are answered unavailable');
    else this.failures.failed(error, { events, ms: Math.round(ms) });
  }

  private resolveAll(messages: Queued[], acked: boolean): void {
    for (const q of messages) {
      q.call.acked[q.index] = acked;
      if (--q.call.remaining === 0) q.call.resolve();
    }
  }
}
