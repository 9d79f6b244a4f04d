/**
 * The scale-out path end to end on the real services (`npm run services:up`): autocannon posts
 * SOAP LoginYInsertarEventos (100 events per request) to the gateway, Kafka carries the events,
 * the worker loads them into ClickHouse; then the script checks that every acknowledged id arrived
 * in ClickHouse exactly once, and how long the pipeline took to drain.
 *
 * TOPOLOGY=split (default) runs `npm run gateway` and `npm run worker` as two processes, as
 * docker-compose does; TOPOLOGY=single runs both in one process (`npm start` in scale-out mode).
 * Lag is sampled every second during the load as the backlog (events acknowledged to clients but
 * not yet in ClickHouse) and converted to seconds at the measured rate; stored_at - received_at
 * (1 s resolution) and the drain time after the load are printed too.
 *
 * CPU per acknowledged event (/proc, all threads) is reported for the gateway over the load, for
 * the worker and the ClickHouse 18.16 server over the load and the drain, with the goal: the gateway's halved from the
 * figure measured when the goal was set (GATEWAY_BASELINE_US).
 *
 * CLICKHOUSE_ENGINE=chdb (split topology) runs the worker on ClickHouse 26 embedded in its own
 * process (npm `chdb`, bench/lib/chdb-worker.ts: the current schema) instead of the 18.16 server;
 * the backlog is then read from the consumer group's committed offsets (the worker commits after
 * each insert), and the stored events are checked once the worker has exited.
 *
 * Run: npm run bench:pipeline   (env DURATION=seconds (60), CONNECTIONS=n (20),
 *      EVENTS_PER_REQUEST=n (100), TOPOLOGY=split|single, CLICKHOUSE_ENGINE=1816|chdb,
 *      GATEWAY_BASELINE_US=54; the services from SERVICES_ENV_FILE, default .services.env)
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { Kafka, logLevel } from 'kafkajs';
import { cpuProbe, peakRssKb } from './lib/proc.js';
import { startServer } from './lib/server.js';
import { servicesEnv } from './lib/services-env.js';

const DURATION = Number(process.env.DURATION ?? 60);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 20);
const PER_REQUEST = Number(process.env.EVENTS_PER_REQUEST ?? 100);
const TOPOLOGY = process.env.TOPOLOGY ?? 'split';
if (TOPOLOGY !== 'split' && TOPOLOGY !== 'single') throw new Error(`TOPOLOGY must be split or single, got ${TOPOLOGY}`);
const ENGINE = process.env.CLICKHOUSE_ENGINE ?? '1816';
if (ENGINE !== '1816' && ENGINE !== 'chdb') throw new Error(`CLICKHOUSE_ENGINE must be 1816 or chdb, got ${ENGINE}`);
if (ENGINE === 'chdb' && TOPOLOGY !== 'split') throw new Error('CLICKHOUSE_ENGINE=chdb needs TOPOLOGY=split (the worker owns the engine)');
const NS = 'http://tempuri.org/';
/**
 * The gateway's CPU per acknowledged event (µs, split topology) when the goal of halving it
 * was set: this script on the build of f91a826, 2026-11-22, 52 and 56 µs in two runs (Intel
 * Xeon, 2 vCPUs; LOG.md). CPU per event depends on the processor: on another machine, measure
 * that build (BENCH_ROOT=<its checkout>) and pass its figure as GATEWAY_BASELINE_US.
 */
const GATEWAY_US_PER_EVENT_BASELINE = Number(process.env.GATEWAY_BASELINE_US || 54);


const fields = (i: number) =>
  `<Dominio>AB${i % 5000}CD</Dominio><NroSerie>SN</NroSerie><Codigo>${i}</Codigo><Latitud>-34.6037221</Latitud><Longitud>-58.3815704</Longitud><Altitud>25</Altitud><Velocidad>42.5</Velocidad><FechaHoraEvento>2026-11-22T08:59:30.${String(i % 1000).padStart(3, '0')}-03:00</FechaHoraEvento><FechaHoraRecepcion>2026-11-22T09:00:00-03:00</FechaHoraRecepcion>`;

