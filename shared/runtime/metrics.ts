import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type LabelValues } from 'prom-client';
import { BucketHistogram, type HistogramSeries } from '../util/bucket-histogram.js';

/** Increments of one label set not yet handed to prom-client. */
interface Tally<L extends string> {
  labels: LabelValues<L>;
  pending: number;
}

interface RequestTally extends Tally<'operation' | 'binding' | 'status'> {
  seconds: HistogramSeries;
}

/** Adds what each tally counted since the last read to the counter (called when /metrics is read). */
function flushTallies<L extends string>(counter: Counter<L>, tallies: readonly Tally<L>[]): void {
  for (const tally of tallies) {
    if (tally.pending === 0) continue;
    counter.inc(tally.labels, tally.pending);
    tally.pending = 0;
  }
}

/**
 * Prometheus metrics of one process, served by the admin port's /metrics. One registry per
 * process (tests create their own), with the process defaults (CPU, memory, event-loop lag).
 */
export class Metrics {
  readonly registry = new Registry();

  /** Every answered request, by operation ('-' before routing), binding and HTTP status. */
  readonly requests: Counter<'operation' | 'binding' | 'status'> = new Counter({
    name: 'gateway_requests_total',
    help: 'Requests answered, by operation, binding (soap11, soap12, get, post, metadata, other) and HTTP status',
    labelNames: ['operation', 'binding', 'status'] as const,
    registers: [this.registry],
    collect: (): void => flushTallies(this.requests, this.requestTallies),
  });

