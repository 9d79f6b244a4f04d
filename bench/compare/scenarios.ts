/**
 * The rows of `npm run bench`: which server, which scenario, warm-up and measurement. Every row
 * starts a fresh server process, checks one answer, warms it up, measures, reads its peak RSS and
 * stops it, whatever happens; a failing row is recorded and the next one runs.
 */
import { peakRssKb } from '../lib/proc.js';
import { spawn } from 'node:child_process';
import { terminate, track } from '../lib/processes.js';
import { CONNECTIONS, CXF_SLICE, CXF_WARMUP, DURATION, log, NEIGHBOUR, PACED_RUNS, PEERS, USER, WARMUP } from './config.js';
import { medianP99, pacedSoap11, warmUpCurve, wrk, type Measurement } from './measure.js';
import { checkAnswers, login, startCeiling, startCxf, startGsoap, startNodeSoap, startOurs, startOursTls, type Target } from './servers.js';
import { errorMessage } from '../../shared/util/error-message.js';

export type Role = 'ceiling' | 'peer' | 'ours';

export interface Row {
  role: Role;
  /** Who serves: `uWebSockets.js`, `gSOAP 2.8, 2-thread pool`, `ours`… */
  server: string;
  /** The goal's reference peer (gSOAP with its thread pool) is marked. */
  goalPeer?: boolean;
  /** gSOAP doing the same durable work as ours, the like-for-like reference (not a goal of issue 41). */
  sameWorkPeer?: boolean;
  scenario: string;
  /** Events per request for the rows that store events (null: not an insert, or not stored). */
  eventsPerRequest: number | null;
  loadGen: string;
  m?: Measurement;
  rssKb?: number;
  failure?: string;
  /** Warm-up slices' req/s before the measured run (CXF's JIT curve). */
  curve?: number[];
}

/** The rows the goal lines are computed from. */
export interface KeyRows {
  ceiling: Row;
  peers: Row[];
  soap11: Row;
  /** LoginYInsertarEventos ×100: the events/s goal. */
  batch?: Row;
  paced?: Row;
  even?: Row;
  /**
   * The ceiling and gSOAP's pool at the same evenly paced rate: the p99 this box and load generator
   * give a server that is nowhere near its limit (what part of ours is the harness's).
   */
  evenBaselines?: Row[];
  /** What TLS costs: keep-alive over TLS, and a new connection per request with and without TLS. */
  tls?: { keepAlive: Row; plainClose: Row; tlsClose: Row };
  /** The ceiling, gSOAP's pool and ours again, beside a process that keeps one core busy. */
  neighbour?: { ceiling: Row; pool?: Row; sameWork?: Row; ours: Row };
}

interface Plan {
  start: () => Promise<Target>;
  /** Checks one SOAP 1.1 LoginYInsertarEvento answer before any load (not for the ceiling, whose reply is fixed). */
  check?: boolean;
  warmUp: (t: Target, r: Row) => Promise<unknown>;
  measure: (t: Target) => Promise<Measurement>;
}

async function row(rows: Row[], r: Omit<Row, 'm' | 'rssKb' | 'failure'>, plan: Plan): Promise<Row> {
  const out: Row = { ...r };
  rows.push(out);
  log(`${r.server}: ${r.scenario}`);
  let target: Target | null = null;
  try {
    target = await plan.start();
    if (plan.check) await checkAnswers(target);
    await plan.warmUp(target, out);
    out.m = await plan.measure(target);
    out.rssKb = peakRssKb(target.pid);
    log(
      `  ${Math.round(out.m.reqPerSec)} req/s, p50 ${out.m.p50} ms, p99 ${out.m.p99} ms, errors ${out.m.errors}, ` +
        `server CPU ${Math.round(out.m.serverCpu)}% (main thread ${Math.round(out.m.serverMainCpu)}%), ` +
        `${out.m.cpuMsPer1000.toFixed(1)} ms CPU per 1000 requests, load generator CPU ${Math.round(out.m.loadCpu)}%`,
    );
  } catch (err) {
    out.failure = errorMessage(err);
    log(`  FAILED: ${out.failure}`);
  } finally {
    if (target) await target.stop();
  }
  return out;
}

