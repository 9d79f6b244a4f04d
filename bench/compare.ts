/**
 * One table comparing the gateway with the machine's ceiling and a peer implementation, all on
 * the same box in one run (so the figures are ratios within the run, not absolutes):
 *
 * - ceiling: a bare uWebSockets.js server that reads the body and sends a fixed reply of our size
 *   (bench/ceiling/server.ts);
 * - peer: node-soap serving our WSDL with an in-memory LoginYInsertarEvento (bench/peer/server.ts);
 * - ours: the gateway as `npm start` runs it (embedded store, durable acknowledgements,
 *   SQLITE_SYNCHRONOUS=FULL, other settings at their defaults), started by bench/lib/server.ts
 *   (which builds and runs the compiled main.ts), one fresh server (new DATA_DIR) per row:
 *   SOAP 1.1, SOAP 1.2 and HTTP POST LoginYInsertarEvento, InsertarEvento on a session cookie,
 *   LoginYInsertarEventos ×100, LoginYObtenerComando; and SOAP 1.1 LoginYInsertarEvento paced at
 *   70% of its measured maximum, twice: autocannon `overallRate` (which sends each second's quota in a burst) and wrk with a Lua
 *   schedule that spaces the same rate evenly (bench/wrk/soap11-insert-paced.lua, wrk2-like), the
 *   latter PACED_RUNS times back to back on one server, reporting the run with the median p99.
 *
 * Load: `wrk -t1 -c$CONNECTIONS -d${DURATION}s --latency` with the Lua scripts in bench/wrk (every
 * event distinct; answers without a positive id counted as errors), after a WARMUP-second wrk run
 * on the same server.
 *
 * Run: npx tsx bench/compare.ts   (env DURATION=10, CONNECTIONS=100, WARMUP=3 seconds, PACED_RUNS=5;
 *      WRK=path)
 * Progress goes to stderr; the machine, the table and the targets to stdout. Only 127.0.0.1 is
 * ever contacted, and every process started here is stopped on the way out, failure or not.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { startServer, type BenchServer } from './lib/server.js';
import { runWrk } from './lib/wrk.js';

const ROOT = path.resolve(import.meta.dirname, '..');

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

const DURATION = positiveInt('DURATION', 10);
const CONNECTIONS = positiveInt('CONNECTIONS', 100);
const WARMUP = positiveInt('WARMUP', 3);
const WRK = process.env.WRK ?? 'wrk';
/** Back-to-back runs of the evenly paced 70% row; the reported one has the median p99. */
const PACED_RUNS = positiveInt('PACED_RUNS', 5);
/** The provider every server knows; the same constants are in bench/wrk/common.lua. */
const USER = 'bench';
const PASSWORD = 'bench-secret';
const NS = 'http://tempuri.org/';
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

