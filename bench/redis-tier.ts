/**
 * What ingest costs the Redis tier, per event: the operation layer of a build (authentication,
 * sessions, the provider cache, validation) over that build's Redis stores, with an event log that
 * does exactly what the Kafka event log asks of Redis (the dedupe claim of each append; ids and the
 * Kafka send touch no Redis) and answers at once, driven in-process by CONCURRENCY callers over
 * PROVIDERS providers. Redis's CPU comes from /proc of every redis-server taking part, the bench
 * process's own (the gateway's side of it) from process.cpuUsage(); both per event.
 *
 * Scenarios (SCENARIOS): `credentials` LoginYInsertarEvento, one event a request; `session`
 * InsertarEvento with a session cookie; `batch` LoginYInsertarEventos of 100 events; `reports` the
 * worker's last-report writes, 5,000 updates a batch (per update).
 *
 * Forms (FORMS): `node` the services' single Redis (.services.env), this build and, with BASELINE=
 * <a checkout of an earlier build>, that build too, alternating round by round; `cluster1` and
 * `cluster3`, Redis Clusters of 1 and 3 primaries (no replicas) the bench starts on ports from
 * BENCH_CLUSTER_PORT (16600), this build only. For cluster3 each primary's CPU is shown apart: the
 * share each shard takes over the providers.
 *
 * The box is shared and its absolute rates move from run to run: read CPU per event, and ratios
 * within one run (bench/RESULTS.md §Redis tier).
 *
 * Run: npm run bench:redis   (env BASELINE, PROVIDERS=10000, EVENTS=40000 per round, ROUNDS=3,
 *      CONCURRENCY=64, GATEWAYS=8, SCENARIOS=credentials,session,batch,reports, FORMS=node,cluster1,cluster3)
 */
import { readFileSync } from 'node:fs';
import { randomBytes, scryptSync } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { cpuSeconds } from './lib/proc.js';
import { startBenchCluster, type BenchCluster } from './lib/redis-nodes.js';
import { servicesEnv } from './lib/services-env.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const BASELINE = process.env.BASELINE ? path.resolve(process.env.BASELINE) : null;
const PROVIDERS = Number(process.env.PROVIDERS ?? 10_000);
const EVENTS = Number(process.env.EVENTS ?? 40_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 64);
/**
 * Gateways (front-end threads) the callers are spread over, each with its own Redis client as each
 * thread has: a client writes what its callers ask in one event-loop turn as one pipeline per node,
 * so fewer callers a client means smaller pipelines and more of Redis's CPU in system calls.
 */
const GATEWAYS = Number(process.env.GATEWAYS ?? 8);
const SCENARIOS = (process.env.SCENARIOS ?? 'credentials,session,batch,reports').split(',') as Scenario[];
const FORMS = (process.env.FORMS ?? 'node,cluster1,cluster3').split(',') as Form[];
const CLUSTER_PORT = Number(process.env.BENCH_CLUSTER_PORT ?? 16600);
const WINDOW_MS = 600_000;
const BATCH = 100;
const REPORTS_BATCH = 5000;

type Scenario = 'credentials' | 'session' | 'batch' | 'reports';
type Form = 'node' | 'cluster1' | 'cluster3';

/** A cheap scrypt hash in the stored format (the bench measures Redis, not password checks). */
function cheapHash(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, 32, { N: 16, r: 1, p: 1 });
  return `scrypt$16$1$1$${salt.toString('base64')}$${key.toString('base64')}`;
}

interface Layer {
  /** One request of the scenario for provider `i`: how many events it carried. */
  request(scenario: Scenario, i: number, seq: number): Promise<number>;
  close(): Promise<void>;
}