async function main(): Promise<void> {
  const services = servicesEnv();
  const run = Date.now().toString(36);
  const database = `bench_${run}`;
  const env = {
    REDIS_URL: services.REDIS_URL!,
    REDIS_KEY_PREFIX: `bench-${run}:`,
    KAFKA_BROKERS: services.KAFKA_BROKERS!,
    KAFKA_TOPIC: `bench-events-${run}`,
    KAFKA_GROUP_ID: `bench-worker-${run}`,
    CLICKHOUSE_URL: services.CLICKHOUSE_URL!,
    CLICKHOUSE_DATABASE: database,
    LOG_LEVEL: 'info',
  };
  const chdbPath = ENGINE === 'chdb' ? mkdtempSync(path.join(os.tmpdir(), 'bench-pipeline-chdb-')) : null;
  const kafka = new Kafka({ clientId: `bench-${run}`, brokers: env.KAFKA_BROKERS.split(','), logLevel: logLevel.NOTHING });
  const kafkaAdmin = kafka.admin();
  await kafkaAdmin.connect();
  /** Events the worker has stored and committed (sum of the group's committed offsets). */
  const committedEvents = async (): Promise<number> => {
    const [t] = await kafkaAdmin.fetchOffsets({ groupId: env.KAFKA_GROUP_ID, topics: [env.KAFKA_TOPIC] });
    return (t?.partitions ?? []).reduce((a, p) => a + Math.max(0, Number(p.offset)), 0);
  };
  const server = await startServer(env, TOPOLOGY === 'split' ? { script: 'dist/gateway/main.js' } : {});
  const worker = TOPOLOGY === 'split' ? await startWorker(chdbPath === null ? env : { ...env, CHDB_PATH: chdbPath }, chdbPath !== null) : null;
  await server.admin('POST', '/admin/providers', { systemUser: 'bench', password: 'bench-secret' });

  let ch: ClickHouseClient = createClient({ url: services.CLICKHOUSE_URL!, username: 'default', password: '' });
  const acked = new Set<number>();
  let negative = 0;
  let i = 0;
  const started = Date.now();
  // Backlog sampled each second while the load runs: acknowledged but not yet in ClickHouse.
  const backlog: number[] = [];
  let sampling = true;
  // A named function rather than an IIFE: inside an IIFE the compiler reads `sampling` as the
  // `true` it was just set to, not as the flag the end of the load clears.
  const sampleBacklog = async (): Promise<void> => {
    await new Promise((r) => setTimeout(r, 1000));
    while (sampling) {
      const ackedNow = acked.size;
      try {
        let stored: number;
        if (chdbPath === null) {
          const r = await ch.query({ query: `SELECT count() AS n FROM ${database}.events`, format: 'JSONEachRow' });
          const [row] = await r.json<{ n: string }>();
          stored = Number(row?.n ?? 0);
        } else {
          stored = await committedEvents();
        }
        backlog.push(Math.max(0, ackedNow - stored));
      } catch {
        // the table appears with the worker's first migration
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
  const sampler = sampleBacklog();
  const gatewayCpu = cpuProbe(server.child.pid!);
  const workerCpu = worker ? cpuProbe(worker.pid) : null;
  // The 18.16 server shares the cores too: its CPU (parsing, parts, merges) per event, over the same span as the worker's.
  const serverCpu = chdbPath === null ? cpuProbe(Number(readFileSync(path.join(services.SERVICES_DIR!, 'clickhouse.pid'), 'utf8').trim())) : null;
  const result = await autocannon({
    url: server.serviceUrl,
    connections: CONNECTIONS,
    duration: DURATION,
    method: 'POST',
    headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NS}LoginYInsertarEventos"` },
    requests: [
      {
        setupRequest: (req) => {
          const base = i++ * PER_REQUEST;
          const events = Array.from({ length: PER_REQUEST }, (_, k) => `<pEvento>${fields(base + k)}</pEvento>`).join('');
          return {
            ...req,
            body: `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><LoginYInsertarEventos xmlns="${NS}"><SystemUser>bench</SystemUser><Password>bench-secret</Password><Eventos>${events}</Eventos></LoginYInsertarEventos></soap:Body></soap:Envelope>`,
          };
        },
        onResponse: (_status, body) => {
          for (const m of body.matchAll(/<int>(-?\d+)<\/int>/g)) {
            const code = Number(m[1]);
            if (code > 0) acked.add(code);
            else negative++;
          }
        },
      },
    ],
  });
  const loadEnded = Date.now();
  const gatewayUse = gatewayCpu();
  sampling = false;
  await sampler;
  if (chdbPath !== null) {
    // The engine is inside the worker: wait for it to commit everything, stop it, then open its data.
    while ((await committedEvents()) < acked.size && Date.now() - loadEnded < 120_000) await new Promise((r) => setTimeout(r, 250));
  }
  const committedDrainMs = Date.now() - loadEnded;
  const workerUseAtDrain = chdbPath !== null ? workerCpu?.() : undefined;
  if (chdbPath !== null) {
    await worker?.stop();
    await ch.close();
    ch = createClient({ connection: createChdbConnection({ path: chdbPath }) as unknown as NonNullable<Parameters<typeof createClient>[0]>['connection'] });
  }
  const count = async (): Promise<{ rows: number; ids: number }> => {
    const r = await ch.query({ query: `SELECT count() AS rows, uniqExact(id) AS ids FROM ${database}.events FINAL`, format: 'JSONEachRow' });
    const [row] = await r.json<{ rows: string; ids: string }>();
    return { rows: Number(row?.rows ?? 0), ids: Number(row?.ids ?? 0) };
  };
  let stored = await count();
  while (stored.ids < acked.size && Date.now() - loadEnded < 120_000) {
    await new Promise((r) => setTimeout(r, 250));
    stored = await count();
  }
  const drainMs = chdbPath === null ? Date.now() - loadEnded : committedDrainMs;
  const workerUse = workerUseAtDrain ?? workerCpu?.();
  const serverUse = serverCpu?.();
  const receivedMs = chdbPath === null ? 'received_at_ms' : 'toUnixTimestamp64Milli(received_at)';
  const lagQuery = await ch.query({
    query: `SELECT avg(toUnixTimestamp(stored_at) * 1000 - ${receivedMs}) AS avg_ms, max(toUnixTimestamp(stored_at) * 1000 - ${receivedMs}) AS max_ms FROM ${database}.events`,
    format: 'JSONEachRow',
  });
  const [lag] = await lagQuery.json<{ avg_ms: number; max_ms: number }>();
  // Every acknowledged id, exactly once (ids the gateway folds stay below 2^31 here, so they equal the stored ids).
  const idsQuery = await ch.query({ query: `SELECT id, count() AS n FROM ${database}.events FINAL GROUP BY id HAVING n > 1 LIMIT 5`, format: 'JSONEachRow' });
  const dupes = await idsQuery.json<unknown>();
  const allIds = await ch.query({ query: `SELECT id FROM ${database}.events FINAL`, format: 'JSONCompact' });
  const present = new Set(((await allIds.json()) as { data: [string][] }).data.map(([id]) => Number(id)));
  const lost = [...acked].filter((id) => !present.has(id)).length;
  const rss = server.rssKb();
  const workerRss = worker?.rssKb() ?? 0;
  await server.stop();
  await worker?.stop();
  await ch.command({ query: `DROP DATABASE IF EXISTS ${database}` });
  await ch.close();
  await kafkaAdmin.disconnect();
  if (chdbPath !== null) rmSync(chdbPath, { recursive: true, force: true });

  const seconds = (loadEnded - started) / 1000;
  const rate = acked.size / seconds;
  const maxBacklog = Math.max(0, ...backlog);
  const avgBacklog = backlog.length ? backlog.reduce((a, b) => a + b, 0) / backlog.length : 0;
  const where = TOPOLOGY === 'split' ? 'gateway and worker in two processes' : 'gateway+worker in one process';
  const clickhouse = chdbPath === null ? 'ClickHouse 18.16 server' : 'ClickHouse 26 embedded in the worker (chdb, current schema)';
  console.log(`\nPipeline (${where}, real Redis/Kafka and ${clickhouse} on the same 2 cores), ${seconds.toFixed(0)} s of load, ${new Date().toISOString()}\n`);
  console.log('| connections | events/request | req/s | acked events/s | p50 ms | p99 ms | negative codes | stored ids | lost | duplicated | backlog avg / max (events) | lag avg / max (s, from backlog) | stored_at − received_at avg / max (ms, 1 s resolution) | drain after load (ms) | RSS MB gateway / worker |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  console.log(
    `| ${CONNECTIONS} | ${PER_REQUEST} | ${Math.round(result.requests.average)} | ${Math.round(rate)} | ${result.latency.p50} | ${result.latency.p99} | ${negative} | ${stored.ids} | ${lost} | ${dupes.length} | ${Math.round(avgBacklog)} / ${maxBacklog} | ${(avgBacklog / rate).toFixed(2)} / ${(maxBacklog / rate).toFixed(2)} | ${Math.round(lag?.avg_ms ?? 0)} / ${Math.round(lag?.max_ms ?? 0)} | ${drainMs} | ${Math.round(rss / 1024)} / ${worker ? Math.round(workerRss / 1024) : '(same)'} |`,
  );
  const met = rate >= 20_000 && maxBacklog / rate < 2 && lost === 0 && dupes.length === 0;
  const perEvent = (seconds: number): number => (seconds * 1e6) / Math.max(1, acked.size);
  const gatewayUs = perEvent(gatewayUse.seconds);
  console.log(
    `\nCPU per acknowledged event (/proc, all threads): ${TOPOLOGY === 'split' ? 'gateway' : 'gateway+worker'} ${gatewayUs.toFixed(0)} µs ` +
      `(${gatewayUse.total.toFixed(0)}% of one core during the load)` +
      (workerUse ? `, worker ${perEvent(workerUse.seconds).toFixed(0)} µs (${workerUse.total.toFixed(0)}% of one core over the load and the drain)` : '') +
      (serverUse ? `, ClickHouse server ${perEvent(serverUse.seconds).toFixed(0)} µs (${serverUse.total.toFixed(0)}%)` : ''),
  );
  if (TOPOLOGY === 'split') {
    const goal = GATEWAY_US_PER_EVENT_BASELINE / 2;
    console.log(`Goal: gateway CPU per acknowledged event halved from ${GATEWAY_US_PER_EVENT_BASELINE} µs, ≤ ${goal} µs: ${gatewayUs <= goal ? 'met' : 'not met'} (${gatewayUs.toFixed(0)} µs)`);
  }
  const maxLag = maxBacklog / rate;
  console.log(
    `\nLag goal: the worker keeps up, lag < 2 s at the rate the gateway acknowledged (${Math.round(rate)} events/s): ${maxLag < 2 ? 'met' : 'not met'} (max ${maxLag.toFixed(2)} s, avg ${(avgBacklog / rate).toFixed(2)} s)` +
      (chdbPath === null ? '' : '; the worker CPU above includes the embedded ClickHouse'),
  );
  console.log(`\nTarget ≥ 20,000 events/s, lag < 2 s, 0 lost, 0 duplicated: ${met ? 'met' : 'not met'} (${Math.round(rate)} events/s, max lag ${(maxBacklog / rate).toFixed(2)} s, ${lost} lost, ${dupes.length} duplicated)`);
}

/** `npm run worker` in its own process, ready once it has joined the consumer group. */
async function startWorker(env: Record<string, string>, chdb = false): Promise<{ pid: number; rssKb(): number; stop(): Promise<void> }> {
  const root = process.env.BENCH_ROOT || path.resolve(import.meta.dirname, '..');
  // BENCH_CPU_PROF_DIR profiles the worker too (its .cpuprofile next to the gateway's).
  const profiling = process.env.BENCH_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : [];
  const script = chdb ? ['--import', 'tsx', 'bench/lib/chdb-worker.ts'] : ['dist/worker/main.js'];
  const child = spawn(process.execPath, [...profiling, ...script], {
    cwd: root,
    env: { ...process.env, ...env, ADMIN_PORT: '0', ADMIN_HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (out.includes('joined the consumer group')) {
        child.stdout.off('data', onData);
        child.stdout.resume();
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`worker exited (${code}): ${out.slice(-500)}`)));
    setTimeout(() => reject(new Error(`worker not ready after 60 s: ${out.slice(-500)}`)), 60_000).unref();
  });
  return {
    pid: child.pid!,
    rssKb: () => peakRssKb(child.pid!),
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
