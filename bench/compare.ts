/**
 * `npm run bench`: one table comparing the gateway with the machine's ceiling and the peers, all
 * on the same box in one run (so the figures are ratios within the run, not absolutes):
 *
 * - ceiling: a bare uWebSockets.js server that reads the body and sends a fixed reply of our size
 *   (bench/ceiling/server.ts);
 * - peers, each serving our WSDL with an in-memory LoginYInsertarEvento (an incrementing counter
 *   after a credential compare), built on demand and cached (bench/peers/):
 *   gSOAP (wsdl2h + soapcpp2, C++, one thread and a 2-thread pool), Apache CXF (wsdl2java -server,
 *   Jetty transport, measured after a JIT warm-up shown as a curve) and node-soap;
 * - ours: the gateway as `npm start` runs it (embedded store, durable acknowledgements,
 *   SQLITE_SYNCHRONOUS=FULL), one fresh server per row: SOAP 1.1, SOAP 1.2 and HTTP POST
 *   LoginYInsertarEvento, InsertarEvento on a session cookie, LoginYInsertarEventos ×100,
 *   LoginYObtenerComando; and SOAP 1.1 LoginYInsertarEvento paced at 70% of its measured maximum,
 *   with autocannon `overallRate` (per-second bursts) and with wrk and a Lua schedule spacing the
 *   same rate evenly (PACED_RUNS times on one server, the run with the median p99 reported).
 *
 * Then the goal lines (compare/report.ts: ours against the fastest peer and the ceiling), met or not. Parts: compare/config.ts (knobs), servers.ts,
 * measure.ts (wrk, autocannon, /proc CPU), scenarios.ts (the rows), report.ts.
 *
 * Run: npm run bench   (env DURATION=10, CONNECTIONS=50, WARMUP=3 seconds, PACED_RUNS=5,
 *      BENCH_PEERS=gsoap,cxf,node-soap (default all; `none`), CXF_WARMUP=90, CXF_SLICE=10, WRK=path)
 * Progress goes to stderr; the machine, the table and the goals to stdout. Only 127.0.0.1 is ever
 * contacted, and every process started here is stopped on the way out, failure or not.
 */
import { killAllNow, stopChildrenOnExit } from './lib/processes.js';
import { CONNECTIONS, DURATION, log, PEERS, WARMUP } from './compare/config.js';
import { loadAverage, report, wrkVersion } from './compare/report.js';
import { runAll, type Row } from './compare/scenarios.js';
import { syncLatency } from './lib/fsync.js';

async function main(): Promise<number> {
  stopChildrenOnExit(log);
  const startedAt = new Date();
  const loadStart = loadAverage();
  const wrk = wrkVersion();
  log(`DURATION=${DURATION}s WARMUP=${WARMUP}s CONNECTIONS=${CONNECTIONS} peers: ${[...PEERS].join(', ') || 'none'}; load average at start ${loadStart}`);
  const rows: Row[] = [];
  const key = await runAll(rows);
  const sync = syncLatency();
  const { text, allMet } = report(rows, key, { startedAt, loadStart, loadEnd: loadAverage(), wrk, sync });
  process.stdout.write(text);
  log(allMet ? 'every goal met' : 'not every goal met');
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