const log = (msg: string): void => {
  process.stderr.write(`[compare ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};

/** Traffic goes to loopback only: refuse anything else before sending a byte. */
function loopback(url: string): string {
  const host = new URL(url).hostname;
  if (host !== '127.0.0.1') throw new Error(`refusing to send traffic to ${url}: only 127.0.0.1 is allowed`);
  return url;
}

// ---------------------------------------------------------------------------------------------
// Processes: every child is tracked until it has exited, and killed on any way out.

/** Children started here: `group` children lead their own process group (detached). */
const children = new Map<ChildProcess, { group: boolean }>();

function track(child: ChildProcess, group: boolean): void {
  children.set(child, { group });
  child.once('exit', () => children.delete(child));
}

function signal(child: ChildProcess, sig: NodeJS.Signals, group: boolean): void {
  if (child.pid === undefined) return;
  try {
    // A negative pid signals the whole process group: the child and anything it started.
    process.kill(group ? -child.pid : child.pid, sig);
  } catch {
    // already gone
  }
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (exited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** SIGTERM, then SIGKILL after 5 s. */
async function terminate(child: ChildProcess, group: boolean): Promise<void> {
  if (exited(child)) return;
  signal(child, 'SIGTERM', group);
  if (await waitExit(child, 5000)) return;
  signal(child, 'SIGKILL', group);
  await waitExit(child, 2000);
}

function killAllNow(): void {
  for (const [child, { group }] of children) signal(child, 'SIGKILL', group);
}

process.once('exit', killAllNow);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(sig, () => {
    log(`${sig}: stopping every process started here`);
    void Promise.all([...children].map(([c, { group }]) => terminate(c, group))).finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------------------------
// /proc readings

/**
 * CPU time (user + system) of a process, all its threads, or of one thread (`tid`; the main
 * thread's id is the pid), in seconds; null when it is gone.
 */
function cpuSeconds(pid: number, tid?: number): number | null {
  try {
    const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return null;
  }
}

/** Starts measuring a server's CPU use; the returned function gives % of one core since then. */
function cpuProbe(pid: number): () => { total: number; main: number } {
  const t0 = performance.now();
  const total0 = cpuSeconds(pid) ?? 0;
  const main0 = cpuSeconds(pid, pid) ?? 0;
  return () => {
    const wall = Math.max(0.001, (performance.now() - t0) / 1000);
    return {
      total: (((cpuSeconds(pid) ?? total0) - total0) / wall) * 100,
      main: (((cpuSeconds(pid, pid) ?? main0) - main0) / wall) * 100,
    };
  };
}

/** Peak resident set size (VmHWM) of a process, kB. */
function peakRssKb(pid: number): number {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Servers

interface Target {
  name: string;
  /** The service URL (`.../service.asmx`). */
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** A bench server script of ours (ceiling, peer) in its own process group; waits for `{"url"}`. */
async function spawnScript(name: string, file: string, env: Record<string, string> = {}): Promise<Target> {
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  track(child, true);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`${name}: not ready after 60 s`)), 60_000);
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        for (const line of out.split('\n')) {
          if (!line.startsWith('{')) continue;
          try {
            const parsed = JSON.parse(line) as { url?: unknown };
            if (typeof parsed.url === 'string') {
              clearTimeout(timer);
              resolve(parsed.url);
            }
          } catch {
            // partial line
          }
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${name}: exited (${code}) before it was ready`));
      });
      child.once('error', reject);
    });
    child.stdout!.resume();
    return { name, url: loopback(url), pid: child.pid!, stop: () => terminate(child, true) };
  } catch (err) {
    await terminate(child, true);
    throw err;
  }
}

/** The gateway through bench/lib/server.ts, with the provider created through the admin API. */
async function startOurs(): Promise<Target & { server: BenchServer }> {
  const server = await startServer({ SQLITE_SYNCHRONOUS: 'FULL' });
  const child = server.child;
  track(child, false);
  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (exited(child)) return; // crashed: server.stop() would wait for an exit already seen
      const done = server.stop();
      if (!(await Promise.race([done.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 15_000))]))) {
        signal(child, 'SIGKILL', false);
        await done;
      }
    })();
    return stopping;
  };
  try {
    loopback(server.serviceUrl);
    loopback(server.adminUrl);
    const created = await server.admin('POST', '/admin/providers', { systemUser: USER, password: PASSWORD });
    if ((created as { systemUser?: unknown } | null)?.systemUser !== USER) {
      throw new Error(`creating the provider failed: ${JSON.stringify(created)}`);
    }
    return { name: 'ours', url: server.serviceUrl, pid: child.pid!, server, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Logs in once over SOAP 1.1 and returns the `ASP.NET_SessionId=...` cookie. */
async function login(url: string): Promise<string> {
  const body =
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>` +
    `<Login xmlns="${NS}"><SystemUser>${USER}</SystemUser><Password>${PASSWORD}</Password></Login></soap:Body></soap:Envelope>`;
  const res = await fetch(loopback(url), {
    method: 'POST',
    headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NS}Login"` },
    body,
  });
  const text = await res.text();
  const cookie = /ASP\.NET_SessionId=[^;,\s]+/.exec(res.headers.get('set-cookie') ?? '')?.[0];
  if (!res.ok || !text.includes('<LoginResult>true</LoginResult>') || cookie === undefined) {
    throw new Error(`Login failed (${res.status}): ${text.slice(0, 300)}`);
  }
  return cookie;
}

