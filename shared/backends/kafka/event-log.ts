import { Partitioners, type ICustomPartitioner, type Message, type PartitionMetadata, type Producer } from 'kafkajs';
import { encodeEvent, messageKey } from '../../events/wire.js';
import type { AppendOutcome, DedupeIndex, EventLog, EventRecord, IdAllocator } from '../types.js';
import { createKafkaClient, ensureTopic, waitForTopic, type KafkaLogger } from './client.js';

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
  /** Micro-batch: send this long after the oldest queued message... */
  lingerMs: number;
  /** ...or as soon as this many are queued, whichever first. Also the most events in one send. */
  batchEvents: number;
  /** Events accepted but not yet acknowledged; past it appends answer unavailable at once. */
  maxInFlightEvents: number;
  /**
   * Per-send timeout; a send that takes longer counts as failed. Counted from the start of the
   * append, so it also bounds the id/dedupe round trips and the wait in the queue: no append
   * takes much longer than this.
   */
  sendTimeoutMs: number;
  logger: KafkaLogger;
  metrics?: KafkaEventLogMetrics;
  /**
   * Producer sends in flight at once, on disjoint partitions: at most one send per partition is in
   * flight, which is what keeps each vehicle's events in order. Default 5.
   */
  maxInFlightSends?: number;
  /** Key + value bytes in one send at most (the broker's message.max.bytes is 1 MB). Default 900 kB. */
  maxSendBytes?: number;
  /**
   * After a failed send (and no success since), appends answer unavailable at once for this long;
   * then one batch goes through as a probe, and appends keep failing fast while it is in flight.
   * Default 1000 ms.
   */
  failFastMs?: number;
  /** When openKafkaEventLog creates the missing topic; absent = the broker's defaults. */
  topicPartitions?: number;
  topicReplicationFactor?: number;
}

export interface KafkaEventLogStats {
  /** Producer sends acknowledged / failed (timeouts included). */
  sends: number;
  failedSends: number;
  /** Events acknowledged by the broker (resends included: every copy is published). */
  events: number;
  /** Events answered with the id of an earlier copy. */
  duplicates: number;
  /** Events answered unavailable, by cause. */
  rejectedBackpressure: number;
  rejectedFailing: number;
  rejectedSeams: number;
  failedEvents: number;
  /** Events accepted and not answered yet. */
  inFlight: number;
  /** Messages waiting for a send. */
  queued: number;
  /** The most producer sends ever in flight at once. */
  peakSendsInFlight: number;
  /** Sends repeated because partition leadership moved (NOT_LEADER_FOR_PARTITION and the like). */
  leadershipRetries: number;
  partitions: number;
}

const UNAVAILABLE: AppendOutcome = Object.freeze({ ok: false, reason: 'unavailable' });
const DEFAULT_MAX_SEND_BYTES = 900_000;
/** Keys whose partition is remembered (about 100 bytes each). */
const PARTITION_CACHE_LIMIT = 100_000;

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

/** Broker errors about a send's content rather than the broker's health. */
const MESSAGE_ERRORS = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'CORRUPT_MESSAGE', 'INVALID_TIMESTAMP']);

/** Refusals that mean "not appended, ask the new leader": safe to send again. */
const LEADERSHIP_ERRORS = new Set(['NOT_LEADER_FOR_PARTITION', 'LEADER_NOT_AVAILABLE', 'UNKNOWN_TOPIC_OR_PARTITION']);
const LEADERSHIP_ATTEMPTS = 4;
const LEADERSHIP_RETRY_MS = 100;

/**
 * The broker's error name: kafkajs' KafkaJSProtocolError carries it in `type`; with retries off a
 * send fails with KafkaJSNumberOfRetriesExceeded whose `cause` is that error.
 */
function brokerErrorType(error: unknown): string | null {
  for (let e = error, depth = 0; typeof e === 'object' && e !== null && depth < 3; depth++) {
    if ('type' in e && typeof e.type === 'string') return e.type;
    e = 'cause' in e ? e.cause : null;
  }
  return null;
}

function isMessageError(error: unknown): boolean {
  const type = brokerErrorType(error);
  return type !== null && MESSAGE_ERRORS.has(type);
}

function isLeadershipError(error: unknown): boolean {
  const type = brokerErrorType(error);
  return type !== null && LEADERSHIP_ERRORS.has(type);
}

/**
 * The partition kafkajs' default (Java-compatible murmur2) partitioner picks for a key, computed
 * here so that batching knows it before sending. Same function, so the mapping is exactly what
 * a producer without explicit partitions (or the Java client) would use.
 */
export class KeyPartitioner {
  private readonly partitioner = Partitioners.DefaultPartitioner();
  private metadata: PartitionMetadata[] = [];

