/**
 * deploy/observability/: the Prometheus alert rules pass `promtool check rules` (Debian package
 * `prometheus`), and every metric the rules and the Grafana dashboard use exists in the /metrics of
 * a running gateway or worker, so a renamed metric cannot silently blank a panel or an alert.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../shared/config/index.js';
import { Metrics } from '../../shared/runtime/metrics.js';
import { startWorkerProcess, type WorkerProcess } from '../../worker/process.js';
import { TestApp } from '../helpers/harness.js';
import { services, uniqueName } from '../helpers/services.js';
import { REPO } from '../helpers/paths.js';

const ROOT = REPO;
const DIR = path.join(ROOT, 'deploy', 'observability');
const RULES = path.join(DIR, 'alerts.yml');
const DASHBOARD = path.join(DIR, 'grafana-dashboard.json');
const run = promisify(execFile);

/** Series Prometheus makes itself for every target, not the target's /metrics. */
const SCRAPE_SERIES = new Set(['up']);
const PROMQL_WORDS = new Set([
  'sum', 'min', 'max', 'avg', 'count', 'rate', 'irate', 'increase', 'delta', 'histogram_quantile', 'clamp_min', 'clamp_max',
  'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'abs', 'topk', 'time',
]);

/** The metric names a PromQL expression reads: identifiers left once strings, matchers, ranges and groupings are removed. */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  return [...stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)].map((m) => m[0]).filter((w) => !PROMQL_WORDS.has(w));
}

/** Every series name a /metrics text can carry: each declared metric, plus _bucket/_sum/_count of histograms and summaries. */
function exposedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name, type] = m;
    if (name === undefined) continue;
    names.add(name);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
    if (type === 'summary') for (const s of ['_sum', '_count']) names.add(name + s);
  }
  return names;
}

function ruleExprs(): { alert: string; expr: string }[] {
  const doc = parse(fs.readFileSync(RULES, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  return doc.groups.flatMap((g) => g.rules);
}

function dashboardExprs(): string[] {
  const dashboard = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as { panels: { id: number; targets?: { expr: string }[] }[] };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
}

describe('deploy/observability', () => {
  let gateway: TestApp | undefined;
  let worker: WorkerProcess | undefined;
  let exposed: Set<string>;

  beforeAll(async () => {
    gateway = await TestApp.start();
    const s = services();
    const env = {
      REDIS_URL: s.redisUrl,
      REDIS_KEY_PREFIX: `${uniqueName('obs')}:`,
      KAFKA_BROKERS: s.kafkaBrokers.join(','),
      KAFKA_TOPIC: uniqueName('obs'),
      KAFKA_GROUP_ID: uniqueName('obs-worker'),
      CLICKHOUSE_URL: s.clickhouseUrl,
      CLICKHOUSE_DATABASE: uniqueName('obs'),
      ADMIN_HOST: '127.0.0.1',
      ADMIN_PORT: '0',
    };
    worker = await startWorkerProcess(loadConfig(env), pino({ level: 'silent' }), new Metrics(), { probes: true });
    const gatewayText = await (await fetch(`${gateway.app.admin.url}/metrics`, { headers: { Authorization: `Bearer ${gateway.app.adminToken}` } })).text();
    let workerText = '';
    for (let i = 0; i < 50 && workerText === ''; i++) {
      workerText = await fetch(`${worker.probesUrl ?? ''}/metrics`).then((r) => r.text(), () => '');
      if (workerText === '') await new Promise((r) => setTimeout(r, 100));
    }
    exposed = new Set([...exposedNames(gatewayText), ...exposedNames(workerText)]);
    expect(exposed.has('gateway_ready')).toBe(true);
  }, 90_000);
  afterAll(async () => {
    await worker?.close();
    await gateway?.stop();
  });

  it('promtool check rules accepts the alert rules', async () => {
    let result: { stdout: string };
    try {
      result = await run('promtool', ['check', 'rules', RULES]);
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
      if (e.code === 'ENOENT') throw new Error('promtool is not installed: `apt-get install prometheus` (Debian) provides it; .ci/run installs it.', { cause: err });
      throw new Error(`promtool check rules failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: err });
    }
    expect(result.stdout).toContain('SUCCESS');
  });

  it('has an alert for not ready, -5 answers, worker lag, poison messages, lockouts and event-loop delay', () => {
    expect(ruleExprs().map((r) => r.alert)).toEqual(
      expect.arrayContaining(['GatewayNotReady', 'InsertsAnsweredRetryLater', 'WorkerLagHigh', 'PoisonMessages', 'LockoutsSpiking', 'EventLoopDelayHigh']),
    );
  });

  it('every metric an alert rule reads exists in /metrics of a running gateway or worker', () => {
    const missing = ruleExprs().flatMap(({ alert, expr }) => metricNames(expr).filter((n) => !exposed.has(n) && !SCRAPE_SERIES.has(n)).map((n) => `${alert}: ${n}`));
    expect(missing).toEqual([]);
  });

  it('every metric a dashboard panel reads exists there too', () => {
    const exprs = dashboardExprs();
    expect(exprs.length).toBeGreaterThan(15);
    const missing = exprs.flatMap((expr) => metricNames(expr).filter((n) => !exposed.has(n)));
    expect(missing).toEqual([]);
  });

  it('finds metric names in PromQL (and would catch a misspelt one)', () => {
    expect(metricNames('sum by (le, instance) (rate(gateway_x_bucket{a="b}",c=~"d"}[5m])) / clamp_min(sum(rate(foo:bar[1m])), 0.001) > 0.1')).toEqual([
      'gateway_x_bucket',
      'foo:bar',
    ]);
    expect(metricNames('gateway_requets_total').filter((n) => !exposed.has(n))).toEqual(['gateway_requets_total']);
  });

  it('the dashboard is Grafana JSON with unique panel ids and a Prometheus datasource input', () => {
    const dashboard = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as { uid: string; __inputs: { pluginId: string }[]; panels: { id: number }[] };
    expect(dashboard.uid).toBe('prestadores-gateway');
    expect(dashboard.__inputs[0]?.pluginId).toBe('prometheus');
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
