import type { LabelValues, Metric, Registry } from 'prom-client';

/** One line of a metric in prom-client's JSON form (what `Registry.getMetricsAsJSON` gives). */
interface HistogramValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

/** A metric in prom-client's JSON form: what a registry and AggregatorRegistry read of it. */
interface HistogramJson {
  name: string;
  help: string;
  type: 'histogram';
  aggregator: 'sum';
  values: HistogramValue[];
}

/** The observations of one label set. */
export interface HistogramSeries {
  observe(value: number): void;
}

class Series implements HistogramSeries {
  /** Observations per bucket (not cumulative); past the last bound they count only in `count`. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string | number>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    if (i < bounds.length) this.counts[i]!++;
    this.sum += value;
    this.count++;
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

interface BucketHistogramConfig<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
  /** Upper bounds, increasing. */
  buckets: readonly number[];
  registers: readonly Registry[];
}

/**
 * A Prometheus histogram whose observation allocates nothing: each label set's buckets are a
 * typed array, found once (`labels`) and kept by the caller. prom-client's Histogram builds a
 * label object and hashes it into a string on every observe (what that allocates per request is
 * measured by bench/allocations.ts), and has no way to add observations in a batch.
 *
 * It serves what a registry reads of a metric (`get`, prom-client's JSON shape, the one
 * AggregatorRegistry merges across threads), so /metrics prints it exactly as a prom-client
 * Histogram with the same observations: test/unit/shared/util/bucket-histogram.unit.test.ts compares the two.
 */
export class BucketHistogram<L extends string = never> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  private readonly bounds: readonly number[];
  private readonly labelNames: readonly L[];
  private readonly series = new Map<string, Series>();
  /** The series without labels (`observe`), when the histogram has none. */
  private plain: Series | null = null;

  constructor(config: BucketHistogramConfig<L>) {
    this.name = config.name;
    this.help = config.help;
    this.bounds = [...config.buckets];
    for (let i = 1; i < this.bounds.length; i++) {
      if (!(this.bounds[i]! > this.bounds[i - 1]!)) throw new Error(`${config.name}: buckets must increase.`);
    }
    this.labelNames = config.labelNames ?? [];
    // The registry reads `name`, `get` and `reset`: what this class has of prom-client's Metric.
    for (const registry of config.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** The series of one label set: look it up once, observe on it for every request. */
  labels(labels: LabelValues<L>): HistogramSeries {
    return this.seriesOf(labels);
  }

  private seriesOf(labels: LabelValues<L>): Series {
    const own: Record<string, string | number> = {};
    for (const name of this.labelNames) {
      const value = labels[name];
      if (value === undefined) throw new Error(`${this.name}: label ${name} is missing.`);
      own[name] = value;
    }
    const key = JSON.stringify(this.labelNames.map((name) => String(own[name])));
    let series = this.series.get(key);
    if (series === undefined) this.series.set(key, (series = new Series(own, this.bounds)));
    return series;
  }

  /** Observes on the histogram without labels. */
  observe(value: number): void {
    if (this.labelNames.length > 0) throw new Error(`${this.name} has labels: observe on labels(...).`);
    (this.plain ??= this.seriesOf({})).observe(value);
  }

  reset(): void {
    for (const series of this.series.values()) series.reset();
  }

  /** prom-client's JSON form: per series, the cumulative buckets, `+Inf`, the sum and the count. */
  get(): Promise<HistogramJson> {
    const values: HistogramValue[] = [];
    const bucket = `${this.name}_bucket`;
    // An unlabelled histogram shows its zeros before any observation, as prom-client's does.
    if (this.labelNames.length === 0) this.plain ??= this.seriesOf({});
    for (const series of this.series.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += series.counts[i]!;
        values.push({ labels: { le: this.bounds[i]!, ...series.labels }, value: cumulative, metricName: bucket });
      }
      values.push({ labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: bucket });
      values.push({ labels: { ...series.labels }, value: series.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...series.labels }, value: series.count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator });
  }
}