  constructor(
    private readonly topic: string,
    count: number,
  ) {
    this.count = count;
  }

  get count(): number {
    return this.metadata.length;
  }

  /** Partitions only ever grow; keys then map anew, as with any Kafka producer. */
  set count(n: number) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`partition count ${n}`);
    if (n === this.metadata.length) return;
    this.metadata = Array.from({ length: n }, (_, partitionId) => ({ partitionErrorCode: 0, partitionId, leader: 0, replicas: [0], isr: [0] }));
    this.known.clear();
  }

  /**
   * Keys are provider|Dominio: a fleet's few thousand vehicles, over and over. murmur2 in
   * JavaScript and the partitioner's argument objects were 3% of a gateway under load.
   */
  private readonly known = new Map<string, number>();

  partition(key: string): number {
    let partition = this.known.get(key);
    if (partition === undefined) {
      partition = this.partitioner({ topic: this.topic, partitionMetadata: this.metadata, message: { key, value: null } });
      if (this.known.size >= PARTITION_CACHE_LIMIT) this.known.clear();
      this.known.set(key, partition);
    }
    return partition;
  }
}

/** One append call waiting for its messages. */
interface Call {
  /** Per event: acknowledged by the broker. */
  acked: boolean[];
  remaining: number;
  resolve: () => void;
}

interface Queued {
  /** key, value and partition (set here, so the one-send-per-partition rule is exact). */
  message: Message & { partition: number };
  bytes: number;
  call: Call;
  index: number;
  /** performance.now() by which the event must be acknowledged. */
  deadline: number;
  /** performance.now() when queued (linger counts from the oldest). */
  queuedAt: number;
}

/**
 * The distributed event log: every accepted event is published to one Kafka topic, keyed by
 * provider|Dominio, value = the wire format of shared/events/wire.ts. An event is answered with
 * its id only after the broker acknowledged it with acks=all.
 *
 * - Ids come from the shared IdAllocator; resends are found through the shared DedupeIndex and get
 *   the first copy's id. A resend is published again under that same id (the store downstream is
 *   idempotent by id), so it is answered only once the log certainly holds the id, even when the
 *   gateway that took the first copy died before publishing it.
 * - Micro-batching: messages of all concurrent requests are queued and sent together, when
 *   `batchEvents` are queued or `lingerMs` after the oldest, whichever first.
 * - Ordering: a vehicle's events always go to one partition (murmur2 of the key). At most one send
 *   per partition is in flight, and a partition's messages leave the queue in append order; up to
 *   `maxInFlightSends` sends on disjoint partitions may be in flight together. kafkajs does not
 *   keep the order of concurrent sends by itself (they race through metadata and connection
 *   awaits before reaching the socket: the ordering test caught one overtaking another). Its own
 *   retries are off; this layer sends a batch again only when the broker refused it for partition
 *   leadership (not appended), with its partitions still busy. Any other failure is answered
 *   unavailable at once and the provider resends, so nothing is re-sent behind a later send.
 *   (kafkajs' idempotent producer would not help: it serialises sends behind a per-broker lock and
 *   assigns sequence numbers in whatever order the racing sends reach that lock.)
 * - Bounded: at most `maxInFlightEvents` events are accepted and unanswered; past it, and while
 *   the broker is known to be failing, appends answer unavailable at once (-5) instead of queuing.
 */
