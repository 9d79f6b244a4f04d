/**
 * Where the gateway allocates, and what the garbage costs the tail: bytes allocated per request by
 * source line (V8's sampling heap profiler, counting the objects a scavenge frees at once; see
 * lib/heap-sampler.mjs) under saturating load, then every young-generation GC pause under the
 * evenly paced load of `npm run bench`'s p99 row (`--trace-gc-nvp`). Each scavenge stops the event
 * loop; a request that arrives during one waits for it, so their pauses bound the p99 from below.
 *
 * Run: npx tsx bench/allocations.ts [script.lua [wrk script args]]
 *      (env DURATION=5, CONNECTIONS=50, RATE=16000 for the paced part (0 skips it), TOP=30;
 *      GATEWAY_THREADS=1 unless set; SERVER_NODE_ARGS: more Node.js flags for the server, e.g.
 *      `--no-turbo-inlining` so that allocations are charged to the function that makes them,
 *      not to the one an optimised caller inlined it into)
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer } from './lib/server.js';
import { runWrk } from './lib/wrk.js';

const [script = 'soap11-insert.lua', ...scriptArgs] = process.argv.slice(2);
const DURATION = Number(process.env.DURATION ?? 5);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
const RATE = Number(process.env.RATE ?? 16_000);
const TOP = Number(process.env.TOP ?? 30);
const ROOT = path.resolve(import.meta.dirname, '..');
const env = { SQLITE_SYNCHRONOUS: 'FULL', GATEWAY_THREADS: process.env.GATEWAY_THREADS ?? '1' };
const serverArgs = (process.env.SERVER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');

interface SampleNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children: SampleNode[];
}
interface SamplingProfile {
  head: SampleNode;
  samples: { size: number; nodeId: number }[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const where = (f: SampleNode['callFrame']): string => `${f.functionName || '(anonymous)'} ${f.url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '')}:${f.lineNumber + 1}`;

async function allocations(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gw-alloc-'));
  const server = await startServer(
    { ...env, HEAP_SAMPLER_DIR: dir },
    { nodeArgs: [...serverArgs, '--import', path.join(import.meta.dirname, 'lib', 'heap-sampler.mjs')] },
  );
  try {
    await server.admin('POST', '/admin/providers', { systemUser: 'bench', password: 'bench-secret' });
    await runWrk({ url: server.serviceUrl, script, seconds: 3, connections: CONNECTIONS, seed: 100_000_000, args: scriptArgs });
    writeFileSync(path.join(dir, 'start'), '');
    await sleep(200);
    const run = await runWrk({ url: server.serviceUrl, script, seconds: DURATION, connections: CONNECTIONS, seed: 200_000_000, args: scriptArgs });
    writeFileSync(path.join(dir, 'stop'), '');
    const file = path.join(dir, 'allocations.heapprofile');
    for (let i = 0; i < 100 && !existsSync(file); i++) await sleep(100);
    const requests = run.requests ?? 0;
    if (requests === 0 || !existsSync(file)) throw new Error('no requests answered, or no profile written');
    const profile = JSON.parse(readFileSync(file, 'utf8')) as SamplingProfile;
    const bytesAt = new Map<number, number>();
    for (const s of profile.samples) bytesAt.set(s.nodeId, (bytesAt.get(s.nodeId) ?? 0) + s.size);
    const bySite = new Map<string, number>();
    let total = 0;
    const walk = (n: SampleNode): void => {
      const bytes = bytesAt.get(n.id) ?? 0;
      if (bytes > 0) bySite.set(where(n.callFrame), (bySite.get(where(n.callFrame)) ?? 0) + bytes);
      total += bytes;
      n.children.forEach(walk);
    };
    walk(profile.head);
    // The window is a little wider than wrk's run: per request is a slight overestimate.
    console.log(`\n${script}: ${requests} requests in ${DURATION} s, about ${Math.round(total / requests)} bytes allocated per request; top sites (bytes per request):`);
    for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${String(Math.round(bytes / requests)).padStart(7)}  ${site}`);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function scavengePauses(): Promise<void> {
  const server = await startServer(env, { nodeArgs: [...serverArgs, '--trace-gc-nvp'] });
  let trace = '';
  try {
    await server.admin('POST', '/admin/providers', { systemUser: 'bench', password: 'bench-secret' });
    await runWrk({ url: server.serviceUrl, script: 'soap11-insert.lua', seconds: 3, connections: CONNECTIONS, seed: 300_000_000 });
    server.child.stdout?.on('data', (d: Buffer) => (trace += d.toString()));
    const run = await runWrk({ url: server.serviceUrl, script: 'soap11-insert-paced.lua', seconds: 10, connections: CONNECTIONS, seed: 400_000_000, args: [String(RATE)] });
    const scavenges = [...trace.matchAll(/ pause=([\d.]+) .* gc=s .*new_space_survived=(\d+)/g)].map((m) => ({ pause: Number(m[1]), survived: Number(m[2]) }));
    const pauses = scavenges.map((s) => s.pause).sort((a, b) => a - b);
    const at = (q: number): number => pauses[Math.min(pauses.length - 1, Math.floor(q * pauses.length))] ?? NaN;
    const busy = pauses.reduce((a, b) => a + b, 0);
    const survived = scavenges.reduce((a, s) => a + s.survived, 0) / Math.max(1, scavenges.length);
    console.log(
      `\nSOAP 1.1 insert evenly paced at ${RATE} req/s for 10 s: p50 ${run.p50} ms, p99 ${run.p99} ms; ${scavenges.length} scavenges, pause p50 ${at(0.5)} / p90 ${at(0.9)} / max ${at(1)} ms, ` +
        `${((busy / 10_000) * 100).toFixed(1)}% of the time, ${Math.round(survived / 1024)} KB surviving each on average`,
    );
  } finally {
    await server.stop();
  }
}

await allocations();
if (RATE > 0) await scavengePauses();
