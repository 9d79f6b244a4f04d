import { withTimeout } from '../../util/async.js';
import { FailureLog } from '../../runtime/failure-log.js';
import { encodeEvent, messageKey, PROTOBUF_WIRE_VERSION, WIRE_HEADERS, type WireVersion } from '../../events/wire.js';
import type { AppendOutcome, EventLog, EventRecord } from '../types.js';
import { IdBlocksConflictError, IdBlocksUnavailableError, type DedupeIndex, type IdAllocator } from '../scale-out-types.js';
import { clockMs, type Deadline } from '../../util/deadline.js';
import { ensureTopic, KafkaAdmin, type KafkaLogger } from './client.js';
import { KeyPartitioner } from './partitioner.js';
import type { KafkaSecurity } from './security.js';
import { EventProducer, type RecordSender } from './producer.js';
import { SendQueue, type Call } from './send-queue.js';

export { KeyPartitioner } from './partitioner.js';

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
  /** TLS and SASL of every connection (security.ts, from KAFKA_SECURITY_PROTOCOL...); default plaintext. */
  security?: KafkaSecurity;
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
  /** Version of the messages written (wire.ts; EVENT_WIRE_VERSION). Default 3, protobuf. */
  wireVersion?: WireVersion;
  /**
   * Per-send timeout; a send that takes longer counts as failed. Counted from the start of the
   * append (or given as the append's deadline, its request's), so it also bounds the id/dedupe
   * round trips and the wait in the queue: no append takes much longer than this.
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
  /**
   * Asks the broker something cheap (openKafkaEventLog: the topic's metadata). Readiness uses it
   * while sends are failing: a log that gets no appends never sends the probe batch that would
   * show the broker is back, so it would stay "failing" forever (a front-end thread may take all
   * the traffic while the main thread's log sits idle).
   */
  probe?: () => Promise<unknown>;
  /** How often openKafkaEventLog's log checks the topic's partition count. Default 60 s. */
  partitionCheckMs?: number;
  /** Deadline of the admin and metadata requests of openKafkaEventLog's clients. Default sendTimeoutMs. */
  requestTimeoutMs?: number;
  /** TCP connect deadline and keep-alive of the clients' connections (client.ts defaults). */
  connectTimeoutMs?: number;
  keepAliveMs?: number;
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
  /** Events answered unavailable because no id block could be issued (topic being checked, or a conflict). */
  rejectedIdState: number;
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

const headerSizes = new WeakMap<object, number>();

/** Bytes of a headers object's keys and values (counted toward maxSendBytes), computed once per object. */
function headersSize(headers: Readonly<Record<string, string>>): number {
  let size = headerSizes.get(headers);
  if (size === undefined) {
    size = Object.entries(headers).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
    headerSizes.set(headers, size);
  }
  return size;
}

const UNAVAILABLE: AppendOutcome = Object.freeze({ ok: false, reason: 'unavailable' });
const DEFAULT_MAX_SEND_BYTES = 900_000;

/**
 * The scale-out event log: every accepted event is published to one Kafka topic, keyed by
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
 *   `maxInFlightSends` sends on disjoint partitions may be in flight together. A Kafka client
 *   does not keep the order of concurrent sends by itself (with kafkajs they raced through
 *   metadata and connection awaits before reaching the socket: the ordering test caught one
 *   overtaking another). The producer's own retries are off; this layer sends a batch again only
 *   when the broker refused it for partition leadership (not appended), with its partitions still
 *   busy. Any other failure is answered unavailable at once and the provider resends, so nothing
 *   is re-sent behind a later send.
 * - The producer is @platformatic/kafka (producer.ts): less CPU per message than kafkajs, which
 *   was a large share of a gateway's CPU per event (bench/kafka-clients.ts; bench/LOG.md,
 *   "2026-11-23: which Kafka producer").
 * - Bounded: at most `maxInFlightEvents` events are accepted and unanswered; past it, and while
 *   the broker is known to be failing, appends answer unavailable at once (-5) instead of queuing.
 */
export class KafkaEventLog implements EventLog {
  private readonly sender: SendQueue;
  private inFlightEvents = 0;
  private activeCalls = 0;
  private closed = false;
  private closing: Promise<void> | undefined;
  private drained: (() => void) | undefined;
  private readonly maxSendBytes: number;
  /** Id or dedupe claims that fail (Redis down or stalled): logged once, then a count now and then. */
  private readonly claimFailures: FailureLog;
  private readonly counters = {
    duplicates: 0,
    rejectedBackpressure: 0,
    rejectedFailing: 0,
    rejectedSeams: 0,
    rejectedIdState: 0,
    /** Events refused alone for their size (the sender counts failed sends' events). */
    tooLarge: 0,
  };

