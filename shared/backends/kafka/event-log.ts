import { Partitioners, type Message, type Producer } from 'kafkajs';
import { encodeEvent, messageKey } from '../../events/wire.js';
import type { AppendOutcome, DedupeIndex, EventLog, EventRecord, IdAllocator } from '../types.js';
import { createKafkaClient, ensureTopic, type KafkaLogger } from './client.js';

export interface KafkaEventLogMetrics {
  /** Duration of one producer send, until acknowledged (or failed). */
  publishSeconds(seconds: number): void;
  /** Events in one producer send. */
  batchSize(events: number): void;
  /** Events accepted but not yet answered. */
  inFlight(n: number): void;
}

export interface KafkaEventLogOptions {
  brokers: string[];
  topic: string;
  clientId: string;
  ids: IdAllocator;
  dedupe: DedupeIndex;
  dedupeWindowMs: number;
  /** Micro-batch: send this long after the first queued message... */
  lingerMs: number;
  /** ...or as soon as this many are queued, whichever first. Also the most events in one send. */
  batchEvents: number;
  /** Events accepted but not yet acknowledged; past it appends answer unavailable at once. */
  maxInFlightEvents: number;
  /**
   * Per-send timeout; a send that takes longer counts as failed. Measured from when the append
   * started, so it also bounds the id/dedupe round trips and the wait in the queue: an append
   * never takes much longer than this.
   */
  sendTimeoutMs: number;
  logger: KafkaLogger;
  metrics?: KafkaEventLogMetrics;
  /** Producer sends in flight at once (kafkajs maxInFlightRequests per broker). Default 5. */
  maxInFlightSends?: number;
  /**
   * After a failed send (and no success since), appends answer unavailable at once for this long;
   * then one batch goes through as a probe, and appends keep failing fast while it is in flight.
   * Default 1000 ms.
   */
  failFastMs?: number;
  /** Topic creation when missing (openKafkaEventLog); -1 / absent = broker defaults. */
  topicPartitions?: number;
  topicReplicationFactor?: number;
}

export interface KafkaEventLogStats {
  /** Producer sends acknowledged / failed (including timeouts). */
  sends: number;
  failedSends: number;
  /** Events acknowledged by the broker (resends included: each copy is published). */
  events: number;
  /** Events answered with the id of an earlier copy. */
  duplicates: number;
  /** Events answered unavailable: backpressure, known-down broker, Redis failure, failed send, closed. */
  rejectedBackpressure: number;
  rejectedFailing: number;
  rejectedSeams: number;
  failedEvents: number;
  /** Events accepted and not answered yet. */
  inFlight: number;
  /** Messages waiting for a send. */
  queued: number;
}

const UNAVAILABLE: AppendOutcome = Object.freeze({ ok: false, reason: 'unavailable' });

class TimeoutError extends Error {}

/** Rejects with TimeoutError after `ms`; the timer never outlives the promise. */
function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  if (ms <= 0) return Promise.reject(new TimeoutError(`${what}: no time left`));
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} took longer than ${Math.round(ms)} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** One append call waiting for its messages. */
interface Call {
  /** Per event: acknowledged by the broker. */
  acked: boolean[];
  remaining: number;
  resolve: () => void;
}

interface Queued {
  message: Message;
  call: Call;
  index: number;
  /** performance.now() by which the event must be acknowledged. */
  deadline: number;
  /** performance.now() when queued (linger is counted from the oldest). */
  queuedAt: number;
}

/**
 * The distributed event log: every accepted event is published to one Kafka topic, keyed by
 * provider|Dominio, value = the wire format of shared/events/wire.ts. An event is answered with its
 * id only after the broker acknowledged it with acks=all.
 *
 * - Ids come from the shared IdAllocator; resends are found through the shared DedupeIndex and get
 *   the first copy's id. A resend is published again under that same id (the store downstream is
 *   idempotent by id), so it is answered only once the log certainly holds the id, even when the
 *   gateway that took the first copy died before publishing it.
 * - Micro-batching: messages of all concurrent requests are queued and sent together, when
 *   `batchEvents` are queued or `lingerMs` after the oldest, whichever first; up to
 *   `maxInFlightSends` sends are in flight.
 * - Ordering: a vehicle's events always go to one partition (murmur2 of the key, the Java client's
 *   partitioner). kafkajs retries are off (retries: 0), so a failed send is never re-sent behind
 *   a later one: it is answered unavailable and the provider resends. Produce requests to a broker
 *   go down one connection in send order and the broker handles one connection's requests in order,
 *   so what is acknowledged is in append order per partition. Anyway, an event a provider sends
 *   after another was answered is queued after that one was acknowledged: causal order holds
 *   whatever the pipelining. (The kafkajs idempotent producer is not used: it serialises sends
 *   behind a per-broker lock, retries without end, and cannot recover from a lost producer id.)
 * - Bounded: at most `maxInFlightEvents` events are accepted and unanswered; past it, and while
 *   the broker is known to be failing, appends answer unavailable at once (-5) instead of queuing.
 */