/** A wrk scenario: WARMUP seconds, then DURATION seconds measured. */
function wrkPlan(start: () => Promise<Target>, script: string, extra: { path?: string; args?: (t: Target) => Promise<string[]>; check?: boolean } = {}): Plan {
  const run = async (t: Target, seconds: number) => wrk(t, script, { path: extra.path, args: extra.args ? await extra.args(t) : [], seconds });
  return { start, check: extra.check ?? true, warmUp: (t) => run(t, WARMUP), measure: (t) => run(t, DURATION) };
}

const SOAP11_INSERT = 'SOAP 1.1 LoginYInsertarEvento';

/**
 * gSOAP doing the same work as ours: each event inserted into the same SQLite table (FULL, group
 * commit on a thread of its own) before its answer. A pool of 2 commits 2 events at a time; a thread
 * per connection lets a commit gather them all, gSOAP's best case for durable inserts. Run after
 * ours, so that their disk traffic cannot reach ours' rows: in the first run, with them before,
 * ours' row right after them measured 21,374 req/s against 31,000-36,000 for its other inserts
 * (bench/LOG.md 2026-11-29 07:00).
 */
async function sameWorkRows(rows: Row[]): Promise<Row[]> {
  if (!PEERS.has('gsoap')) return [];
  const scenario = `${SOAP11_INSERT}, our WSDL, each event stored in our SQLite table (FULL, group commit)`;
  const peers: Row[] = [];
  for (const threads of [2, CONNECTIONS]) {
    const r = { role: 'peer', server: `gSOAP 2.8, ${threads}-thread pool, durable`, sameWorkPeer: threads === CONNECTIONS, scenario, eventsPerRequest: 1, loadGen: 'wrk' } as const;
    peers.push(await row(rows, r, wrkPlan(() => startGsoap(threads, true), 'soap11-insert.lua')));
  }
  return peers;
}

async function peerRows(rows: Row[]): Promise<Row[]> {
  const peers: Row[] = [];
  const inMemory = `${SOAP11_INSERT}, our WSDL, in-memory counter`;
  if (PEERS.has('gsoap')) {
    for (const [threads, label] of [
      [0, 'gSOAP 2.8, 1 thread'],
      [2, 'gSOAP 2.8, 2-thread pool'],
      [CONNECTIONS, `gSOAP 2.8, ${CONNECTIONS}-thread pool`],
    ] as const) {
      const r = { role: 'peer', server: label, goalPeer: threads === 2, scenario: inMemory, eventsPerRequest: null, loadGen: 'wrk' } as const;
      peers.push(await row(rows, r, wrkPlan(() => startGsoap(threads), 'soap11-insert.lua')));
    }
  }
  if (PEERS.has('cxf')) {
    // The JIT needs a long warm-up: CXF_WARMUP seconds in slices (the curve), then the measured run.
    const plan = wrkPlan(startCxf, 'soap11-insert.lua');
    plan.warmUp = async (t, r) => {
      r.curve = await warmUpCurve(t, 'soap11-insert.lua', CXF_WARMUP, CXF_SLICE);
      log(`  JIT warm-up, req/s per ${CXF_SLICE} s slice: ${r.curve.map((x) => Math.round(x)).join(' / ')}`);
    };
    peers.push(
      await row(rows, { role: 'peer', server: 'Apache CXF 4.2 on Jetty 12', scenario: `${inMemory}, after ${CXF_WARMUP} s of JIT warm-up`, eventsPerRequest: null, loadGen: 'wrk' }, plan),
    );
  }
  if (PEERS.has('node-soap')) {
    peers.push(await row(rows, { role: 'peer', server: 'node-soap 1.13', scenario: inMemory, eventsPerRequest: null, loadGen: 'wrk' }, wrkPlan(startNodeSoap, 'soap11-insert.lua')));
  }
  return peers;
}

