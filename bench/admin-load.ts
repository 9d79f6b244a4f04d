/**
 * What the operators' side costs ingest, before and after, in one run:
 *  1. events/s stored through the public port with 0, 200 and 2,000 live event streams open on the
 *     admin port (readers in their own process, reading everything they are sent);
 *  2. importing a 100,000-vehicle trip in 1,000-line calls (first and last call), then the public
 *     port's insert latency (p50/p99) alone and while the trip's vehicles are polled as the console
 *     does (before: the whole list; after: a page of 100), once a second (ten times the console's rate).
 * "Before" is a build of BENCH_BEFORE_REF (default main) made from `git archive` in a temporary
 * directory, or BENCH_BEFORE_ROOT (a built checkout). Env: DURATION (s, default 8), STREAMS (default
 * "0,200,2000"), TRIP_VEHICLES (default 100000), PARTS ("streams,trip").
 * Run: npm run bench:admin
 */
import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServer, type BenchServer } from './lib/server.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const DURATION = Number(process.env.DURATION ?? 8);
const STREAM_COUNTS = (process.env.STREAMS ?? '0,200,2000').split(',').map(Number);
const TRIP_VEHICLES = Number(process.env.TRIP_VEHICLES ?? 100_000);
const PARTS = new Set((process.env.PARTS ?? 'streams,trip').split(','));
const NS = 'http://tempuri.org/';

function beforeRoot(): string {
  if (process.env.BENCH_BEFORE_ROOT) return process.env.BENCH_BEFORE_ROOT;
  const ref = process.env.BENCH_BEFORE_REF ?? 'main';
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-before-'));
  execFileSync('sh', ['-c', `git archive ${ref} | tar -x -C ${dir}`], { cwd: ROOT });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: dir, stdio: 'ignore' });
  return dir;
}

let serial = 0;
const eventXml = (): string => {
  const i = serial++;
  return `<Dominio>AB${i % 5000}CD</Dominio><NroSerie>SN</NroSerie><Codigo>${i}</Codigo><Latitud>-34.6037221</Latitud><Longitud>-58.3815704</Longitud><Altitud>25</Altitud><Velocidad>42.5</Velocidad><FechaHoraEvento>2026-11-22T08:59:30.${String(i % 1000).padStart(3, '0')}-03:00</FechaHoraEvento><FechaHoraRecepcion>2026-11-22T09:00:00-03:00</FechaHoraRecepcion>`;
};
const envelope = (op: string, inner: string): string =>
  `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><${op} xmlns="${NS}"><SystemUser>bench</SystemUser><Password>bench-secret</Password>${inner}</${op}></soap:Body></soap:Envelope>`;

async function insertLoad(server: BenchServer, batch: number, connections: number): Promise<{ eventsPerSec: number; p50: number; p99: number; errors: number }> {
  const op = batch === 1 ? 'LoginYInsertarEvento' : 'LoginYInsertarEventos';
  const body = (): string =>
    batch === 1 ? envelope(op, eventXml()) : envelope(op, `<Eventos>${Array.from({ length: batch }, () => `<pEvento>${eventXml()}</pEvento>`).join('')}</Eventos>`);
  const result = await autocannon({
    url: server.serviceUrl,
    connections,
    duration: DURATION,
    method: 'POST',
    headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NS}${op}"` },
    requests: [{ setupRequest: (req) => ({ ...req, body: body() }) }],
  });
  return { eventsPerSec: result.requests.average * batch, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.timeouts + result.non2xx };
}

async function withStreams(server: BenchServer, count: number): Promise<{ run: () => Promise<Record<string, number>>; opened: Record<string, number> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/lib/stream-readers.ts'), server.adminUrl, 'bench', String(count)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  let waiting: (() => void) | null = null;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => {
    lines.push(...d.split('\n').filter((l) => l !== ''));
    waiting?.();
  });
  const nextLine = async (): Promise<Record<string, number>> => {
    while (lines.length === 0) await new Promise<void>((r) => (waiting = r));
    return JSON.parse(lines.shift() ?? '{}') as Record<string, number>;
  };
  const opened = await nextLine();
  return {
    opened,
    run: async () => {
      child.kill('SIGTERM');
      return nextLine();
    },
  };
}