export class KafkaEventLog implements EventLog {
  private readonly queue: Queued[] = [];
  private inFlightEvents = 0;
  private sendsInFlight = 0;
  private activeCalls = 0;
  private lingerTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;
  private drained: (() => void) | undefined;
  private lastFailureAt = Number.NEGATIVE_INFINITY;
  private lastSuccessAt = Number.NEGATIVE_INFINITY;
  private readonly maxInFlightSends: number;
  private readonly failFastMs: number;
  private readonly counters = {
    sends: 0,
    failedSends: 0,
    events: 0,
    duplicates: 0,
    rejectedBackpressure: 0,
    rejectedFailing: 0,
    rejectedSeams: 0,
    failedEvents: 0,
  };

  constructor(
    private readonly producer: Producer,
    private readonly options: KafkaEventLogOptions,
  ) {
    const positive = (name: string, v: number, min: number): void => {
      if (!Number.isFinite(v) || v < min) throw new RangeError(`KafkaEventLog: ${name} must be >= ${min} (got ${v}).`);
    };
    positive('lingerMs', options.lingerMs, 0);
    positive('batchEvents', options.batchEvents, 1);
    positive('maxInFlightEvents', options.maxInFlightEvents, 1);
    positive('sendTimeoutMs', options.sendTimeoutMs, 1);
    this.maxInFlightSends = Math.max(1, options.maxInFlightSends ?? 5);
    this.failFastMs = Math.max(0, options.failFastMs ?? 1000);
  }

  get stats(): KafkaEventLogStats {
    return { ...this.counters, inFlight: this.inFlightEvents, queued: this.queue.length };
  }

  /** True while the last send failed and none succeeded since. */
  get failing(): boolean {
    return this.lastFailureAt > this.lastSuccessAt;
  }

  async append(events: EventRecord[]): Promise<AppendOutcome[]> {
    const n = events.length;
    if (n === 0) return [];
    if (this.closed) return events.map(() => UNAVAILABLE);
    const started = performance.now();
    if (this.inFlightEvents + n > this.options.maxInFlightEvents) {
      this.counters.rejectedBackpressure += n;
      return events.map(() => UNAVAILABLE);
    }
    // Broker known to be down: one probe batch at a time, at most every failFastMs.
    if (this.failing && (started - this.lastFailureAt < this.failFastMs || this.sendsInFlight > 0)) {
      this.counters.rejectedFailing += n;
      return events.map(() => UNAVAILABLE);
    }

    this.inFlightEvents += n;
    this.activeCalls++;
    this.options.metrics?.inFlight(this.inFlightEvents);
    try {
      return await this.publish(events, started);
    } finally {
      this.inFlightEvents -= n;
      this.activeCalls--;
      this.options.metrics?.inFlight(this.inFlightEvents);
      if (this.activeCalls === 0) this.drained?.();
    }
  }

  private async publish(events: EventRecord[], started: number): Promise<AppendOutcome[]> {
    const n = events.length;
    const deadline = started + this.options.sendTimeoutMs;

    let ids: bigint[];
    let earlier: (bigint | null)[];
    try {
      ids = await withTimeout(this.options.ids.allocate(n), deadline - performance.now(), 'id allocation');
      if (ids.length !== n) throw new Error(`id allocator returned ${ids.length} ids for ${n} events`);
      const entries = events.map((e, i) => ({ key: e.dedupeKey, id: ids[i] as bigint }));
      earlier = await withTimeout(this.options.dedupe.claim(entries, this.options.dedupeWindowMs), deadline - performance.now(), 'dedupe claim');
      if (earlier.length !== n) throw new Error(`dedupe index answered ${earlier.length} claims for ${n} events`);
    } catch (error) {
      // Nothing published. Claims that may have been made keep ids nobody was given: a resend
      // gets such an id and publishes it, so leaving them is safe.
      this.counters.rejectedSeams += n;
      this.options.logger.warn({ err: error, events: n }, 'event ids or dedupe unavailable; answering unavailable');
      return events.map(() => UNAVAILABLE);
    }

    const outIds = events.map((_, i) => earlier[i] ?? (ids[i] as bigint));
    const call: Call = { acked: new Array<boolean>(n).fill(false), remaining: n, resolve: () => {} };
    const done = new Promise<void>((resolve) => (call.resolve = resolve));
    const now = performance.now();
    events.forEach((event, index) => {
      const message: Message = { key: messageKey(event), value: encodeEvent(outIds[index] as bigint, event) };
      this.queue.push({ message, call, index, deadline, queuedAt: now });
    });
    this.schedule();
    await done;

    const outcomes: AppendOutcome[] = [];
    const release: string[] = [];
    for (let i = 0; i < n; i++) {
      const duplicate = earlier[i] !== null;
      if (call.acked[i]) {
        outcomes.push({ ok: true, id: outIds[i] as bigint, duplicate });
        if (duplicate) this.counters.duplicates++;
      } else {
        outcomes.push(UNAVAILABLE);
        // Only the claims this call made: an earlier copy's claim belongs to that copy.
        if (!duplicate) release.push((events[i] as EventRecord).dedupeKey);
      }
    }
    if (release.length > 0) {
      try {
        await withTimeout(this.options.dedupe.release(release), this.options.sendTimeoutMs, 'dedupe release');
      } catch (error) {
        // Harmless: a retry then gets the unpublished id and publishes it.
        this.options.logger.warn({ err: error, keys: release.length }, 'could not release dedupe keys of unstored events');
      }
    }
    return outcomes;
  }

