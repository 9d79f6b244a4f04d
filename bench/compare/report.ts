/** `npm run bench`'s report: the machine, one table of every row, and the goal lines (met or not). */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { CONNECTIONS, CXF_SLICE, DURATION, PEERS, WARMUP, WRK } from './config.js';
import type { SyncLatency } from '../lib/fsync.js';
import { defaultGatewayThreads } from '../../shared/config/index.js';
import type { KeyRows, Row } from './scenarios.js';

const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US');
const fmtMs = (n: number): string => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const fmtX = (n: number): string => `${n.toFixed(2)}x`;
export const loadAverage = (): string => os.loadavg().map((l) => l.toFixed(2)).join(' / ');

export function wrkVersion(): string {
  try {
    execFileSync(WRK, ['-v'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    // `wrk -v` prints its version and exits 1
    const out = (err as { stdout?: unknown }).stdout;
    if (typeof out === 'string') return out.split('\n')[0]?.replace(/\s*Copyright.*$/, '') ?? 'wrk';
  }
  return 'wrk';
}

/** The fastest peer measured in this run (by req/s), if any. */
export function fastestPeer(peers: Row[]): (Row & { m: NonNullable<Row['m']> }) | undefined {
  let best: (Row & { m: NonNullable<Row['m']> }) | undefined;
  for (const p of peers) if (p.m && (!best || p.m.reqPerSec > best.m.reqPerSec)) best = p as Row & { m: NonNullable<Row['m']> };
  return best;
}

function table(rows: Row[], key: KeyRows): { lines: string[]; notes: string[] } {
  const ceiling = key.ceiling.m;
  const fastest = fastestPeer(key.peers);
  const lines = [
    '| server | scenario | req/s | events/s | p50 ms | p99 ms | errors | server peak RSS MB | server CPU % (main thread) | server CPU µs per req (user + kernel) | page faults per req | GC share of the main thread | req/s ÷ ceiling | req/s ÷ fastest peer | CPU per req ÷ ceiling | load-gen CPU % |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const notes: string[] = [];
  for (const r of rows) {
    if (!r.m) {
      lines.push(`| ${r.server} | ${r.scenario} | failed | | | | | | | | | | | | | |`);
      notes.push(`${r.server} / ${r.scenario}: ${r.failure ?? 'no measurement'}`);
      continue;
    }
    const m = r.m;
    // Ratios compare one request with one request: not for the ×100 batch.
    const single = r.eventsPerRequest === null || r.eventsPerRequest === 1;
    const ratio = (base: number | undefined): string => (single && base ? fmtX(m.reqPerSec / base) : '—');
    lines.push(
      `| ${r.server} | ${r.scenario} | ${fmtInt(m.reqPerSec)} | ${r.eventsPerRequest === null ? '—' : fmtInt(m.reqPerSec * r.eventsPerRequest)} | ` +
        `${fmtMs(m.p50)} | ${fmtMs(m.p99)} | ${fmtInt(m.errors)} | ${((r.rssKb ?? 0) / 1024).toFixed(0)} | ${m.serverCpu.toFixed(0)} (${m.serverMainCpu.toFixed(0)}) | ` +
        `${m.cpuMsPer1000.toFixed(1)} (${m.window.userUs.toFixed(1)} + ${m.window.systemUs.toFixed(1)}) | ${m.window.faultsPerRequest.toFixed(3)} | ` +
        `${m.window.gcShare === null ? '—' : `${(m.window.gcShare * 100).toFixed(1)}%`} | ${ratio(ceiling?.reqPerSec)} | ${ratio(fastest?.m.reqPerSec)} | ` +
        `${single && ceiling ? fmtX(m.cpuMsPer1000 / ceiling.cpuMsPer1000) : '—'} | ${m.loadCpu.toFixed(0)} (${r.loadGen}) |`,
    );
    if (m.errorDetail) notes.push(`${r.server} / ${r.scenario}: ${m.errorDetail}`);
    if (r.curve) notes.push(`${r.server}: JIT warm-up, req/s per ${CXF_SLICE} s slice: ${r.curve.map(fmtInt).join(' → ')} → measured ${fmtInt(m.reqPerSec)}`);
  }
  return { lines, notes };
}

function goals(key: KeyRows, sync: SyncLatency): { lines: string[]; allMet: boolean } {
  const verdict = (ok: boolean): string => (ok ? '**met**' : '**NOT met**');
  const lines: string[] = [];
  let allMet = true;
  const goal = (ok: boolean | null, text: string): void => {
    if (ok === null) {
      allMet = false;
      lines.push(`- ${text}: **not measured**`);
      return;
    }
    allMet &&= ok;
    lines.push(`- ${text}: ${verdict(ok)}`);
  };
  // Ours against gSOAP doing the same durable work (server.cpp's Store): what the goals' peer, which stores nothing, leaves out.
  const sameWorkLine = (when: string, peerRow: Row | undefined, oursRow: Row | undefined): void => {
    const peer = peerRow?.m;
    const ours = oursRow?.m;
    if (!peer || !ours) return;
    lines.push(
      `- for reference, not a goal: ${when}the same durable work, ours / gSOAP storing each event in our SQLite table with group commit (a thread per connection, its best case) = ${fmtInt(ours.reqPerSec)} / ${fmtInt(peer.reqPerSec)} req/s = ${fmtX(ours.reqPerSec / peer.reqPerSec)}; CPU per request ${ours.cpuMsPer1000.toFixed(1)} / ${peer.cpuMsPer1000.toFixed(1)} µs = ${fmtX(ours.cpuMsPer1000 / peer.cpuMsPer1000)}`,
    );
  };
  const fastest = fastestPeer(key.peers);
  const gsoapPool = key.peers.find((p) => p.goalPeer === true);
  const poolNote = !PEERS.has('gsoap') ? ' (gSOAP not run: BENCH_PEERS leaves it out)' : gsoapPool?.m ? '' : ' (gSOAP with its thread pool failed)';
  // The same three ratios quiet and beside a CPU-bound neighbour: ours against gSOAP's pool (req/s
  // and CPU per request) and against the ceiling.
  const ratioGoals = (when: string, ceilingRow: Row | undefined, poolRow: Row | undefined, oursRow: Row | undefined): void => {
    const ours = oursRow?.m;
    const pool = poolRow?.m;
    const ceiling = ceilingRow?.m;
    if (ours && pool) {
      const x = ours.reqPerSec / pool.reqPerSec;
      goal(x >= 1.3, `${when}SOAP 1.1 LoginYInsertarEvento, durable: ours / gSOAP's 2-thread pool = ${fmtInt(ours.reqPerSec)} / ${fmtInt(pool.reqPerSec)} req/s = ${fmtX(x)} (goal ≥ 1.3x)`);
      const c = ours.cpuMsPer1000 / pool.cpuMsPer1000;
      goal(c <= 1, `${when}server CPU per durable insert, ours / gSOAP's pool (in memory) = ${(ours.cpuMsPer1000).toFixed(1)} / ${pool.cpuMsPer1000.toFixed(1)} µs = ${fmtX(c)} (goal ≤ 1.0x)`);
    } else goal(null, `${when}ours / gSOAP's 2-thread pool, req/s (goal ≥ 1.3x) and CPU per request (goal ≤ 1.0x)${poolNote}`);
    if (ours && ceiling) {
      const x = ours.reqPerSec / ceiling.reqPerSec;
      goal(x >= 0.5, `${when}ours / ceiling = ${fmtInt(ours.reqPerSec)} / ${fmtInt(ceiling.reqPerSec)} req/s = ${fmtX(x)} (goal ≥ 0.5x)`);
    } else goal(null, `${when}ours / ceiling (goal ≥ 0.5x)`);
  };
  ratioGoals('', key.ceiling, gsoapPool, key.soap11);
  const ours = key.soap11.m;
  sameWorkLine('', key.peers.find((p) => p.sameWorkPeer === true), key.soap11);
  const ceiling = key.ceiling.m;
  if (ours && fastest) lines.push(`- for reference, not a goal: ours / the fastest peer (${fastest.server}) = ${fmtX(ours.reqPerSec / fastest.m.reqPerSec)}`);
  if (ours && ceiling) {
    const c = ours.cpuMsPer1000 / ceiling.cpuMsPer1000;
    lines.push(`- for reference, not a goal: server CPU per request, ours / ceiling = ${ours.cpuMsPer1000.toFixed(1)} / ${ceiling.cpuMsPer1000.toFixed(1)} µs = ${fmtX(c)}`);
  }
  if (key.neighbour) {
    ratioGoals('beside a CPU-bound neighbour (one core busy): ', key.neighbour.ceiling, key.neighbour.pool, key.neighbour.ours);
    sameWorkLine('beside a CPU-bound neighbour: ', key.neighbour.sameWork, key.neighbour.ours);
  } else lines.push('- beside a CPU-bound neighbour: not run (NEIGHBOUR=0)');
  const batch = key.batch?.m;
  if (batch) {
    const events = batch.reqPerSec * 100;
    goal(events >= 100_000 && batch.errors === 0, `LoginYInsertarEventos ×100, durable = ${fmtInt(events)} events/s (goal ≥ 100,000${batch.errors > 0 ? ', and no errors' : ''})`);
  } else goal(null, 'LoginYInsertarEventos ×100, durable (goal ≥ 100,000 events/s)');
  const even = key.even?.m;
  if (even) {
    const ok = even.p99 <= 5 && even.errors === 0;
    const runs = even.p99Runs ? `, the median of ${even.p99Runs.length} runs on one server: ${even.p99Runs.map(fmtMs).join(' / ')} ms` : '';
    goal(ok, `p99 at 70% of our maximum, evenly paced = ${fmtMs(even.p99)} ms at ${fmtInt(even.reqPerSec)} req/s achieved${runs} (goal ≤ 5 ms${even.errors > 0 ? ', and no errors' : ''})`);
  } else goal(null, 'p99 at 70% of our maximum, evenly paced (goal ≤ 5 ms)');
  const tlsRows = key.tls;
  const plain = key.soap11.m;
  if (tlsRows?.keepAlive.m && plain) {
    const t = tlsRows.keepAlive.m;
    const x = t.reqPerSec / plain.reqPerSec;
    goal(x >= 0.85, `TLS keep-alive / plain, SOAP 1.1 LoginYInsertarEvento, durable = ${fmtInt(t.reqPerSec)} / ${fmtInt(plain.reqPerSec)} req/s = ${fmtX(x)} (goal ≥ 0.85x)`);
    lines.push(`- for reference, not a goal: server CPU per request, TLS keep-alive / plain = ${t.cpuMsPer1000.toFixed(1)} / ${plain.cpuMsPer1000.toFixed(1)} µs per request = ${fmtX(t.cpuMsPer1000 / plain.cpuMsPer1000)}`);
  } else goal(null, 'TLS keep-alive / plain req/s (goal ≥ 0.85x)');
  if (tlsRows?.tlsClose.m && tlsRows.plainClose.m) {
    const t = tlsRows.tlsClose.m;
    const p = tlsRows.plainClose.m;
    lines.push(
      `- for reference, not a goal: new TLS connections per second (one request each, full handshake) = ${fmtInt(t.reqPerSec)}, against ${fmtInt(p.reqPerSec)} new plain connections per second (${fmtX(t.reqPerSec / p.reqPerSec)}); server CPU ${t.cpuMsPer1000.toFixed(1)} / ${p.cpuMsPer1000.toFixed(1)} µs per connection`,
    );
  }
  const baselines = (key.evenBaselines ?? []).filter((r) => r.m !== undefined);
  if (baselines.length > 0) {
    lines.push(`- the same evenly paced rate against servers far from their limit, p99: ${baselines.map((r) => `${r.server} ${fmtMs(r.m!.p99)} ms (runs ${(r.m!.p99Runs ?? [r.m!.p99]).map(fmtMs).join(' / ')})`).join('; ')}`);
  }
  lines.push(`- the disk under that goal: fdatasync of a 4 KiB append, p50 ${fmtMs(sync.p50)} ms, p99 ${fmtMs(sync.p99)} ms (${sync.samples} samples after the run; every acknowledged insert waits for one commit, under load for up to two)`);
  const paced = key.paced?.m;
  if (paced) lines.push(`- for reference, not a goal: p99 at the same rate with autocannon's per-second bursts = ${fmtMs(paced.p99)} ms`);
  lines.push('- throughput in the last minute of a 5-minute run ≥ 95% of the first minute: measured by `npm run bench:soak`, not in this run');
  return { lines, allMet };
}

export function report(rows: Row[], key: KeyRows, run: { startedAt: Date; loadStart: string; loadEnd: string; wrk: string; sync: SyncLatency }): { text: string; allMet: boolean } {
  const cpus = os.cpus();
  const { lines: tableLines, notes } = table(rows, key);
  const { lines: goalLines, allMet } = goals(key, run.sync);
  const lines = [
    `## Ours vs the peers vs the ceiling — ${run.startedAt.toISOString()}`,
    '',
    `Machine: ${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
      `${os.type()} ${os.release()}, Node.js ${process.version}, ${run.wrk}, autocannon 9. ` +
      `Load average (1/5/15 min) at start ${run.loadStart}, at end ${run.loadEnd}.`,
    `Each row: a fresh server process, one answer checked, ${WARMUP} s warm-up (CXF: the JIT curve below), then ${DURATION} s measured with ${CONNECTIONS} connections ` +
      `(\`wrk -t1 -c${CONNECTIONS} -d${DURATION}s --latency\`, one thread; the 70% rows: autocannon with overallRate, ` +
      `and wrk with a Lua schedule spacing the same rate evenly). Every event distinct. The peers answer an in-memory counter; ` +
      `ours commits every event to SQLite (synchronous=FULL) before answering, with GATEWAY_THREADS=${process.env.GATEWAY_THREADS || `${defaultGatewayThreads()} (the default: the cores minus one)`} front-end threads. ` +
      'Load generator and server share the same cores: compare ratios within this run.',
    '',
    ...tableLines,
    '',
    'Errors = socket errors + non-2xx + timeouts + 2xx answers without the expected result (a positive id; ×100 positive ids; a Comando).',
    'events/s only for rows that durably store events (ours; the peers keep nothing). Server CPU is /proc utime+stime of the server process, all its threads ' +
      '(% of one core over the measured run, its main thread in brackets; per answered request in µs, user and kernel apart). Page faults (minor + major, all threads) ' +
      'and the main thread\'s GC pauses (perf_hooks `gc` entries: bench/lib/gc-meter.mjs, for the Node.js servers) over the same run. Ratios are against the ceiling and the fastest peer of this run.',
    ...notes.map((n) => `- ${n}`),
    '',
    'Goals:',
    '',
    ...goalLines,
  ];
  return { text: `${lines.join('\n')}\n`, allMet };
}
