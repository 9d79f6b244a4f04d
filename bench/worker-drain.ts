/**
 * The worker alone: how fast it loads a backlog, and its CPU per event, without the gateway
 * competing for the cores. N events (default 300,000) are produced to a fresh 4-partition topic
 * first; then, for each batch size, a worker with a fresh consumer group and database reads the
 * whole topic into ClickHouse and the script times it until every offset is committed.
 *
 * ENGINE=1816 (default) writes to the real ClickHouse 18.16 server: the worker's CPU (this
 * process) and the server's (its pid from SERVICES_DIR/clickhouse.pid, all threads, merges
 * included) are printed per event apart, since both share the box with the gateway. ENGINE=chdb
 * writes to ClickHouse 26 embedded in this process by npm `chdb`, the current schema (its CPU is
 * then in this process's figure: worker + engine). Last reports go to a sink that drops them
 * (Redis is measured by the pipeline bench). Run it under `node --cpu-prof` (see bench/README.md)
 * to see where the worker's time goes.
 *
 * Run: npm run bench:worker   (env EVENTS=n (300000), BATCHES=1000,5000,20000,
 *      FORMATS=RowBinary,TabSeparated,JSONEachRow, ENGINE=1816|chdb;
 *      services from .services.env)
 *
 * Before/after in one run: BASELINE=<another checkout> (e.g. `git archive <rev> | tar -x -C /tmp/before`
 * with this node_modules linked in) drains the same backlog with that checkout's worker too, the
 * two alternating round after round (ROUNDS=3) so drift in a shared machine hits both alike; the
 * table gains a build column and the median ratios this/baseline are printed last.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createChdbConnection } from 'chdb/connection';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { createClickHouseClient, quoteIdentifier, type ClickHouseOptions } from '../shared/backends/clickhouse/index.js';
import { exampleEventRecord } from '../shared/events/schema.js';
import { encodeEvent, messageKey } from '../shared/events/wire.js';
import { startWorker as startThisWorker } from '../worker/run.js';
import type { InsertFormat } from '../shared/backends/clickhouse/writer.js';
import { cpuProbe } from './lib/proc.js';
import { servicesEnv } from './lib/services-env.js';

const EVENTS = Number(process.env.EVENTS ?? 300_000);
const BATCHES = (process.env.BATCHES ?? '1000,5000,20000').split(',').map(Number);
const FORMATS = (process.env.FORMATS ?? 'RowBinary,TabSeparated,JSONEachRow').split(',') as InsertFormat[];
const ENGINE = process.env.ENGINE ?? '1816';
const BASELINE = process.env.BASELINE ?? null;
const ROUNDS = Number(process.env.ROUNDS ?? (BASELINE === null ? 1 : 3));
if (ENGINE !== '1816' && ENGINE !== 'chdb') throw new Error(`ENGINE must be 1816 or chdb, got ${ENGINE}`);


const quiet = { info: () => undefined, warn: (fields: Record<string, unknown>, message: string) => { if (process.env.BENCH_VERBOSE) console.error(message, fields); }, error: (fields: Record<string, unknown>, message: string) => console.error(message, fields) };

/** Waits (up to 20 s) until the server uses under 5% of a core over half a second. */
async function serverIdle(pid: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const probe = cpuProbe(pid);
    await new Promise((r) => setTimeout(r, 500));
    if (probe().total < 5) return;
  }
}

