/**
 * The per-request counters of shared/runtime/metrics.ts are tallied in plain numbers and handed to
 * prom-client when /metrics is read. Against prom-client's own labelled counters fed the same calls
 * (the reference), the exposition is the same after every read, nothing is counted twice across
 * reads, and the JSON form the main thread aggregates from its front-end threads carries them too.
 */
import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../../shared/runtime/metrics.js';

/** The reference: prom-client's counters incremented on every call, the plain way. */
function reference() {
  const registry = new Registry();
  const requests = new Counter({ name: 'gateway_requests_total', help: 'x', labelNames: ['operation', 'binding', 'status'], registers: [registry] });
  const results = new Counter({ name: 'gateway_event_results_total', help: 'x', labelNames: ['operation', 'result'], registers: [registry] });
  return {
    registry,
    request: (operation: string, binding: string, status: string) => requests.labels({ operation, binding, status }).inc(),
    results: (operation: string, codes: number[]) => {
      for (const code of codes) results.labels({ operation, result: code > 0 ? 'id' : String(code) }).inc();
    },
  };
}

/** The sample lines of one metric, sorted (the order of label sets is not part of the format). */
async function samples(registry: Registry, name: string): Promise<string[]> {
  return (await registry.metrics())
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`))
    .sort();
}

describe('Metrics request and event-result tallies', () => {
  it('expose what prom-client counting each call exposes, across several reads', async () => {
    const ours = new Metrics({ defaults: false });
    const ref = reference();
    const calls: [string, string, string][] = [
      ['LoginYInsertarEvento', 'soap11', '200'],
      ['LoginYInsertarEvento', 'soap12', '200'],
      ['LoginYInsertarEventos', 'soap11', '200'],
      ['-', 'other', '404'],
      ['LoginYInsertarEvento', 'soap11', 'aborted'],
    ];
    const batches: [string, number[]][] = [
      ['LoginYInsertarEvento', [41]],
      ['LoginYInsertarEventos', [7, -5, 8, -1, -5]],
      ['InsertarEvento', [-5]],
    ];
    for (let read = 0; read < 3; read++) {
      for (let i = 0; i < 20 + read * 7; i++) {
        const [operation, binding, status] = calls[(i * 3 + read) % calls.length]!;
        ours.recordRequest(operation, binding, status, 0.002);
        ref.request(operation, binding, status);
        const [op, codes] = batches[(i + read) % batches.length]!;
        ours.recordEventResults(op, codes);
        ref.results(op, codes);
      }
      for (const name of ['gateway_requests_total', 'gateway_event_results_total']) {
        const expected = await samples(ref.registry, name);
        expect(expected.length).toBeGreaterThan(2);
        expect(await samples(ours.registry, name)).toEqual(expected);
      }
    }
    // A read with nothing new in between changes nothing.
    expect(await samples(ours.registry, 'gateway_requests_total')).toEqual(await samples(ref.registry, 'gateway_requests_total'));
  });

  it('reach the JSON form that front-end threads send to the main thread', async () => {
    const ours = new Metrics({ defaults: false });
    ours.recordRequest('LoginYInsertarEvento', 'soap11', '200', 0.001);
    ours.recordRequest('LoginYInsertarEvento', 'soap11', '200', 0.001);
    ours.recordEventResults('LoginYInsertarEventos', [1, 2, -5]);
    const json = await ours.registry.getMetricsAsJSON();
    const requests = json.find((m) => m.name === 'gateway_requests_total')!;
    expect(requests.values).toEqual([{ value: 2, labels: { operation: 'LoginYInsertarEvento', binding: 'soap11', status: '200' } }]);
    const results = json.find((m) => m.name === 'gateway_event_results_total')!;
    expect(results.values).toEqual(
      expect.arrayContaining([
        { value: 2, labels: { operation: 'LoginYInsertarEventos', result: 'id' } },
        { value: 1, labels: { operation: 'LoginYInsertarEventos', result: '-5' } },
      ]),
    );
    // The duration histogram still sees every request.
    const seconds = json.find((m) => m.name === 'gateway_request_duration_seconds')!;
    expect(seconds.values.find((v) => 'metricName' in v && v.metricName === 'gateway_request_duration_seconds_count')?.value).toBe(2);
  });
});