export async function runAll(rows: Row[]): Promise<KeyRows> {
  const ceiling = await row(
    rows,
    { role: 'ceiling', server: 'uWebSockets.js', scenario: `bare: read the body, fixed 397-byte reply (${SOAP11_INSERT} body)`, eventsPerRequest: null, loadGen: 'wrk' },
    wrkPlan(startCeiling, 'soap11-insert.lua', { check: false }),
  );
  const peers = await peerRows(rows);
  const ours = (scenario: string, eventsPerRequest: number | null, plan: Plan, loadGen = 'wrk'): Promise<Row> =>
    row(rows, { role: 'ours', server: 'ours', scenario, eventsPerRequest, loadGen }, plan);

  const soap11 = await ours(`${SOAP11_INSERT}, durable`, 1, wrkPlan(() => startOurs(), 'soap11-insert.lua'));
  // TLS (TLS_CERT_FILE): the same requests over HTTPS on kept-alive connections, then every request on
  // a new connection (Connection: close), plain and TLS: the second is new TLS connections per second.
  const tls = {
    keepAlive: await ours(`${SOAP11_INSERT} over TLS (keep-alive), durable`, 1, wrkPlan(startOursTls, 'soap11-insert.lua')),
    plainClose: await ours(`${SOAP11_INSERT}, a new connection per request (plain), durable`, 1, wrkPlan(() => startOurs(), 'soap11-insert-close.lua')),
    tlsClose: await ours(`${SOAP11_INSERT}, a new TLS connection (full handshake) per request, durable`, 1, wrkPlan(startOursTls, 'soap11-insert-close.lua')),
  };
  await ours('SOAP 1.2 LoginYInsertarEvento, durable', 1, wrkPlan(() => startOurs(), 'soap12-insert.lua'));
  await ours('HTTP POST form LoginYInsertarEvento, durable', 1, wrkPlan(() => startOurs(), 'form-insert.lua', { path: '/LoginYInsertarEvento' }));
  // One Login per server; the cookie is reused by the warm-up and the measured run.
  const cookies = new Map<string, Promise<string>>();
  const cookieFor = (t: Target): Promise<string> => {
    let c = cookies.get(t.url);
    if (!c) cookies.set(t.url, (c = login(t.url)));
    return c;
  };
  await ours('InsertarEvento with a session cookie (SOAP 1.1, one Login), durable', 1, wrkPlan(() => startOurs(), 'session-insert.lua', { args: async (t) => [await cookieFor(t)] }));
  const batch = await ours('LoginYInsertarEventos ×100 (SOAP 1.1), durable', 100, wrkPlan(() => startOurs(), 'batch-insert.lua', { args: () => Promise.resolve(['100']) }));
  const withCommand = async (): Promise<Target> => {
    const t = await startOurs();
    try {
      const queued = (await t.server.admin('POST', `/admin/providers/${USER}/commands`, { cmd: 'CC', unidad: 'AB123CD', equipo: '42' })) as { numero?: unknown } | null;
      if (typeof queued?.numero !== 'number') throw new Error(`queueing a command failed: ${JSON.stringify(queued)}`);
      return t;
    } catch (err) {
      await t.stop();
      throw err;
    }
  };
  await ours('LoginYObtenerComando (SOAP 1.1, one command queued)', null, wrkPlan(withCommand, 'obtener-comando.lua'));

  const max = soap11.m?.reqPerSec;
  if (max === undefined) return { ceiling, peers, soap11, batch, tls };
  const rate = Math.max(1, Math.round(max * 0.7));
  const warmUp = (t: Target): Promise<Measurement> => wrk(t, 'soap11-insert.lua', { seconds: WARMUP });
  const paced = await ours(
    `${SOAP11_INSERT} at 70% of max (${rate} req/s offered), durable`,
    1,
    { start: () => startOurs(), check: true, warmUp, measure: (t) => pacedSoap11(t, rate) },
    'autocannon',
  );
  // wrk with a Lua schedule (delay()) spreading the same rate evenly over time, as wrk2 would.
  const even = await ours(
    `${SOAP11_INSERT} at 70% of max, evenly spaced (${rate} req/s offered; the run with the median p99 of ${PACED_RUNS}), durable`,
    1,
    { start: () => startOurs(), check: true, warmUp, measure: (t) => medianP99(PACED_RUNS, () => wrk(t, 'soap11-insert-paced.lua', { args: [String(rate)], seconds: DURATION })) },
    'wrk, paced',
  );
  const evenBaselines: Row[] = [];
  const evenly = (start: () => Promise<Target>, check: boolean): Plan => ({
    start,
    check,
    warmUp,
    measure: (t) => medianP99(PACED_RUNS, () => wrk(t, 'soap11-insert-paced.lua', { args: [String(rate)], seconds: DURATION })),
  });
  const sameRate = `${SOAP11_INSERT} at our 70% rate, evenly spaced (${rate} req/s offered; median p99 of ${PACED_RUNS})`;
  evenBaselines.push(await row(rows, { role: 'ceiling', server: 'uWebSockets.js', scenario: `bare, ${sameRate}`, eventsPerRequest: null, loadGen: 'wrk, paced' }, evenly(startCeiling, false)));
  if (PEERS.has('gsoap')) {
    evenBaselines.push(
      await row(rows, { role: 'peer', server: 'gSOAP 2.8, 2-thread pool', scenario: `in-memory, ${sameRate}`, eventsPerRequest: null, loadGen: 'wrk, paced' }, evenly(() => startGsoap(2), true)),
    );
  }
  peers.push(...(await sameWorkRows(rows)));
  const neighbour = NEIGHBOUR ? await besideANeighbour(rows) : undefined;
  return { ceiling, peers, soap11, batch, paced, even, evenBaselines, tls, ...(neighbour === undefined ? {} : { neighbour }) };
}