async function main(): Promise<void> {
  const services = servicesEnv();
  const brokers = services.KAFKA_BROKERS!.split(',');
  const run = Date.now().toString(36);
  const topic = `bench-drain-${run}`;
  const kafka = new Kafka({ clientId: `bench-drain-${run}`, brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 4, replicationFactor: 1 }], waitForLeaders: true });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  const base = exampleEventRecord();
  const t0 = Date.UTC(2026, 10, 1);
  for (let i = 0; i < EVENTS; i += 5_000) {
    const messages = [];
    for (let k = i; k < Math.min(EVENTS, i + 5_000); k++) {
      const epochMs = t0 + k * 10;
      const event = { ...base, dominio: `AB${k % 5000}CD`, eventTime: { epochMs, subMsTicks: k % 10_000 }, receivedAt: Date.now(), dedupeKey: `bench-${k}` };
      messages.push({ key: messageKey(event), value: encodeEvent(BigInt(k + 1), event) });
    }
    await producer.send({ topic, acks: -1, messages });
  }
  await producer.disconnect();

  const chdbDir = ENGINE === 'chdb' ? mkdtempSync(path.join(os.tmpdir(), 'bench-drain-chdb-')) : null;
  const connection = (): Pick<ClickHouseOptions, 'connection'> =>
    chdbDir === null ? {} : { connection: createChdbConnection({ path: chdbDir }) as unknown as NonNullable<ClickHouseOptions['connection']> };
  const serverPid = chdbDir === null ? Number(readFileSync(path.join(services.SERVICES_DIR!, 'clickhouse.pid'), 'utf8').trim()) : null;
  const rows: string[] = [];
  type Start = typeof startThisWorker;
  const builds: { name: string; start: Start }[] = [{ name: 'this', start: startThisWorker }];
  if (BASELINE !== null) {
    const other = (await import(path.resolve(BASELINE, 'worker', 'run.ts'))) as { startWorker: Start };
    builds.unshift({ name: 'baseline', start: other.startWorker });
  }
  /** events/s and CPU µs per event of each build, per format and batch size. */
  const figures = new Map<string, { rate: number; cpu: number }[]>();
  let round = 0;
  // A format may be listed twice (FORMATS=RowBinary,TabSeparated,RowBinary,...: alternating runs on a noisy box).
  for (let repeat = 0; repeat < ROUNDS; repeat++) for (const format of FORMATS) {
    for (const batchRows of BATCHES) for (const build of builds) {
      const startWorker = build.start;
      round++;
      const database = `bench_drain_${run}_${round}_${format}_${batchRows}`;
      const groupId = `bench-drain-${run}-${round}-${format}-${batchRows}`;
      // The previous run's merges would count against this one: start when the server is idle.
      if (serverPid !== null) await serverIdle(serverPid);
      const server = serverPid === null ? null : cpuProbe(serverPid);
      const cpu0 = process.cpuUsage();
      const started = performance.now();
      const worker = await startWorker({
        brokers,
        topic,
        groupId,
        clientId: groupId,
        clickhouse: { url: services.CLICKHOUSE_URL!, database, username: 'default', password: '', ...connection() },
        batchRows,
        batchMs: 500,
        insertFormat: format,
        lastReports: { record: async () => undefined },
        logger: quiet,
      });
      while (worker.stats.insertedRows < EVENTS) await new Promise((r) => setTimeout(r, 50));
      const seconds = (performance.now() - started) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const serverSeconds = server?.().seconds ?? null;
      const stats = { ...worker.stats };
      await worker.stop();
      const cpuSeconds = (cpu.user + cpu.system) / 1e6;
      const key = `${build.name}|${format}|${batchRows}`;
      figures.set(key, [...(figures.get(key) ?? []), { rate: EVENTS / seconds, cpu: (cpuSeconds * 1e6) / EVENTS }]);
      rows.push(
        `| ${build.name} | ${ENGINE === 'chdb' ? 'current schema, ClickHouse 26 (chdb, in process)' : '18.16 schema, ClickHouse 18.16 server'} | ${format} | ${batchRows} | ${stats.batches} | ${Math.round(EVENTS / seconds).toLocaleString('en')} | ${((cpuSeconds * 1e6) / EVENTS).toFixed(1)} | ${((cpuSeconds / seconds) * 100).toFixed(0)}% | ${serverSeconds === null ? '(in the worker)' : ((serverSeconds * 1e6) / EVENTS).toFixed(1)} |`,
      );
      console.error(rows.at(-1));
      if (chdbDir === null) {
        // A drop after a 300,000-row drain can wait behind merges on a busy box: allow it time.
        const ch = createClickHouseClient({ url: services.CLICKHOUSE_URL!, database: 'default', username: 'default', password: '', requestTimeoutMs: 120_000 });
        await ch.command({ query: `DROP DATABASE IF EXISTS ${quoteIdentifier(database)}` });
        await ch.close();
      }
    }
  }
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
  if (chdbDir !== null) rmSync(chdbDir, { recursive: true, force: true });
  console.log(`\nWorker draining a ${EVENTS.toLocaleString('en')}-event backlog from 4 partitions, ${new Date().toISOString()}, ${os.cpus()[0]?.model ?? ''} x${os.cpus().length} (shared)\n`);
  console.log('| build | ClickHouse | format | batch rows | inserts | events/s | worker CPU µs/event | CPU (% of one core) | server CPU µs/event |');
  console.log('|---|---|---|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) console.log(r);
  if (BASELINE !== null) {
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
    console.log(`\nthis build / baseline (${BASELINE}), medians of ${ROUNDS} alternating rounds:`);
    for (const format of new Set(FORMATS)) {
      for (const batchRows of BATCHES) {
        const a = figures.get(`baseline|${format}|${batchRows}`) ?? [];
        const b = figures.get(`this|${format}|${batchRows}`) ?? [];
        const rate = median(b.map((f) => f.rate)) / median(a.map((f) => f.rate));
        const cpu = median(b.map((f) => f.cpu)) / median(a.map((f) => f.cpu));
        console.log(`  ${format} ${batchRows}: events/s ${rate.toFixed(2)}x, worker CPU per event ${cpu.toFixed(2)}x`);
      }
    }
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