export class KafkaEventLog implements EventLog {
  private queue: Queued[] = [];
  /** Partitions with a send in flight. */
  private readonly busy = new Set<number>();
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
  private readonly maxSendBytes: number;
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
    peakSendsInFlight: 0,
    leadershipRetries: 0,
  };

  constructor(
    private readonly producer: Producer,
    private readonly partitioner: KeyPartitioner,
    private readonly options: KafkaEventLogOptions,
  ) {
    const atLeast = (name: string, v: number, min: number): void => {
      if (!Number.isFinite(v) || v < min) throw new RangeError(`KafkaEventLog: ${name} must be >= ${min} (got ${v}).`);
    };
    atLeast('lingerMs', options.lingerMs, 0);
    atLeast('batchEvents', options.batchEvents, 1);
    atLeast('maxInFlightEvents', options.maxInFlightEvents, 1);
    atLeast('sendTimeoutMs', options.sendTimeoutMs, 1);
    this.maxInFlightSends = Math.max(1, options.maxInFlightSends ?? 5);
    this.maxSendBytes = Math.max(1, options.maxSendBytes ?? DEFAULT_MAX_SEND_BYTES);
    this.failFastMs = Math.max(0, options.failFastMs ?? 1000);
  }

  get stats(): KafkaEventLogStats {
    return { ...this.counters, inFlight: this.inFlightEvents, queued: this.queue.length, partitions: this.partitioner.count };
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
    // Broker known to be failing: one probe batch at a time, at most every failFastMs.
    if (this.failing && (started - this.lastFailureAt < this.failFastMs || this.sendsInFlight > 0)) {
      this.counters.rejectedFailing += n;
      return events.map(() => UNAVAILABLE);
    }

    this.inFlightEvents += n;
    this.activeCalls++;
    this.options.metrics?.inFlight(this.inFlightEvents);
    try {
      return await this.publish(events, started + this.options.sendTimeoutMs);
    } finally {
      this.inFlightEvents -= n;
      this.activeCalls--;
      this.options.metrics?.inFlight(this.inFlightEvents);
      if (this.activeCalls === 0) this.drained?.();
    }
  }

  private async publish(events: EventRecord[], deadline: number): Promise<AppendOutcome[]> {
    const n = events.length;
    let ids: bigint[];
    let earlier: (bigint | null)[];
    try {
      ids = await withTimeout(this.options.ids.allocate(n), deadline - performance.now(), 'id allocation');
      if (ids.length !== n) throw new Error(`id allocator returned ${ids.length} ids for ${n} events`);
      const entries = events.map((e, i) => ({ key: e.dedupeKey, id: ids[i] as bigint }));
      earlier = await withTimeout(this.options.dedupe.claim(entries, this.options.dedupeWindowMs), deadline - performance.now(), 'dedupe claim');
      if (earlier.length !== n) throw new Error(`dedupe index answered ${earlier.length} claims for ${n} events`);
    } catch (error) {
      // Nothing published. A claim that may have been made holds an id nobody was given: a
      // resend gets that id and publishes it, so leaving it is safe.
      this.counters.rejectedSeams += n;
      this.options.logger.warn({ err: error, events: n }, 'event ids or dedupe unavailable; answering unavailable');
      return events.map(() => UNAVAILABLE);
    }

    const outIds = events.map((_, i) => earlier[i] ?? (ids[i] as bigint));
    const call: Call = { acked: new Array<boolean>(n).fill(false), remaining: 0, resolve: () => {} };
    const done = new Promise<void>((resolve) => (call.resolve = resolve));
    const queuedAt = performance.now();
    events.forEach((event, index) => {
      const key = messageKey(event);
      const value = encodeEvent(outIds[index] as bigint, event);
      const bytes = Buffer.byteLength(key) + value.length;
      if (bytes > this.maxSendBytes) {
        // The broker would refuse it, failing every other event of its send: refuse it alone.
        // (The operation layer's field limits keep real events far below this.)
        this.counters.failedEvents++;
        this.options.logger.error({ systemUser: event.systemUser, dominio: event.dominio, bytes }, 'event too large for one kafka send; answering unavailable');
        return;
      }
      const message = { key, value, partition: this.partitioner.partition(key) };
      this.queue.push({ message, bytes, call, index, deadline, queuedAt });
      call.remaining++;
    });
    if (call.remaining > 0) {
      this.schedule();
      await done;
    }

    // Claims of events answered -5 are kept, not released: after a timeout the broker may still
    // have written them, and a released key would give the client's retry a second id (stored
    // twice). Kept, the retry gets the same id and publishes it again; the store is idempotent by id.
    const outcomes: AppendOutcome[] = [];
    for (let i = 0; i < n; i++) {
      const duplicate = earlier[i] !== null;
      if (call.acked[i]) {
        outcomes.push({ ok: true, id: outIds[i] as bigint, duplicate });
        if (duplicate) this.counters.duplicates++;
      } else outcomes.push(UNAVAILABLE);
    }
    return outcomes;
  }

  /** Starts the sends that are due, or arms the linger timer for the oldest queued message. */
  private schedule(): void {
    while (this.queue.length > 0 && this.sendsInFlight < this.maxInFlightSends && this.busy.size < this.partitioner.count) {
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
    if (this.lingerTimer !== undefined) {
      clearTimeout(this.lingerTimer);
      this.lingerTimer = undefined;
    }
  }

  /**
   * Takes from the queue, oldest first, the messages whose partition has no send in flight, up to
   * batchEvents and maxSendBytes; the rest keep their order. Expired messages are failed here.
   */
  private takeBatch(): Queued[] {
    const now = performance.now();
    const batch: Queued[] = [];
    const expired: Queued[] = [];
    let bytes = 0;
    let i = 0;
    if (this.busy.size === 0) {
      // Common case: take a prefix.
      for (; i < this.queue.length && batch.length < this.options.batchEvents; i++) {
        const q = this.queue[i] as Queued;
        if (q.deadline <= now) {
          expired.push(q);
          continue;
        }
        if (batch.length > 0 && bytes + q.bytes > this.maxSendBytes) break;
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
        else if (batch.length > 0 && bytes + q.bytes > this.maxSendBytes) {
          full = true;
          kept.push(q);
        } else {
          batch.push(q);
          bytes += q.bytes;
          full = batch.length >= this.options.batchEvents;
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
   * moved (the metadata kafkajs refreshes then points at the new leader), while the deadline
   * allows. Such a refusal means the partition did not append it, and the batch's partitions stay
   * busy meanwhile, so nothing overtakes it. (Other partitions of the same request may have been
   * appended: they are published twice under the same ids, which the store absorbs.) Any other
   * error fails the send at once, so a broker that is down is answered quickly.
   */
  private async sendWithRetries(messages: Message[], deadline: number): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const sending = this.producer.send({
        topic: this.options.topic,
        acks: -1,
        // The broker's wait for in-sync replicas; beyond our own deadline it is pointless.
        timeout: this.options.sendTimeoutMs,
        messages,
      });
      // A send we stopped waiting for may still settle later; never leave its rejection unhandled.
      sending.catch(() => {});
      try {
        await withTimeout(sending, deadline - performance.now(), 'kafka send');
        return;
      } catch (error) {
        const pause = LEADERSHIP_RETRY_MS * 2 ** attempt;
        if (!isLeadershipError(error) || attempt + 1 >= LEADERSHIP_ATTEMPTS || performance.now() + pause >= deadline) throw error;
        this.counters.leadershipRetries++;
        this.options.logger.warn({ err: error, attempt: attempt + 1, events: messages.length }, 'kafka partition leadership moved; sending again');
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  private settle(batch: Queued[], partitions: Set<number>, started: number, error: unknown): void {
    this.sendsInFlight--;
    for (const p of partitions) this.busy.delete(p);
    const now = performance.now();
    this.options.metrics?.publishSeconds((now - started) / 1000);
    if (error === null) {
      if (this.failing) this.options.logger.info({ events: batch.length }, 'kafka send succeeded again; accepting events');
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
    const wasFailing = this.failing;
    if (brokerProblem) this.lastFailureAt = performance.now();
    this.counters.failedEvents += events;
    const log = { err: error, events, ms: Math.round(ms) };
    if (!brokerProblem) this.options.logger.error(log, 'kafka refused a send; its events are answered unavailable');
    else if (wasFailing) this.options.logger.warn(log, 'kafka send failed again; answering unavailable');
    else this.options.logger.error(log, 'kafka send failed; answering unavailable until a send succeeds');
  }

  private resolveAll(messages: Queued[], acked: boolean): void {
    for (const q of messages) {
      q.call.acked[q.index] = acked;
      if (--q.call.remaining === 0) q.call.resolve();
    }
  }

  /**
   * Stops accepting (later appends answer unavailable), sends what is queued without lingering,
   * waits until every accepted append is answered (bounded by sendTimeoutMs), then disconnects.
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

/** Connects a producer (creating the topic when missing) and returns the event log. */
export async function openKafkaEventLog(options: KafkaEventLogOptions): Promise<KafkaEventLog> {
  const maxInFlightSends = Math.max(1, options.maxInFlightSends ?? 5);
  const kafka = createKafkaClient({
    brokers: options.brokers,
    clientId: options.clientId,
    logger: options.logger,
    requestTimeoutMs: options.sendTimeoutMs,
  });

  let partitions: number;
  const admin = kafka.admin();
  await admin.connect();
  try {
    const created = await ensureTopic(admin, {
      topic: options.topic,
      partitions: options.topicPartitions,
      replicationFactor: options.topicReplicationFactor,
    });
    if (created) options.logger.info({ topic: options.topic }, 'created kafka topic');
    partitions = await waitForTopic(admin, options.topic);
  } finally {
    await admin.disconnect();
  }

  const keys = new KeyPartitioner(options.topic, partitions);
  // Messages carry their partition; this only follows the topic's partition count from the
  // producer's metadata (refreshed every 5 min), so partitions added later get used.
  const createPartitioner: ICustomPartitioner = () => {
    const inner = Partitioners.DefaultPartitioner();
    return (args) => {
      if (args.partitionMetadata.length > keys.count) keys.count = args.partitionMetadata.length;
      return inner(args);
    };
  };
  const producer = kafka.producer({
    createPartitioner,
    allowAutoTopicCreation: false,
    idempotent: false,
    maxInFlightRequests: maxInFlightSends,
    retry: { retries: 0 },
  });
  await producer.connect();
  const log = new KafkaEventLog(producer, keys, { ...options, maxInFlightSends });
  options.logger.info({ brokers: options.brokers, topic: options.topic, partitions }, 'kafka event log connected');
  return log;
}