/**
 * The three rows the goals compare, measured again while another process keeps one core busy (a
 * busy loop in its own process, as a build or another tenant would): a box is rarely ours alone,
 * and the ratios must hold there too.
 */
async function besideANeighbour(rows: Row[]): Promise<NonNullable<KeyRows['neighbour']>> {
  const busy = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore', detached: true });
  track(busy, true);
  const beside = ' beside a CPU-bound neighbour';
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const ceiling = await row(
      rows,
      { role: 'ceiling', server: 'uWebSockets.js', scenario: `bare, fixed reply,${beside}`, eventsPerRequest: null, loadGen: 'wrk' },
      wrkPlan(startCeiling, 'soap11-insert.lua', { check: false }),
    );
    const pool = PEERS.has('gsoap')
      ? await row(rows, { role: 'peer', server: 'gSOAP 2.8, 2-thread pool', scenario: `in-memory counter,${beside}`, eventsPerRequest: null, loadGen: 'wrk' }, wrkPlan(() => startGsoap(2), 'soap11-insert.lua'))
      : undefined;
    const ours = await row(rows, { role: 'ours', server: 'ours', scenario: `${SOAP11_INSERT}, durable,${beside}`, eventsPerRequest: 1, loadGen: 'wrk' }, wrkPlan(() => startOurs(), 'soap11-insert.lua'));
    const sameWork = PEERS.has('gsoap')
      ? await row(
          rows,
          { role: 'peer', server: `gSOAP 2.8, ${CONNECTIONS}-thread pool, durable`, sameWorkPeer: true, scenario: `stored in our SQLite table,${beside}`, eventsPerRequest: 1, loadGen: 'wrk' },
          wrkPlan(() => startGsoap(CONNECTIONS, true), 'soap11-insert.lua'),
        )
      : undefined;
    return { ceiling, ours, ...(pool === undefined ? {} : { pool }), ...(sameWork === undefined ? {} : { sameWork }) };
  } finally {
    await terminate(busy, true);
  }
}
