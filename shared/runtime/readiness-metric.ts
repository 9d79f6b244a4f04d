import { Gauge } from 'prom-client';
import type { Metrics } from './metrics.js';

/**
 * A 0/1 gauge evaluated at each scrape by the same check as /readyz, so an alert rule can say
 * "not ready" without Prometheus probing /readyz itself. A check that throws counts as not ready.
 */
export function readinessGauge(metrics: Metrics, name: string, help: string, ready: () => Promise<boolean>): Gauge {
  return new Gauge({
    name,
    help,
    registers: [metrics.registry],
    async collect() {
      let ok: boolean;
      try {
        ok = await ready();
      } catch {
        ok = false;
      }
      this.set(ok ? 1 : 0);
    },
  });
}