/** A build's operation layer over its Redis stores in one form, with PROVIDERS providers and a session each. */
async function openLayer(root: string, connection: Record<string, unknown>, prefix: string): Promise<Layer> {
  const src = <T>(p: string): Promise<T> => import(path.join(root, p)) as Promise<T>;
  const [{ OperationService }, { CachedProviderStore }, { loadConfig }, { findOperation }, { parseXmlDateTime }, { Metrics }, redis, sessions] = await Promise.all([
    src<typeof import('../gateway/service/service.js')>('gateway/service/service.ts'),
    src<typeof import('../gateway/service/provider-cache.js')>('gateway/service/provider-cache.ts'),
    src<typeof import('../shared/config/index.js')>('shared/config/index.ts'),
    src<typeof import('../shared/catalogue/index.js')>('shared/catalogue/index.ts'),
    src<typeof import('../shared/dotnet/xml-convert.js')>('shared/dotnet/xml-convert.ts'),
    src<typeof import('../shared/runtime/metrics.js')>('shared/runtime/metrics.ts'),
    src<typeof import('../shared/backends/redis/index.js')>('shared/backends/redis/index.ts'),
    src<{ newSessionId(): string }>('gateway/service/sessions.ts'),
  ]);
  const all = await Promise.all(Array.from({ length: GATEWAYS }, () => redis.openRedisStores({ ...connection, keyPrefix: prefix, logger: { warn: () => undefined } })));
  const stores = all[0]!;
  const passwordHash = cheapHash('bench-secret');
  const sessionIds: string[] = [];
  for (let i = 0; i < PROVIDERS; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, PROVIDERS - i) }, async (_, k) => {
        const u = `fleet-${i + k}`;
        await stores.providers.create({ systemUser: u, passwordHash, enabled: true, timeZone: null, requireRegisteredVehicles: false, createdAt: 0, updatedAt: 0 });
        sessionIds[i + k] = (await stores.sessions.create(sessions.newSessionId(), u, Date.now(), 3_600_000)).id;
      }),
    );
  }
  let nextId = 0n;
  // 10,000 providers at the few thousand events/s this box drives are ~1 event/s each; a provider of
  // a 1M-device deployment sends ~10 a second. A 10 s provider cache here misses as often as the
  // default 1 s one does there (every tenth request), for both builds.
  const config = loadConfig({ PROVIDER_CACHE_MS: '10000' });
  const services = all.map((own) => {
    // What the Kafka event log asks of Redis for an append: the claim of its events' dedupe keys.
    const eventLog = {
      async append(events: { systemUser: string; dedupeKey: string }[], deadline?: number) {
        const ids = events.map(() => ++nextId);
        const entries = events.map((e, i) => ({ systemUser: e.systemUser, key: e.dedupeKey, id: ids[i]! }));
        const earlier = await (own.dedupe.claim)(entries, WINDOW_MS, deadline);
        return events.map((_, i) => ({ ok: true as const, id: earlier[i] ?? ids[i]!, duplicate: earlier[i] !== null }));
      },
      close: () => Promise.resolve(),
    };
    const providers = new CachedProviderStore(own.providers, config.logins.providerCacheMs);
    return new OperationService({ ...own, providers, eventLog }, config, { metrics: new Metrics() });
  });
  const today = () => ({ year: 2026, month: 11, day: 28 });
  const event = (i: number, seq: number) => {
    const text = `2026-11-28T10:${String(seq % 60).padStart(2, '0')}:${String(Math.floor(seq / 60) % 60).padStart(2, '0')}.${String(seq % 1000).padStart(3, '0')}`;
    const dt = { text, parsed: parseXmlDateTime(text, today, { spaceForT: true }) };
    return { Dominio: `AB${seq % 100}CD`, NroSerie: `SN-${i}`, Codigo: String(seq), Latitud: -34.6, Longitud: -58.4, Altitud: 25, Velocidad: 60, FechaHoraEvento: dt, FechaHoraRecepcion: dt };
  };
  const call = (name: string, args: Record<string, unknown>, sessionId: string | null, seq: number) =>
    services[seq % GATEWAYS]!.invoke(findOperation(name)!, args, { operation: name, now: Date.now(), deadline: Infinity, sessionId, extras: new Map(), clientAddress: () => '127.0.0.1', newSessionId: null, provider: null });
  const creds = (i: number) => ({ SystemUser: `fleet-${i}`, Password: 'bench-secret' });
  const ok = (answer: unknown, n: number): number => {
    const codes = Array.isArray(answer) ? answer : [answer];
    if (codes.length !== n || codes.some((c) => typeof c !== 'number' || c <= 0)) throw new Error(`unexpected answer ${JSON.stringify(answer)}`);
    return n;
  };
  return {
    async request(scenario, i, seq) {
      switch (scenario) {
        case 'credentials':
          return ok(await call('LoginYInsertarEvento', { ...creds(i), ...event(i, seq) }, null, seq), 1);
        case 'session':
          return ok(await call('InsertarEvento', event(i, seq), sessionIds[i]!, seq), 1);
        case 'batch':
          return ok(await call('LoginYInsertarEventos', { ...creds(i), Eventos: Array.from({ length: BATCH }, (_, k) => event(i, seq * BATCH + k)) }, null, seq), BATCH);
        case 'reports': {
          const at = { epochMs: Date.now(), subMsTicks: seq % 10_000 };
          await all[seq % GATEWAYS]!.lastReports.record(Array.from({ length: REPORTS_BATCH }, (_, k) => ({ systemUser: `fleet-${(i + k * 7919) % PROVIDERS}`, dominio: `AB${k % 100}CD`, at })));
          return REPORTS_BATCH;
        }
      }
    },
    close: async () => {
      for (const own of all) await own.close();
    },
  };
}

interface Measured {
  events: number;
  redisUs: number;
  /** Each server's CPU µs per event, in the order of the form's pids. */
  perServer: number[];
  benchUs: number;
  perSecond: number;
}