  /** Observed on every request: a BucketHistogram, which allocates nothing per observation. */
  readonly requestSeconds = new BucketHistogram({
    name: 'gateway_request_duration_seconds',
    help: 'Time from request start to response, by binding and operation',
    labelNames: ['binding', 'operation'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  /** Result of each event: 'id' when stored (or deduplicated), else the negative code. */
  readonly eventResults: Counter<'operation' | 'result'> = new Counter({
    name: 'gateway_event_results_total',
    help: 'Events answered, by operation and result (id, or the negative code)',
    labelNames: ['operation', 'result'] as const,
    registers: [this.registry],
    collect: (): void => flushTallies(this.eventResults, this.eventResultTallies),
  });

  /*
   * The per-request counters are kept in plain numbers, one tally per label set found through
   * nested maps (no key string), and added to prom-client when /metrics is read (the counters'
   * collect hooks): prom-client's labelled child hashes its label object into a string on every
   * inc. With the key strings that was the largest share of what a durable insert allocated
   * (bench/allocations.ts). The request histogram's series is found with the tally and kept.
   */
  private readonly requestTallies: Tally<'operation' | 'binding' | 'status'>[] = [];
  private readonly requestsBy = new Map<string, Map<string, Map<string, RequestTally>>>();
  private readonly eventResultTallies: Tally<'operation' | 'result'>[] = [];
  private readonly eventResultsBy = new Map<string, Map<string, Tally<'operation' | 'result'>>>();

  /** Counts one answered request and observes its duration. */
  recordRequest(operation: string, binding: string, status: string, seconds: number): void {
    let byBinding = this.requestsBy.get(operation);
    if (byBinding === undefined) this.requestsBy.set(operation, (byBinding = new Map<string, Map<string, RequestTally>>()));
    let byStatus = byBinding.get(binding);
    if (byStatus === undefined) byBinding.set(binding, (byStatus = new Map<string, RequestTally>()));
    let tally = byStatus.get(status);
    if (tally === undefined) {
      tally = { labels: { operation, binding, status }, pending: 0, seconds: this.requestSeconds.labels({ binding, operation }) };
      this.requestTallies.push(tally);
      byStatus.set(status, tally);
    }
    tally.pending++;
    tally.seconds.observe(seconds);
  }

  /** Counts one call's answered events: 'id' for each positive result, else the negative code. */
  recordEventResults(operation: string, codes: readonly number[]): void {
    let ids = 0;
    for (const code of codes) {
      if (code > 0) ids++;
      else this.eventResultTally(operation, String(code)).pending++;
    }
    // One addition for a whole batch's ids.
    if (ids > 0) this.eventResultTally(operation, 'id').pending += ids;
  }

  private eventResultTally(operation: string, result: string): Tally<'operation' | 'result'> {
    let byResult = this.eventResultsBy.get(operation);
    if (byResult === undefined) this.eventResultsBy.set(operation, (byResult = new Map<string, Tally<'operation' | 'result'>>()));
    let tally = byResult.get(result);
    if (tally === undefined) {
      tally = { labels: { operation, result }, pending: 0 };
      this.eventResultTallies.push(tally);
      byResult.set(result, tally);
    }
    return tally;
  }

  /** Observed on every insert: a BucketHistogram too. */
  readonly publishSeconds = new BucketHistogram({
    name: 'gateway_event_publish_seconds',
    help: 'Time from handing a request\'s events to the event log until they were durable (commit or Kafka acks=all)',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  readonly kafkaSendSeconds = new Histogram({
    name: 'gateway_kafka_send_seconds',
    help: 'Time from a producer send to its acks=all acknowledgement (or failure)',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  readonly publishBatchSize = new Histogram({
    name: 'gateway_event_publish_batch_size',
    help: 'Events per commit or Kafka send',
    buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000],
    registers: [this.registry],
  });

  /** The front end's open client connections, read when /metrics is read (set by the gateway's server). */
  openConnectionsSource: () => number = () => 0;

  readonly openConnections = new Gauge({
    name: 'gateway_open_connections',
    help: 'Client connections open on the public listeners; the HTTP server closes none for idleness (docs/running.md, The edge in front)',
    registers: [this.registry],
    collect: (): void => this.openConnections.set(this.openConnectionsSource()),
  });

  /** The embedded event log's writer thread's V8 heap, read when /metrics is read (set where the embedded backends are opened). */
  eventWriterHeapSource: () => Promise<{ total: number; used: number } | null> = () => Promise.resolve(null);

  readonly eventWriterHeap = new Gauge({
    name: 'gateway_event_writer_heap_bytes',
    help: "V8 heap of the embedded event log's SQLite writer thread, allocated and used; its young generation is sized apart from the main thread's (docs/running.md, Memory)",
    labelNames: ['kind'] as const,
    registers: [this.registry],
    collect: async (): Promise<void> => {
      const heap = await this.eventWriterHeapSource();
      this.eventWriterHeap.reset();
      if (heap === null) return;
      this.eventWriterHeap.labels({ kind: 'allocated' }).set(heap.total);
      this.eventWriterHeap.labels({ kind: 'used' }).set(heap.used);
    },
  });

  readonly eventsInFlight = new Gauge({
    name: 'gateway_events_in_flight',
    help: 'Events accepted and not yet acknowledged by the event log',
    registers: [this.registry],
  });

  /** Failed logins by reason; unknown SystemUsers cost this counter and nothing else. */
  readonly loginFailures = new Counter({
    name: 'gateway_login_failures_total',
    help: 'Logins refused, by reason (unknown_user, disabled, wrong_password, locked, too_long)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  /** Locks set by the lockout policy, by scope (address: one SystemUser+address; user: everywhere). */
  readonly lockouts = new Counter({
    name: 'gateway_lockouts_total',
    help: 'Lockouts set, by scope (address, user)',
    labelNames: ['scope'] as const,
    registers: [this.registry],
  });

  /** Requests refused before any operation ran: bad encodings, bad escapes, conflicting headers. */
  readonly rejectedRequests = new Counter({
    name: 'gateway_rejected_requests_total',
    help: 'Requests refused while reading them, by reason (unknown_charset, invalid_encoding, bad_escape, bad_content_length)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly idBlocksTaken = new Counter({
    name: 'gateway_id_blocks_total',
    help: 'Event-id blocks this gateway took from the Kafka id-blocks topic',
    registers: [this.registry],
  });

  readonly idBlocksUnavailable = new Gauge({
    name: 'gateway_id_blocks_unavailable',
    help: '1 while a thread of this gateway issues no event ids (the id-blocks topic is being checked, or a conflict stopped it)',
    aggregator: 'max',
    registers: [this.registry],
  });

  readonly idFloor = new Gauge({
    name: 'gateway_id_floor',
    help: 'The floor event-id blocks are taken under (ID_FLOOR, or higher when raised by another gateway or rebased above the stored ids)',
    aggregator: 'max',
    registers: [this.registry],
  });

  /** Set from TLS_CERT_FILE at start and on every reload; the earliest of all threads is shown. */
  readonly tlsCertificateExpiry = new Gauge({
    name: 'gateway_tls_certificate_expiry_timestamp_seconds',
    help: 'When the certificate the public port serves (TLS_CERT_FILE) stops being valid, in seconds since 1970 (no series without TLS)',
    // A label, so that without TLS there is no series at all rather than a 0 that reads as expired.
    labelNames: ['certificate'] as const,
    aggregator: 'min',
    registers: [this.registry],
  });

  readonly workerBatchRows = new Histogram({
    name: 'worker_batch_rows',
    help: 'Rows per ClickHouse insert',
    buckets: [1, 10, 50, 100, 500, 1000, 2500, 5000, 10000, 25000],
    registers: [this.registry],
  });

  readonly workerInsertSeconds = new Histogram({
    name: 'worker_insert_duration_seconds',
    help: 'Time per ClickHouse insert',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly workerLag = new Gauge({
    name: 'worker_consumer_lag',
    help: 'Messages between the committed offset and the high watermark, by partition',
    labelNames: ['partition'] as const,
    registers: [this.registry],
  });

  readonly workerPoison = new Counter({
    name: 'worker_poison_messages_total',
    help: 'Messages that could not be decoded, set aside (admin API: /admin/poison) and skipped',
    registers: [this.registry],
  });

  constructor(options: { defaults?: boolean } = {}) {
    if (options.defaults !== false) collectDefaultMetrics({ register: this.registry });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
