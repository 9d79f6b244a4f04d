/**
 * BucketHistogram (shared/util/bucket-histogram.ts) against prom-client's Histogram, the reference: fed
 * the same observations, /metrics prints the same lines, the JSON the main thread aggregates from
 * its front-end threads merges to the same figures, and reset and bad values behave alike.
 */
import { AggregatorRegistry, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { BucketHistogram } from '../../../../shared/util/bucket-histogram.js';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Values on, between, below and past the bounds, in a fixed pseudo-random order. */
function observations(n: number, seed: number): number[] {
  const out = [...BUCKETS, 0, -1, 7.5, 1e9, 0.00049, 0.0011];
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out.push((x / 2 ** 32) ** 3 * 6);
  }
  return out;
}

function pair(labelled: boolean) {
  const refRegistry = new Registry();
  const oursRegistry = new Registry();
  const config = { name: 'h_seconds', help: 'a histogram', buckets: BUCKETS };
  const labelNames = labelled ? (['binding', 'operation'] as const) : ([] as const);
  const ref = new Histogram({ ...config, labelNames, registers: [refRegistry] });
  const ours = new BucketHistogram({ ...config, labelNames, registers: [oursRegistry] });
  return { ref, ours, refRegistry, oursRegistry };
}

describe('BucketHistogram', () => {
  it('prints what prom-client prints for the same observations, by label set', async () => {
    const { ref, ours, refRegistry, oursRegistry } = pair(true);
    const sets = [
      { binding: 'soap11', operation: 'LoginYInsertarEvento' },
      { binding: 'post', operation: 'Login' },
      { binding: 'soap12', operation: 'LoginYInsertarEvento' },
    ];
    const series = sets.map((labels) => ours.labels(labels));
    observations(500, 7).forEach((value, i) => {
      const k = i % sets.length;
      ref.labels(sets[k]!).observe(value);
      series[k]!.observe(value);
    });
    const expected = await refRegistry.metrics();
    expect(expected).toContain('h_seconds_bucket{le="0.001",binding="soap11",operation="LoginYInsertarEvento"}');
    expect(await oursRegistry.metrics()).toBe(expected);
  });

  it('without labels: zeros before any observation, then the same lines', async () => {
    const { ref, ours, refRegistry, oursRegistry } = pair(false);
    expect(await oursRegistry.metrics()).toBe(await refRegistry.metrics());
    for (const value of observations(200, 3)) {
      ref.observe(value);
      ours.observe(value);
    }
    expect(await oursRegistry.metrics()).toBe(await refRegistry.metrics());
  });

  it('merges across threads (AggregatorRegistry) to the same figures', async () => {
    const refs = [pair(true), pair(true)];
    for (const [t, { ref, ours }] of refs.entries()) {
      for (const value of observations(100, 11 + t)) {
        ref.labels({ binding: 'soap11', operation: 'X' }).observe(value);
        ours.labels({ binding: 'soap11', operation: 'X' }).observe(value);
      }
    }
    const merged = async (registries: Registry[]) => AggregatorRegistry.aggregate(await Promise.all(registries.map((r) => r.getMetricsAsJSON()))).metrics();
    const expected = await merged(refs.map((p) => p.refRegistry));
    expect(expected).toMatch(/h_seconds_count\{binding="soap11",operation="X"\} 238/);
    expect(await merged(refs.map((p) => p.oursRegistry))).toBe(expected);
  });

  it('resets as prom-client does, and refuses what it refuses', async () => {
    const { ref, ours, refRegistry, oursRegistry } = pair(false);
    ref.observe(0.3);
    ours.observe(0.3);
    refRegistry.resetMetrics();
    oursRegistry.resetMetrics();
    ref.observe(0.002);
    ours.observe(0.002);
    expect(await oursRegistry.metrics()).toBe(await refRegistry.metrics());
    expect(() => ref.observe(Number.NaN)).toThrow(TypeError);
    expect(() => ours.observe(Number.NaN)).toThrow(TypeError);
    expect(() => ours.observe(Infinity)).toThrow(TypeError);
    const labelled = pair(true).ours;
    expect(() => labelled.labels({ binding: 'soap11' })).toThrow(/operation is missing/);
    expect(() => labelled.observe(1)).toThrow(/has labels/);
    expect(() => new BucketHistogram({ name: 'bad', help: 'x', buckets: [1, 1], registers: [] })).toThrow(/increase/);
  });
});