// ---------------------------------------------------------------------------------------------
// Load generators

interface Measurement {
  reqPerSec: number;
  p50: number;
  p99: number;
  errors: number;
  /** What the errors are, when there are any. */
  errorDetail: string;
  /** CPU used during the run, % of one core: the server (all threads; its main thread) and the load generator. */
  serverCpu: number;
  serverMainCpu: number;
  loadCpu: number;
  /** When the row is the median of several runs: each run's p99, in run order. */
  p99Runs?: number[];
}

/**
 * Runs `measure` `n` times on the same server and keeps the run with the median p99. p99 at a
 * paced rate varies 3-4x between back-to-back 10 s runs on this 2-core box; one run is a draw.
 */
async function medianP99(n: number, measure: () => Promise<Measurement>): Promise<Measurement> {
  const runs: Measurement[] = [];
  for (let i = 0; i < n; i++) runs.push(await measure());
  const median = [...runs].sort((a, b) => a.p99 - b.p99)[Math.floor(n / 2)]!;
  return { ...median, p99Runs: runs.map((m) => m.p99) };
}

let runNo = 0;
/** Every load run gets its own range of event numbers (10^8 apart), so no event is ever resent. */
const nextSeed = (): number => ++runNo * 100_000_000;

/** Samples a process's CPU time while it runs (wrk: its /proc entry is gone once it exits). */
function sampleCpu(pid: number): { stop(): { seconds: number; over: number } } {
  const start = Date.now();
  let last = { seconds: 0, at: start };
  const timer = setInterval(() => {
    const s = cpuSeconds(pid);
    if (s !== null) last = { seconds: s, at: Date.now() };
  }, 200);
  return {
    stop: () => {
      clearInterval(timer);
      return { seconds: last.seconds, over: Math.max(0.001, (last.at - start) / 1000) };
    },
  };
}

async function wrk(
  target: Target,
  script: string,
  opts: { path?: string; args?: string[]; seconds: number },
): Promise<Measurement> {
  const serverCpu = cpuProbe(target.pid);
  let child: ChildProcess | undefined;
  let sampler: ReturnType<typeof sampleCpu> | null = null;
  const r = await runWrk({
    url: loopback(target.url + (opts.path ?? '')),
    script,
    seconds: opts.seconds,
    connections: CONNECTIONS,
    seed: nextSeed(),
    args: opts.args ?? [],
    detached: true,
    wrk: WRK,
    onSpawn: (c) => {
      child = c;
      track(c, true);
      sampler = c.pid === undefined ? null : sampleCpu(c.pid);
    },
  }).finally(() => {
    if (child !== undefined) terminate(child, true);
  });
  const server = serverCpu();
  const load = (sampler as ReturnType<typeof sampleCpu> | null)?.stop() ?? { seconds: 0, over: 1 };

  const { reqPerSec, p50, p99, checked, bad, late, non2xx, socketErrors } = r;
  if (r.code !== 0 || reqPerSec === null || p50 === null || p99 === null || checked === null || bad === null) {
    throw new Error(`wrk ${script} failed (exit ${r.code}):\n${r.stdout}${r.stderr}`);
  }
  const parts = [
    socketErrors > 0 ? `socket ${r.socketDetail}` : '',
    non2xx > 0 ? `non-2xx ${non2xx}` : '',
    bad > 0 ? `2xx without the expected result ${bad} of ${checked}` : '',
    late !== null && late > 0 ? `${late} requests sent more than 1 ms after their slot (no free connection; not an error)` : '',
    r.stderr.trim() ? `wrk stderr: ${r.stderr.trim().split('\n').slice(0, 3).join(' / ')}` : '',
  ].filter(Boolean);
  return {
    reqPerSec,
    p50,
    p99,
    errors: socketErrors + non2xx + bad,
    errorDetail: parts.join('; '),
    serverCpu: server.total,
    serverMainCpu: server.main,
    loadCpu: (load.seconds / load.over) * 100,
  };
}