  /** Sends what is due now, or arms the linger timer for the oldest queued message. */
  private schedule(): void {
    while (this.queue.length > 0 && this.sendsInFlight < this.maxInFlightSends) {
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
      this.send(this.queue.splice(0, this.options.batchEvents));
    }
    if (this.lingerTimer !== undefined && (this.queue.length === 0 || this.sendsInFlight >= this.maxInFlightSends)) {
      // Nothing left to linger for, or a finishing send will call schedule() again.
      clearTimeout(this.lingerTimer);
      this.lingerTimer = undefined;
    }
  }

  private send(batch: Queued[]): void {
    const started = performance.now();
    let deadline = Number.POSITIVE_INFINITY;
    for (const q of batch) deadline = Math.min(deadline, q.deadline);
    this.sendsInFlight++;
    if (deadline <= started) {
      // Waited out its whole budget in the queue (the broker is too slow): fail without sending.
      queueMicrotask(() => this.settle(batch, started, new TimeoutError('kafka send: no time left after queueing')));
      return;
    }
    this.options.metrics?.batchSize(batch.length);

    const sending = this.producer.send({
      topic: this.options.topic,
      acks: -1,
      // The broker's wait for in-sync replicas; beyond our own deadline it is pointless.
      timeout: this.options.sendTimeoutMs,
      messages: batch.map((q) => q.message),
    });
    withTimeout(sending, deadline - started, 'kafka send').then(
      () => this.settle(batch, started, null),
      (error: unknown) => this.settle(batch, started, error),
    );
    // A send we stopped waiting for may still settle later; never leave its rejection unhandled.
    sending.catch(() => {});
  }

  private settle(batch: Queued[], started: number, error: unknown): void {
    this.sendsInFlight--;
    const now = performance.now();
    this.options.metrics?.publishSeconds((now - started) / 1000);
    const ok = error === null;
    if (ok) {
      if (this.failing) this.options.logger.info({ events: batch.length }, 'kafka send succeeded again; accepting events');
      this.lastSuccessAt = now;
      this.counters.sends++;
      this.counters.events += batch.length;
    } else {
      const wasFailing = this.failing;
      this.lastFailureAt = now;
      this.counters.failedSends++;
      this.counters.failedEvents += batch.length;
      const log = { err: error, events: batch.length, ms: Math.round(now - started) };
      if (wasFailing) this.options.logger.warn(log, 'kafka send failed again; answering unavailable');
      else this.options.logger.error(log, 'kafka send failed; answering unavailable until a send succeeds');
    }
    for (const q of batch) {
      q.call.acked[q.index] = ok;
      if (--q.call.remaining === 0) q.call.resolve();
    }
    this.schedule();
  }

  /**
   * Stops accepting (later appends answer unavailable), sends what is queued without lingering,
   * waits for every accepted append to be answered (bounded by sendTimeoutMs), then disconnects.
   */
  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    this.closed = true;
    this.closing = (async () => {
      if (this.activeCalls > 0) {
        const drained = new Promise<void>((resolve) => (this.drained = resolve));
        this.schedule();
        await drained;
      }
      if (this.lingerTimer !== undefined) clearTimeout(this.lingerTimer);
      this.lingerTimer = undefined;
      await this.producer.disconnect();
    })();
    return this.closing;
  }
}

/** Connects a producer (ensuring the topic exists first) and returns the event log. */
export async function openKafkaEventLog(options: KafkaEventLogOptions): Promise<KafkaEventLog> {
  const maxInFlightSends = Math.max(1, options.maxInFlightSends ?? 5);
  const kafka = createKafkaClient({
    brokers: options.brokers,
    clientId: options.clientId,
    logger: options.logger,
    requestTimeoutMs: options.sendTimeoutMs,
  });

  const admin = kafka.admin();
  await admin.connect();
  try {
    const created = await ensureTopic(admin, {
      topic: options.topic,
      partitions: options.topicPartitions,
      replicationFactor: options.topicReplicationFactor,
    });
    if (created) options.logger.info({ topic: options.topic }, 'created kafka topic');
  } finally {
    await admin.disconnect();
  }

  const producer = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
    idempotent: false,
    maxInFlightRequests: maxInFlightSends,
    retry: { retries: 0 },
  });
  await producer.connect();
  const log = new KafkaEventLog(producer, { ...options, maxInFlightSends });
  options.logger.info({ brokers: options.brokers, topic: options.topic }, 'kafka event log connected');
  return log;
}