  constructor(
    private readonly producer: RecordSender,
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
    this.maxSendBytes = Math.max(1, options.maxSendBytes ?? DEFAULT_MAX_SEND_BYTES);
    this.claimFailures = new FailureLog(options.logger, 'event ids or dedupe unavailable; inserts answer -5');
    this.sender = new SendQueue(producer, partitioner, {
      topic: options.topic,
      lingerMs: options.lingerMs,
      batchEvents: options.batchEvents,
      sendTimeoutMs: options.sendTimeoutMs,
      maxInFlightSends: Math.max(1, options.maxInFlightSends ?? 5),
      maxSendBytes: this.maxSendBytes,
      failFastMs: Math.max(0, options.failFastMs ?? 1000),
      logger: options.logger,
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    });
  }

  get stats(): KafkaEventLogStats {
    const { tooLarge, ...counters } = this.counters;
    const sent = this.sender.counters;
    return {
      ...counters,
      ...sent,
      failedEvents: sent.failedEvents + tooLarge,
      inFlight: this.inFlightEvents,
      queued: this.sender.queued,
      partitions: this.partitioner.count,
    };
  }

  /** True while the last send failed and none succeeded since. */
  get failing(): boolean {
    return this.sender.failing;
  }

  /** `failing`, re-checked with the broker when it is (see `probe`); never throws. */
  async failingNow(): Promise<boolean> {
    const probe = this.options.probe;
    if (!this.sender.failing || probe === undefined) return this.sender.failing;
    try {
      await withTimeout(probe(), 1000, 'Kafka');
    } catch {
      return true;
    }
    this.sender.brokerAnswered();
    return this.sender.failing;
  }

  async append(events: EventRecord[], deadline?: Deadline): Promise<AppendOutcome[]> {
    const n = events.length;
    if (n === 0) return [];
    if (this.closed) return events.map(() => UNAVAILABLE);
    const started = performance.now();
    // The request's deadline, on this log's clock (performance.now()); the log's own without one.
    const until = deadline === undefined ? started + this.options.sendTimeoutMs : started + (deadline - clockMs());
    if (this.inFlightEvents + n > this.options.maxInFlightEvents) {
      this.counters.rejectedBackpressure += n;
      return events.map(() => UNAVAILABLE);
    }
    // Broker known to be failing: one probe batch at a time, at most every failFastMs.
    if (this.sender.failFast(started)) {
      this.counters.rejectedFailing += n;
      return events.map(() => UNAVAILABLE);
    }

    this.inFlightEvents += n;
    this.activeCalls++;
    this.options.metrics?.inFlight(this.inFlightEvents);
    try {
      return await this.publish(events, until, deadline ?? clockMs() + (until - performance.now()));
    } finally {
      this.inFlightEvents -= n;
      this.activeCalls--;
      this.options.metrics?.inFlight(this.inFlightEvents);
      if (this.activeCalls === 0) this.drained?.();
    }
  }

  /**
   * Ids, then the dedupe claim of those ids. Null: answer unavailable (nothing was published).
   * `deadline` on performance.now(), `requestDeadline` the same instant for the dedupe index
   * (shared/util/deadline.ts), which gives up by then itself.
   */
  private async claimIds(events: EventRecord[], deadline: number, requestDeadline: Deadline): Promise<{ ids: bigint[]; earlier: (bigint | null)[] } | null> {
    const n = events.length;
    try {
      const ids = await withTimeout(this.options.ids.allocate(n), deadline - performance.now(), 'id allocation');
      if (ids.length !== n) throw new Error(`id allocator returned ${ids.length} ids for ${n} events`);
      const entries = events.map((e, i) => ({ systemUser: e.systemUser, key: e.dedupeKey, id: ids[i] as bigint }));
      const earlier = await this.options.dedupe.claim(entries, this.options.dedupeWindowMs, requestDeadline);
      if (earlier.length !== n) throw new Error(`dedupe index answered ${earlier.length} claims for ${n} events`);
      this.claimFailures.ok();
      return { ids, earlier };
    } catch (error) {
      if (error instanceof IdBlocksUnavailableError || error instanceof IdBlocksConflictError) {
        // Logged once by the allocator, not per append.
        this.counters.rejectedIdState += n;
        return null;
      }
      // Nothing published. A claim that may have been made holds an id nobody was given: a
      // resend gets that id and publishes it, so leaving it is safe.
      this.counters.rejectedSeams += n;
      this.claimFailures.failed(error, { events: n });
      return null;
    }
  }

