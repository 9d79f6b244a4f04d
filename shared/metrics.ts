import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Prometheus metrics of one process, served by the admin port's /metrics. One registry per
 * process (tests create their own), with the process defaults (CPU, memory, event-loop lag).
 */
export class Metrics {
  readonly registry = new Registry();

  /** Every answered request, by operation ('-' before routing), binding and HTTP status. */
  readonly requests = new Counter({
    name: 'gateway_requests_total',
    help: 'Requests answered, by operation, binding (soap11, soap12, get, post, metadata, other) and HTTP status',
    labelNames: ['operation', 'binding', 'status'] as const,
    registers: [this.registry],
  });

  readonly requestSeconds = new Histogram({
    name: 'gateway_request_duration_seconds',
    help: 'Time from request start to response, by binding and operation',
    labelNames: ['binding', 'operation'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  /**
   * Labelled children of the two request metrics, by their labels: prom-client hashes a label
   * object on every inc/observe; a child is looked up once. Bounded by the catalogue
   * (operations × bindings × statuses).
   */
  private readonly requestChildren = new Map<string, { count: { inc(): void }; seconds: { observe(v: number): void } }>();

  /** Counts one answered request and observes its duration. */
  recordRequest(operation: string, binding: string, status: string, seconds: number): void {
    const key = `${operation}\0${binding}\0${status}`;
    let child = this.requestChildren.get(key);
    if (child === undefined) {
      child = {
        count: this.requests.labels({ operation, binding, status }),
        seconds: this.requestSeconds.labels({ binding, operation }),
      };
      this.requestChildren.set(key, child);
    }
    child.count.inc();
    child.seconds.observe(seconds);
  }

  private readonly eventResultChildren = new Map<string, { inc(by?: number): void }>();

  /** Counts one call's answered events: 'id' for each positive result, else the negative code. */
  recordEventResults(operation: string, codes: readonly number[]): void {
    let ids = 0;
    for (const code of codes) {
      if (code > 0) ids++;
      else this.eventResultChild(operation, String(code)).inc();
    }
    // One increment for a whole batch's ids: a label lookup per event cost more than the rest of the metric.
    if (ids > 0) this.eventResultChild(operation, 'id').inc(ids);
  }

  private eventResultChild(operation: string, result: string): { inc(by?: number): void } {
    const key = `${operation}\0${result}`;
    let child = this.eventResultChildren.get(key);
    if (child === undefined) {
      child = this.eventResults.labels({ operation, result });
      this.eventResultChildren.set(key, child);
    }
    return child;
  }

  /** Result of each event: 'id' when stored (or deduplicated), else the negative code. */
  readonly eventResults = new Counter({
    name: 'gateway_event_results_total',
    help: 'Events answered, by operation and result (id, or the negative code)',
    labelNames: ['operation', 'result'] as const,
    registers: [this.registry],
  });

  readonly publishSeconds = new Histogram({
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
