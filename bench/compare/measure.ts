/**
 * The load generators of `npm run bench` and what one run measures: wrk with the bench/wrk Lua
 * scripts (every event distinct, answers checked), autocannon for the per-second-burst 70% row,
 * and the server's CPU from /proc (all its threads) over the measured run.
 */
import type { ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { readServer, windowOf, type Window } from '../lib/meter.js';
import { cpuProbe, sampleCpu } from '../lib/proc.js';
import { loopback, terminate, track } from '../lib/processes.js';
import { runWrk } from '../lib/wrk.js';
import { CONNECTIONS, DURATION, NS, PASSWORD, USER, WRK } from './config.js';
import type { Target } from './servers.js';

export interface Measurement {
  reqPerSec: number;
  /** Requests answered in the run. */
  requests: number;
  p50: number;
  p99: number;
  errors: number;
  /** What the errors are, when there are any. */
  errorDetail: string;
  /** CPU used during the run, % of one core: the server (all threads; its main thread) and the load generator. */
  serverCpu: number;
  serverMainCpu: number;
  loadCpu: number;
  /** Server CPU (all threads) per 1,000 answered requests, ms. */
  cpuMsPer1000: number;
  /** When the row is the median of several runs: each run's p99, in run order. */
  p99Runs?: number[];
  /** The server over the run (bench/lib/meter.ts): CPU per request user/kernel, page faults per request, GC share, RSS. */
  window: Window;
}

let runNo = 0;
/** Every load run gets its own range of event numbers (10^8 apart), so no event is ever resent. */
const nextSeed = (): number => ++runNo * 100_000_000;

const per1000 = (cpuSeconds: number, requests: number): number => (requests > 0 ? (cpuSeconds * 1e6) / requests : NaN);

/** One wrk run (`-t1 -c$CONNECTIONS`) of a bench/wrk script against a server. */
export async function wrk(target: Target, script: string, opts: { path?: string; args?: string[]; seconds: number }): Promise<Measurement> {
  const serverCpu = cpuProbe(target.pid);
  const before = readServer(target.pid, target.gcFile);
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
    if (child !== undefined) void terminate(child, true);
  });
  const server = serverCpu();
  const after = readServer(target.pid, target.gcFile);
  const load = (sampler as ReturnType<typeof sampleCpu> | null)?.stop() ?? { seconds: 0, over: 1 };

  const { reqPerSec, requests, p50, p99, checked, bad, late, non2xx, socketErrors } = r;
  if (r.code !== 0 || reqPerSec === null || requests === null || p50 === null || p99 === null || checked === null || bad === null) {
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
    requests,
    p50,
    p99,
    errors: socketErrors + non2xx + bad,
    errorDetail: parts.join('; '),
    serverCpu: server.total,
    serverMainCpu: server.main,
    loadCpu: (load.seconds / load.over) * 100,
    cpuMsPer1000: per1000(server.seconds, requests),
    window: windowOf(before, after, requests),
  };
}

/**
 * Runs `measure` `n` times on the same server and keeps the run with the median p99. p99 at a
 * paced rate varies 3-4x between back-to-back 10 s runs on this 2-core box; one run is a draw.
 */
export async function medianP99(n: number, measure: () => Promise<Measurement>): Promise<Measurement> {
  const runs: Measurement[] = [];
  for (let i = 0; i < n; i++) runs.push(await measure());
  const median = [...runs].sort((a, b) => a.p99 - b.p99)[Math.floor(n / 2)]!;
  return { ...median, p99Runs: runs.map((m) => m.p99) };
}

/** Back-to-back wrk runs of `slice` seconds for `total` seconds: the warm-up curve (req/s per slice). */
export async function warmUpCurve(target: Target, script: string, total: number, slice: number): Promise<number[]> {
  const curve: number[] = [];
  for (let done = 0; done < total; done += slice) {
    curve.push((await wrk(target, script, { seconds: Math.min(slice, total - done) })).reqPerSec);
  }
  return curve;
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
export async function pacedSoap11(target: Target, rate: number): Promise<Measurement> {
  let i = nextSeed();
  let bad = 0;
  let checked = 0;
  const serverCpu = cpuProbe(target.pid);
  const before = readServer(target.pid, target.gcFile);
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
  const after = readServer(target.pid, target.gcFile);
  const parts = [
    result.errors > 0 ? `socket ${result.errors}` : '',
    result.timeouts > 0 ? `timeouts ${result.timeouts}` : '',
    result.non2xx > 0 ? `non-2xx ${result.non2xx}` : '',
    bad > 0 ? `2xx without a positive id ${bad} of ${checked}` : '',
  ].filter(Boolean);
  return {
    reqPerSec: result.requests.average,
    requests: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx + bad,
    errorDetail: parts.join('; '),
    serverCpu: server.total,
    serverMainCpu: server.main,
    loadCpu: ((own.user + own.system) / 1e6 / wall) * 100,
    cpuMsPer1000: per1000(server.seconds, result.requests.total),
    window: windowOf(before, after, result.requests.total),
  };
}
