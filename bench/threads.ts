/**
 * The GATEWAY_THREADS curve: the same scenarios with 1, 2… front-end threads, alternating the
 * thread counts round by round (1, 2, 1, 2…) so drift on a shared machine hits each alike. Each
 * run is a fresh server (`npm start`'s build, embedded, SQLITE_SYNCHRONOUS=FULL, every event
 * durably stored; or the scale-out mode with SCALE_OUT=1 and the services of .services.env), a
 * warm-up, then wrk. Reported per scenario and thread count: the median req/s, server CPU per
 * 1,000 requests (all threads, from /proc), the server's CPU in % of one core and its main
 * thread's share (the shared state lives there), and the median ratio to the first count.
 *
 * Run: npx tsx bench/threads.ts   (env THREADS=1,2  ROUNDS=3  DURATION=10  WARMUP=3
 *      CONNECTIONS=50  SCENARIOS=insert,session,batch,poll  SCALE_OUT=1: Redis + Kafka mode,
 *      with GATEWAY_THREAD_CLIENTS passed through)
 * On a 2-core machine wrk takes one core: 2 threads is the most that can show anything there.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { CONNECTIONS, DURATION, log, USER, WARMUP } from './compare/config.js';
import { wrk, type Measurement } from './compare/measure.js';
import { login, startOurs, type Target } from './compare/servers.js';
import { stopChildrenOnExit, killAllNow } from './lib/processes.js';

const THREADS = (process.env.THREADS ?? '1,2').split(',').map((n) => Number(n.trim()));
const ROUNDS = Number(process.env.ROUNDS ?? 3);

interface Scenario {
  name: string;
  script: string;
  args?: (t: Target) => Promise<string[]>;
  prepare?: (t: Target & { server: { admin(m: string, p: string, b?: unknown): Promise<unknown> } }) => Promise<void>;
}

const SCENARIOS: Record<string, Scenario> = {
  insert: { name: 'SOAP 1.1 LoginYInsertarEvento', script: 'soap11-insert.lua' },
  session: { name: 'InsertarEvento on a session cookie', script: 'session-insert.lua', args: async (t) => [await login(t.url)] },
  batch: { name: 'LoginYInsertarEventos ×100', script: 'batch-insert.lua', args: async () => ['100'] },
  poll: {
    name: 'LoginYObtenerComando (one command queued)',
    script: 'obtener-comando.lua',
    prepare: async (t) => {
      await t.server.admin('POST', `/admin/providers/${USER}/commands`, { cmd: 'CC', unidad: 'AB123CD', equipo: '42' });
    },
  },
};
const chosen = (process.env.SCENARIOS ?? 'insert,session,batch,poll').split(',').map((s) => {
  const scenario = SCENARIOS[s.trim()];
  if (scenario === undefined) throw new Error(`SCENARIOS: unknown ${s} (known: ${Object.keys(SCENARIOS).join(', ')})`);
  return scenario;
});

/** SCALE_OUT=1: the services' URLs from .services.env (npm run services:up), fresh names per run. */
function scaleOutEnv(run: number): Record<string, string> {
  if (process.env.SCALE_OUT !== '1') return {};
  const file = process.env.SERVICES_ENV_FILE ?? '.services.env';
  const env: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^(?:export\s+)?([A-Z_]+)=(.*)$/.exec(line.trim());
    if (m) env[m[1]!] = m[2]!.replace(/^['"]|['"]$/g, '');
  }
  const tag = `bench-threads-${process.pid}-${run}`;
  return { REDIS_URL: env.REDIS_URL ?? '', KAFKA_BROKERS: env.KAFKA_BROKERS ?? '', REDIS_KEY_PREFIX: `${tag}:`, KAFKA_TOPIC: tag };
}

let runs = 0;
async function measure(scenario: Scenario, threads: number): Promise<Measurement> {
  for (const [k, v] of Object.entries({ GATEWAY_THREADS: String(threads), ...scaleOutEnv(++runs) })) process.env[k] = v;
  const target = await startOurs();
  try {
    await scenario.prepare?.(target);
    const args = (await scenario.args?.(target)) ?? [];
    await wrk(target, scenario.script, { args, seconds: WARMUP });
    return await wrk(target, scenario.script, { args, seconds: DURATION });
  } finally {
    await target.stop();
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

async function main(): Promise<void> {
  stopChildrenOnExit(log);
  const mode = process.env.SCALE_OUT === '1' ? `scale-out (Redis + Kafka, GATEWAY_THREAD_CLIENTS=${process.env.GATEWAY_THREAD_CLIENTS ?? 'default'})` : 'embedded, SQLITE_SYNCHRONOUS=FULL';
  const lines = [
    `${os.cpus()[0]?.model ?? 'cpu'} × ${os.availableParallelism()}, Node ${process.version}; ${mode}; wrk -t1 -c${CONNECTIONS}, ${ROUNDS} rounds × ${DURATION} s (warm-up ${WARMUP} s); load average at start ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`,
    '',
    '| scenario | threads | req/s | ratio | server CPU ms / 1,000 req | server CPU % of a core | main thread % | p99 ms | errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const scenario of chosen) {
    const results = new Map<number, Measurement[]>(THREADS.map((n) => [n, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const threads of THREADS) {
        const m = await measure(scenario, threads);
        results.get(threads)!.push(m);
        log(`${scenario.name}, ${threads} thread(s), round ${round + 1}: ${Math.round(m.reqPerSec)} req/s, ${m.cpuMsPer1000.toFixed(1)} ms CPU / 1000, server ${Math.round(m.serverCpu)}% (main ${Math.round(m.serverMainCpu)}%), wrk ${Math.round(m.loadCpu)}%`);
      }
    }
    const base = results.get(THREADS[0]!)!;
    for (const threads of THREADS) {
      const ms = results.get(threads)!;
      const ratios = ms.map((m, i) => m.reqPerSec / base[i]!.reqPerSec);
      lines.push(
        `| ${scenario.name} | ${threads} | ${Math.round(median(ms.map((m) => m.reqPerSec))).toLocaleString('en-US')} | ${median(ratios).toFixed(2)} | ` +
          `${median(ms.map((m) => m.cpuMsPer1000)).toFixed(1)} | ${Math.round(median(ms.map((m) => m.serverCpu)))} | ${Math.round(median(ms.map((m) => m.serverMainCpu)))} | ` +
          `${median(ms.map((m) => m.p99)).toFixed(1)} | ${ms.reduce((n, m) => n + m.errors, 0)} |`,
      );
    }
  }
  lines.push('', `load average at the end ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => killAllNow());