  private async publish(events: EventRecord[], deadline: number, requestDeadline: Deadline): Promise<AppendOutcome[]> {
    const n = events.length;
    const claimed = await this.claimIds(events, deadline, requestDeadline);
    if (claimed === null) return events.map(() => UNAVAILABLE);
    const { ids, earlier } = claimed;

    const outIds = events.map((_, i) => earlier[i] ?? (ids[i] as bigint));
    const call: Call = { acked: new Array<boolean>(n).fill(false), remaining: 0, resolve: () => {} };
    const done = new Promise<void>((resolve) => (call.resolve = resolve));
    const queuedAt = performance.now();
    const version = this.options.wireVersion ?? PROTOBUF_WIRE_VERSION;
    const headers = WIRE_HEADERS[version];
    const headerBytes = headersSize(headers);
    events.forEach((event, index) => {
      const key = messageKey(event);
      const value = encodeEvent(outIds[index] as bigint, event, version);
      const bytes = Buffer.byteLength(key) + value.length + headerBytes;
      if (bytes > this.maxSendBytes) {
        // The broker would refuse it, failing every other event of its send: refuse it alone.
        // (The operation layer's field limits keep real events far below this.)
        this.counters.tooLarge++;
        this.options.logger.error({ systemUser: event.systemUser, dominio: event.dominio, bytes }, 'event too large for one kafka send; answering unavailable');
        return;
      }
      const message = { key, value, partition: this.partitioner.partition(key), headers };
      this.sender.enqueue({ message, bytes, call, index, deadline, queuedAt });
      call.remaining++;
    });
    if (call.remaining > 0) {
      this.sender.schedule();
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
        this.sender.close();
        await drained;
      }
      this.sender.stopTimers();
      await this.producer.disconnect();
    })();
    return this.closing;
  }
}

/** Connects a producer (creating the topic when missing) and returns the event log. */
export async function openKafkaEventLog(options: KafkaEventLogOptions): Promise<KafkaEventLog> {
  const maxInFlightSends = Math.max(1, options.maxInFlightSends ?? 5);
  const connection = {
    brokers: options.brokers,
    clientId: options.clientId,
    ...(options.security === undefined ? {} : { security: options.security }),
    ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
    ...(options.keepAliveMs === undefined ? {} : { keepAliveMs: options.keepAliveMs }),
  };

  // The topic is created (when missing) by an admin client used once, at start.
  let partitions: number;
  const admin = await KafkaAdmin.open({ ...connection, requestTimeoutMs: options.requestTimeoutMs ?? options.sendTimeoutMs });
  try {
    const topic = await ensureTopic(admin, {
      topic: options.topic,
      ...(options.topicPartitions === undefined ? {} : { partitions: options.topicPartitions }),
      ...(options.topicReplicationFactor === undefined ? {} : { replicationFactor: options.topicReplicationFactor }),
    });
    if (topic.created) options.logger.info({ topic: options.topic }, 'created kafka topic');
    partitions = topic.partitions;
  } finally {
    await admin.close();
  }

  const keys = await KeyPartitioner.open(options.topic, partitions);
  const producer = await EventProducer.open({ ...connection, sendTimeoutMs: options.sendTimeoutMs, maxInFlightSends });
  try {
    // Connects and loads the metadata now, so that a broker the client cannot use fails the start.
    await producer.partitionCount(options.topic);
  } catch (error) {
    await producer.disconnect().catch(() => {});
    throw error;
  }
  // Messages carry their partition; this follows the topic's partition count, so partitions
  // added later get used (keys then map anew, as with any Kafka producer).
  producer.followPartitions(options.topic, (count) => {
    if (count > keys.count) {
      options.logger.info({ topic: options.topic, from: keys.count, to: count }, 'kafka topic has more partitions; keys map anew');
      keys.count = count;
    }
  }, options.partitionCheckMs);
  const log = new KafkaEventLog(producer, keys, { ...options, maxInFlightSends, probe: () => producer.partitionCount(options.topic) });
  options.logger.info({ brokers: options.brokers, topic: options.topic, partitions }, 'kafka event log connected');
  return log;
}