async function streamsPart(label: string, root: string, count: number, rows: string[]): Promise<void> {
  {
    // The cap is raised so every stream of the bench is live (its default, 100, would refuse most of 2,000).
    const server = await startServer({ ADMIN_STREAMS_MAX: '5000' }, { root });
    try {
      await server.admin('POST', '/admin/providers', { systemUser: 'bench', password: 'bench-secret' });
      const streams = await withStreams(server, count);
      const load = await insertLoad(server, 100, 20);
      const after = await streams.run();
      rows.push(
        `| ${label} | ${count} | ${streams.opened.open ?? 0} | ${streams.opened.refused ?? 0} | ${after.cut ?? 0} | ${Math.round(load.eventsPerSec)} | ${load.p99} | ${load.errors} | ${Math.round(server.rssKb() / 1024)} |`,
      );
      console.error(rows[rows.length - 1]);
    } finally {
      await server.stop();
    }
  }
}

async function tripPart(label: string, root: string, after: boolean, rows: string[]): Promise<void> {
  const server = await startServer({}, { root });
  try {
    await server.admin('POST', '/admin/providers', { systemUser: 'bench', password: 'bench-secret' });
    const callMs: number[] = [];
    for (let start = 0; start < TRIP_VEHICLES; start += 1000) {
      const trips = Array.from({ length: Math.min(1000, TRIP_VEHICLES - start) }, (_, i) => ({ line: start + i + 1, systemUser: 'bench', dominio: `T${String(start + i).padStart(6, '0')}`, nroSerie: 'S' }));
      const t0 = performance.now();
      await server.admin('POST', '/admin/import/trips', { trips });
      callMs.push(performance.now() - t0);
    }
    const alone = await insertLoad(server, 1, 10);
    // The console's poll: before, the route had no limit (the whole trip); after, a page of 100.
    const pollPath = `/admin/providers/bench/trip/vehicles${after ? '?limit=100' : ''}`;
    const poll = { on: true };
    let polls = 0;
    let pollMs = 0;
    const poller = (async () => {
      while (poll.on) {
        const t0 = performance.now();
        await server.admin('GET', pollPath);
        pollMs = Math.max(pollMs, performance.now() - t0);
        polls++;
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();
    const polled = await insertLoad(server, 1, 10);
    poll.on = false;
    await poller;
    const avg = (xs: number[]): number => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
    rows.push(
      `| ${label} | ${Math.round(callMs[0] ?? 0)} | ${Math.round(callMs[callMs.length - 1] ?? 0)} | ${avg(callMs)} | ${alone.p50} / ${alone.p99} | ${polled.p50} / ${polled.p99} | ${polls} | ${Math.round(pollMs)} |`,
    );
    console.error(rows[rows.length - 1]);
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const before = beforeRoot();
  const builds = [
    { label: 'before', root: before, after: false },
    { label: 'after', root: ROOT, after: true },
  ];
  const streamRows: string[] = [];
  const tripRows: string[] = [];
  // Before and after side by side, so a change in the machine's load hits both alike.
  if (PARTS.has('streams')) for (const count of STREAM_COUNTS) for (const b of builds) await streamsPart(b.label, b.root, count, streamRows);
  if (PARTS.has('trip')) for (const b of builds) await tripPart(b.label, b.root, b.after, tripRows);
  console.log(`\nAdmin load against ingest, ${DURATION} s per run, ${new Date().toISOString()} (before: ${before})\n`);
  if (streamRows.length > 0) {
    console.log('Ingest (LoginYInsertarEventos x100, 20 connections) with live streams open:\n');
    console.log('| build | streams asked | open | refused | cut by server | events/s | p99 ms | errors | server peak RSS MB |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of streamRows) console.log(r);
  }
  if (tripRows.length > 0) {
    console.log(`\nA ${TRIP_VEHICLES}-vehicle trip: import in 1,000-line calls, then LoginYInsertarEvento (10 connections) alone and while the trip is polled once a second:\n`);
    console.log('| build | first import call ms | last call ms | mean call ms | insert p50 / p99 ms alone | p50 / p99 ms while polling | polls | slowest poll ms |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of tripRows) console.log(r);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