const soap11Insert = (i: number): string =>
  `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>` +
  `<LoginYInsertarEvento xmlns="${NS}"><SystemUser>${USER}</SystemUser><Password>${PASSWORD}</Password>` +
  `<Dominio>AB${i % 5000}CD</Dominio><NroSerie>SN</NroSerie><Codigo>${i}</Codigo><Latitud>-34.6037221</Latitud>` +
  `<Longitud>-58.3815704</Longitud><Altitud>25</Altitud><Velocidad>42.5</Velocidad>` +
  `<FechaHoraEvento>2026-11-22T08:59:30.${String(i % 1000).padStart(3, '0')}-03:00</FechaHoraEvento>` +
  `<FechaHoraRecepcion>2026-11-22T09:00:00-03:00</FechaHoraRecepcion></LoginYInsertarEvento></soap:Body></soap:Envelope>`;

/**
 * SOAP 1.1 LoginYInsertarEvento paced at `rate` req/s overall (autocannon, in this process).
 *
 * autocannon paces per connection and per second: each connection sends its quota
 * (rate / connections) back to back when the second starts, then idles until the next second, so
 * the load arrives in bursts. Its coordinated-omission correction is also off by a unit with a
 * rate (it assumes one request per ms per connection, `ceil(1 / rate)`, and adds L-1 synthetic
 * samples to every L-ms response), so it is disabled here: these are the raw response times.
 */
async function pacedSoap11(target: Target, rate: number): Promise<Measurement> {
  let i = nextSeed();
  let bad = 0;
  let checked = 0;
  const serverCpu = cpuProbe(target.pid);
  const own0 = process.cpuUsage();
  const t0 = Date.now();
  const result = await autocannon({
    url: loopback(target.url),
    connections: CONNECTIONS,
    duration: DURATION,
    overallRate: rate,
    ignoreCoordinatedOmission: true,
    method: 'POST',
    headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NS}LoginYInsertarEvento"` },
    requests: [
      {
        setupRequest: (req) => ({ ...req, body: soap11Insert(++i) }),
        onResponse: (status, body) => {
          if (status < 200 || status >= 300) return;
          checked++;
          if (!/>[1-9]\d*<\//.test(body)) bad++;
        },
      },
    ],
  });
  const wall = (Date.now() - t0) / 1000;
  const own = process.cpuUsage(own0);
  const server = serverCpu();
  const parts = [
    result.errors > 0 ? `socket ${result.errors}` : '',
    result.timeouts > 0 ? `timeouts ${result.timeouts}` : '',
    result.non2xx > 0 ? `non-2xx ${result.non2xx}` : '',
    bad > 0 ? `2xx without a positive id ${bad} of ${checked}` : '',
  ].filter(Boolean);
  return {
    reqPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx + bad,
    errorDetail: parts.join('; '),
    serverCpu: server.total,
    serverMainCpu: server.main,
    loadCpu: ((own.user + own.system) / 1e6 / wall) * 100,
  };
}

// ---------------------------------------------------------------------------------------------
// Rows

interface Row {
  server: 'ceiling' | 'peer' | 'ours';
  scenario: string;
  /** Events per request for the rows that store events (null: not an insert). */
  eventsPerRequest: number | null;
  loadGen: string;
  m?: Measurement;
  rssKb?: number;
  failure?: string;
}

const rows: Row[] = [];

/**
 * Starts a fresh server, runs a warm-up and the measured run, reads the server's peak RSS and
 * stops the server, whatever happens. A failing row is recorded and the next one runs.
 */