async function measure(layer: Layer, scenario: Scenario, pids: readonly number[]): Promise<Measured> {
  const redis0 = pids.map((p) => cpuSeconds(p) ?? 0);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let done = 0;
  let seq = Math.floor(Math.random() * 1e9);
  const worker = async (): Promise<void> => {
    while (done < (scenario === 'reports' ? EVENTS * 5 : EVENTS)) {
      // Not `done += await ...`: that reads `done` before the await and loses the other callers' counts.
      const events = await layer.request(scenario, Math.floor(Math.random() * PROVIDERS), seq++);
      done += events;
    }
  };
  await Promise.all(Array.from({ length: scenario === 'reports' ? 2 : CONCURRENCY }, worker));
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const perServer = pids.map((p, k) => (((cpuSeconds(p) ?? redis0[k]!) - redis0[k]!) * 1e6) / done);
  return { events: done, redisUs: perServer.reduce((a, b) => a + b, 0), perServer, benchUs: (cpu.user + cpu.system) / done, perSecond: done / wall };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const f1 = (x: number): string => x.toFixed(1);

async function main(): Promise<void> {
  const services = servicesEnv();
  const nodePid = Number(readFileSync(path.join(services.SERVICES_DIR ?? path.join(ROOT, '.services'), 'redis.pid'), 'utf8').trim());
  const run = Date.now().toString(36);
  const clusters: BenchCluster[] = [];
  const combos: { name: string; form: Form; layer: Layer; pids: number[] }[] = [];
  try {
    for (const form of FORMS) {
      if (form === 'node') {
        combos.push({ name: 'this build, one node', form, layer: await openLayer(ROOT, { url: services.REDIS_URL }, `bench-redis-${run}-new:`), pids: [nodePid] });
        if (BASELINE !== null) combos.push({ name: 'baseline, one node', form, layer: await openLayer(BASELINE, { url: services.REDIS_URL }, `bench-redis-${run}-base:`), pids: [nodePid] });
        continue;
      }
      const cluster = await startBenchCluster(form === 'cluster1' ? 1 : 3, CLUSTER_PORT + (form === 'cluster1' ? 0 : 3));
      clusters.push(cluster);
      const layer = await openLayer(ROOT, { clusterNodes: cluster.nodes.map(({ host, port }) => ({ host, port })) }, `bench-redis-${run}:`);
      combos.push({ name: `this build, cluster of ${cluster.nodes.length}`, form, layer, pids: cluster.nodes.map((n) => n.pid) });
    }
    const results = new Map<string, Measured[]>();
    for (const scenario of SCENARIOS) for (const c of combos) await measure(c.layer, scenario, c.pids); // warm-up: JIT, caches, scripts
    for (let round = 1; round <= ROUNDS; round++) {
      for (const scenario of SCENARIOS) {
        for (const c of round % 2 === 0 ? [...combos].reverse() : combos) {
          const m = await measure(c.layer, scenario, c.pids);
          const key = `${scenario}|${c.name}`;
          results.set(key, [...(results.get(key) ?? []), m]);
          console.log(`round ${round} ${scenario.padEnd(11)} ${c.name.padEnd(24)} Redis ${f1(m.redisUs)} µs/event [${m.perServer.map(f1).join(', ')}]  bench ${f1(m.benchUs)} µs/event  ${Math.round(m.perSecond)} events/s`);
        }
      }
    }
    console.log(`\n${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), Node ${process.version}, ${new Date().toISOString()}; ${PROVIDERS} providers, ${EVENTS} events a round, ${ROUNDS} rounds, ${CONCURRENCY} callers over ${GATEWAYS} clients; medians`);
    console.log('| scenario | form | Redis CPU µs/event | per primary | bench (gateway side) µs/event | events/s |');
    console.log('|---|---|---:|---|---:|---:|');
    for (const scenario of SCENARIOS) {
      for (const c of combos) {
        const ms = results.get(`${scenario}|${c.name}`) ?? [];
        if (ms.length === 0) continue;
        const perServer = c.pids.map((_, k) => median(ms.map((m) => m.perServer[k]!)));
        const share = perServer.length > 1 ? ` (max/min ${(Math.max(...perServer) / Math.min(...perServer)).toFixed(2)})` : '';
        console.log(`| ${scenario} | ${c.name} | ${f1(median(ms.map((m) => m.redisUs)))} | ${perServer.map(f1).join(' / ')}${share} | ${f1(median(ms.map((m) => m.benchUs)))} | ${Math.round(median(ms.map((m) => m.perSecond)))} |`);
      }
      const ratio = (a: string, b: string, pick: (m: Measured) => number): string => {
        const xs = results.get(`${scenario}|${a}`);
        const ys = results.get(`${scenario}|${b}`);
        return xs && ys ? (median(xs.map(pick)) / median(ys.map(pick))).toFixed(2) : '-';
      };
      console.log(
        `${scenario}: Redis CPU per event this/baseline ${ratio('this build, one node', 'baseline, one node', (m) => m.redisUs)}; ` +
          `events/s 3 shards/1 shard ${ratio('this build, cluster of 3', 'this build, cluster of 1', (m) => m.perSecond)}, Redis CPU per event 3/1 ${ratio('this build, cluster of 3', 'this build, cluster of 1', (m) => m.redisUs)}`,
      );
    }
  } finally {
    for (const c of combos) await c.layer.close().catch(() => undefined);
    for (const cluster of clusters) await cluster.stop();
  }
}

await main();