async function row(
  r: Omit<Row, 'm' | 'rssKb' | 'failure'>,
  start: () => Promise<Target>,
  measure: (t: Target) => Promise<Measurement>,
  warmUp: (t: Target) => Promise<unknown>,
): Promise<Row> {
  const out: Row = { ...r };
  rows.push(out);
  log(`${r.server}: ${r.scenario}`);
  let target: Target | null = null;
  try {
    target = await start();
    await warmUp(target);
    out.m = await measure(target);
    out.rssKb = peakRssKb(target.pid);
    log(`  ${Math.round(out.m.reqPerSec)} req/s, p50 ${out.m.p50} ms, p99 ${out.m.p99} ms, errors ${out.m.errors}, server CPU ${Math.round(out.m.serverCpu)}% (main thread ${Math.round(out.m.serverMainCpu)}%), load generator CPU ${Math.round(out.m.loadCpu)}%`);
  } catch (err) {
    out.failure = err instanceof Error ? err.message : String(err);
    log(`  FAILED: ${out.failure}`);
  } finally {
    if (target) await target.stop();
  }
  return out;
}

const wrkRow = (script: string, extra: { path?: string; args?: (t: Target) => Promise<string[]> } = {}) => ({
  measure: async (t: Target) => wrk(t, script, { path: extra.path, args: extra.args ? await extra.args(t) : [], seconds: DURATION }),
  warmUp: async (t: Target) => wrk(t, script, { path: extra.path, args: extra.args ? await extra.args(t) : [], seconds: WARMUP }),
});

async function runAll(): Promise<{ paced?: Row; even?: Row; soap11?: Row; ceiling?: Row; peer?: Row }> {
  const single = wrkRow('soap11-insert.lua');
  const ceiling = await row(
    { server: 'ceiling', scenario: 'bare uWS: read body, fixed 397-byte reply (SOAP 1.1 LoginYInsertarEvento body)', eventsPerRequest: null, loadGen: 'wrk' },
    () => spawnScript('ceiling', 'bench/ceiling/server.ts'),
    single.measure,
    single.warmUp,
  );
  const peer = await row(
    { server: 'peer', scenario: 'node-soap 1.13, our WSDL, in-memory: SOAP 1.1 LoginYInsertarEvento', eventsPerRequest: null, loadGen: 'wrk' },
    () => spawnScript('peer', 'bench/peer/server.ts', { PEER_USER: USER, PEER_PASSWORD: PASSWORD }),
    single.measure,
    single.warmUp,
  );
  const soap11 = await row(
    { server: 'ours', scenario: 'SOAP 1.1 LoginYInsertarEvento', eventsPerRequest: 1, loadGen: 'wrk' },
    startOurs,
    single.measure,
    single.warmUp,
  );
  const s12 = wrkRow('soap12-insert.lua');
  await row({ server: 'ours', scenario: 'SOAP 1.2 LoginYInsertarEvento', eventsPerRequest: 1, loadGen: 'wrk' }, startOurs, s12.measure, s12.warmUp);
  const form = wrkRow('form-insert.lua', { path: '/LoginYInsertarEvento' });
  await row({ server: 'ours', scenario: 'HTTP POST form LoginYInsertarEvento', eventsPerRequest: 1, loadGen: 'wrk' }, startOurs, form.measure, form.warmUp);
  // One Login per server; the cookie is reused by the warm-up and the measured run.
  const cookies = new Map<string, Promise<string>>();
  const cookieFor = (t: Target): Promise<string> => {
    let c = cookies.get(t.url);
    if (!c) cookies.set(t.url, (c = login(t.url)));
    return c;
  };
  const session = wrkRow('session-insert.lua', { args: async (t) => [await cookieFor(t)] });
  await row({ server: 'ours', scenario: 'InsertarEvento with a session cookie (SOAP 1.1, one Login)', eventsPerRequest: 1, loadGen: 'wrk' }, startOurs, session.measure, session.warmUp);
  const batch = wrkRow('batch-insert.lua', { args: () => Promise.resolve(['100']) });
  await row({ server: 'ours', scenario: 'LoginYInsertarEventos ×100 (SOAP 1.1)', eventsPerRequest: 100, loadGen: 'wrk' }, startOurs, batch.measure, batch.warmUp);
  const comando = wrkRow('obtener-comando.lua');
  await row(
    { server: 'ours', scenario: 'LoginYObtenerComando (SOAP 1.1, one command queued)', eventsPerRequest: null, loadGen: 'wrk' },
    async () => {
      const t = await startOurs();
      try {
        const queued = (await t.server.admin('POST', `/admin/providers/${USER}/commands`, { cmd: 'CC', unidad: 'AB123CD', equipo: '42' })) as { numero?: unknown } | null;
        if (typeof queued?.numero !== 'number') throw new Error(`queueing a command failed: ${JSON.stringify(queued)}`);
        return t;
      } catch (err) {
        await t.stop();
        throw err;
      }
    },
    comando.measure,
    comando.warmUp,
  );
  const max = soap11.m?.reqPerSec;
  if (max === undefined) return { soap11, ceiling, peer };
  const rate = Math.max(1, Math.round(max * 0.7));
  const paced = await row(
    { server: 'ours', scenario: `SOAP 1.1 LoginYInsertarEvento at 70% of max (${rate} req/s offered)`, eventsPerRequest: 1, loadGen: 'autocannon' },
    startOurs,
    (t) => pacedSoap11(t, rate),
    single.warmUp,
  );
  // wrk with a Lua schedule (delay()) spreading the same rate evenly over time, as wrk2 would.
  const even = await row(
    { server: 'ours', scenario: `SOAP 1.1 LoginYInsertarEvento at 70% of max, evenly spaced (${rate} req/s offered; the run with the median p99 of ${PACED_RUNS})`, eventsPerRequest: 1, loadGen: 'wrk, paced' },
    startOurs,
    (t) => medianP99(PACED_RUNS, () => wrk(t, 'soap11-insert-paced.lua', { args: [String(rate)], seconds: DURATION })),
    single.warmUp,
  );
  return { paced, even, soap11, ceiling, peer };
}

// ---------------------------------------------------------------------------------------------
// Report

const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US');
const fmtMs = (n: number): string => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const load = (): string => os.loadavg().map((l) => l.toFixed(2)).join(' / ');

function wrkVersion(): string {
  try {
    execFileSync(WRK, ['-v'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    // `wrk -v` prints its version and exits 1
    const out = (err as { stdout?: unknown }).stdout;
    if (typeof out === 'string') return out.split('\n')[0]?.replace(/\s*Copyright.*$/, '') ?? 'wrk';
  }
  return 'wrk';
}

async function main(): Promise<number> {
  const startedAt = new Date();
  const loadStart = load();
  const cpus = os.cpus();
  const wrkV = wrkVersion();
  log(`DURATION=${DURATION}s WARMUP=${WARMUP}s CONNECTIONS=${CONNECTIONS}; load average at start ${loadStart}`);
  const { paced, even, soap11, ceiling, peer } = await runAll();
  const loadEnd = load();

  const lines: string[] = [];
  lines.push(`## Gateway vs peer vs ceiling — ${startedAt.toISOString()}`);
  lines.push('');
  lines.push(
    `Machine: ${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
      `${os.type()} ${os.release()}, Node.js ${process.version}, ${wrkV}, autocannon 9. ` +
      `Load average (1/5/15 min) at start ${loadStart}, at end ${loadEnd}.`,
  );
  lines.push(
    `Each row: a fresh server process, ${WARMUP} s warm-up, then ${DURATION} s measured with ${CONNECTIONS} connections ` +
      `(\`wrk -t1 -c${CONNECTIONS} -d${DURATION}s --latency\`, one thread; the 70% rows: autocannon with overallRate, ` +
      `and wrk with a Lua schedule spacing the same rate evenly). ` +
      `Every event distinct. Load generator and server share the same cores: compare ratios within this run.`,
  );
  lines.push('');
  lines.push('| server | scenario | req/s | events/s | p50 ms | p99 ms | errors | server peak RSS MB | server CPU % (main thread) | load-gen CPU % |');
  lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  const notes: string[] = [];
  for (const r of rows) {
    if (!r.m) {
      lines.push(`| ${r.server} | ${r.scenario} | failed | | | | | | | |`);
      notes.push(`${r.server} / ${r.scenario}: ${r.failure ?? 'no measurement'}`);
      continue;
    }
    const m = r.m;
    lines.push(
      `| ${r.server} | ${r.scenario} | ${fmtInt(m.reqPerSec)} | ${r.eventsPerRequest === null ? '—' : fmtInt(m.reqPerSec * r.eventsPerRequest)} | ` +
        `${fmtMs(m.p50)} | ${fmtMs(m.p99)} | ${fmtInt(m.errors)} | ${((r.rssKb ?? 0) / 1024).toFixed(0)} | ${m.serverCpu.toFixed(0)} (${m.serverMainCpu.toFixed(0)}) | ${m.loadCpu.toFixed(0)} (${r.loadGen}) |`,
    );
    if (m.errorDetail) notes.push(`${r.server} / ${r.scenario}: ${m.errorDetail}`);
  }
  lines.push('');
  lines.push('Errors = socket errors + non-2xx + timeouts + 2xx answers without the expected result (a positive id; ×100 positive ids; a Comando).');
  lines.push("events/s only for rows that durably store events (ours; the peer keeps nothing). CPU % is of one core over the measured run (/proc): all the server's threads (its main thread, which runs JavaScript), and the load generator.");
  for (const n of notes) lines.push(`- ${n}`);
  lines.push('');

  const verdict = (ok: boolean): string => (ok ? '**met**' : '**NOT met**');
  const ours = soap11?.m?.reqPerSec;
  lines.push('Targets (SOAP 1.1 LoginYInsertarEvento):');
  lines.push('');
  let allMet = true;
  if (ours !== undefined && peer?.m) {
    const x = ours / peer.m.reqPerSec;
    allMet &&= x >= 10;
    lines.push(`- ours / peer = ${fmtInt(ours)} / ${fmtInt(peer.m.reqPerSec)} = ${x.toFixed(2)}x (target ≥ 10x): ${verdict(x >= 10)}`);
  } else {
    allMet = false;
    lines.push('- ours / peer: not measured');
  }
  if (ours !== undefined && ceiling?.m) {
    const x = ours / ceiling.m.reqPerSec;
    allMet &&= x >= 0.5;
    lines.push(`- ours / ceiling = ${fmtInt(ours)} / ${fmtInt(ceiling.m.reqPerSec)} = ${x.toFixed(2)}x (target ≥ 0.5x): ${verdict(x >= 0.5)}`);
  } else {
    allMet = false;
    lines.push('- ours / ceiling: not measured');
  }
  for (const [label, r] of [
    ['autocannon overallRate, per-second bursts', paced],
    ['wrk, evenly spaced', even],
  ] as const) {
    if (r?.m) {
      const ok = r.m.p99 <= 10 && r.m.errors === 0;
      allMet &&= ok;
      const runs = r.m.p99Runs ? `, the median of ${r.m.p99Runs.length} runs on one server: ${r.m.p99Runs.map(fmtMs).join(' / ')} ms` : '';
      lines.push(
        `- p99 at 70% of max (${label}) = ${fmtMs(r.m.p99)} ms at ${fmtInt(r.m.reqPerSec)} req/s achieved${runs} ` +
          `(target ≤ 10 ms${r.m.errors > 0 ? ', and no errors' : ''}): ${verdict(ok)}`,
      );
    } else {
      allMet = false;
      lines.push(`- p99 at 70% of max (${label}): not measured`);
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  log(allMet ? 'all targets met' : 'not every target met');
  return rows.some((r) => !r.m) ? 1 : 0;
}

main()
  .then((code) => {
    process.exitCode = code;
  })
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    killAllNow();
  });
