/**
 * Before/after on one machine in one run: the same wrk scenario against the compiled build of
 * another checkout (A, e.g. `git worktree add /tmp/before <rev>` then `npm run build` there) and
 * this one (B), alternating A, B, A, B… so drift in the machine hits both alike. Prints req/s and
 * p99 per round and the median ratio B/A.
 *
 * Run: npx tsx bench/ab.ts <checkout A> [script.lua [wrk script args]]
 *      (env ROUNDS=3, DURATION=8, CONNECTIONS=100; A_NODE_ARGS / B_NODE_ARGS: Node.js flags of
 *      each side, space-separated, e.g. A=. and B_NODE_ARGS=--max-semi-space-size=32 to try a
 *      flag on one build; A_ENV / B_ENV: environment of each side's server, space-separated
 *      NAME=value, e.g. B_ENV=SQLITE_SYNCHRONOUS=NORMAL; the server runs embedded with
 *      SQLITE_SYNCHRONOUS=FULL, as in bench/compare.ts, unless an _ENV says otherwise)
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { cpuSeconds } from './lib/proc.js';
import { startServer } from './lib/server.js';
import { runWrk } from './lib/wrk.js';

const [other, script = 'soap11-insert.lua', ...scriptArgs] = process.argv.slice(2);
if (other === undefined || !existsSync(path.join(other, 'dist', 'main.js'))) {
  throw new Error('usage: bench/ab.ts <checkout with a built dist/> [script.lua [args]]');
}
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const DURATION = Number(process.env.DURATION ?? 8);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 100);

/** The space-separated words of an environment variable (node flags, NAME=value pairs). */
const words = (name: string): string[] => (process.env[name] ?? '').split(' ').filter((a) => a !== '');
const serverEnv = (name: string): Record<string, string> =>
  Object.fromEntries(
    words(name).map((pair) => {
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new Error(`${name}: expected NAME=value, got "${pair}"`);
      return [pair.slice(0, eq), pair.slice(eq + 1)];
    }),
  );

async function measure(
  root: string | undefined,
  seed: number,
  flags: string[],
  env: Record<string, string>,
): Promise<{ rps: number; p99: string; cpuUs: number; mainUs: number }> {
  const server = await startServer({ SQLITE_SYNCHRONOUS: 'FULL', ...env }, { nodeArgs: flags, ...(root === undefined ? {} : { root }) });
  try {
    await server.admin('POST', '/admin/providers', { systemUser: 'bench', password: 'bench-secret' });
    const wrk = (seconds: number, seed: number) =>
      runWrk({ url: server.serviceUrl, script, seconds, connections: CONNECTIONS, seed, args: scriptArgs });
    await wrk(2, seed + 50_000_000); // warm-up
    const serverCpu = (): number => {
      const s = cpuSeconds(server.child.pid!);
      if (s === null) throw new Error('the server exited during the run');
      return s;
    };
    // The main thread's share apart: what the other threads (the SQLite writer, GC helpers) add is the rest.
    const mainCpu = (): number => cpuSeconds(server.child.pid!, server.child.pid) ?? 0;
    const cpu0 = serverCpu();
    const main0 = mainCpu();
    const r = await wrk(DURATION, seed);
    const cpu = serverCpu() - cpu0;
    const main = mainCpu() - main0;
    if (r.code !== 0 || r.reqPerSec === null || r.requests === null) throw new Error(`wrk failed (exit ${r.code}):\n${r.stdout}${r.stderr}`);
    if (r.bad !== 0) throw new Error(`answers failed the check (${r.bad}):\n${r.stdout}`);
    const p99 = r.p99 === null ? '?' : `${r.p99.toFixed(2)}ms`;
    return { rps: r.reqPerSec, p99, cpuUs: (cpu * 1e6) / r.requests, mainUs: (main * 1e6) / r.requests };
  } finally {
    await server.stop();
  }
}

const ratios: number[] = [];
const cpuRatios: number[] = [];
const mainRatios: number[] = [];
// Read once, before any server starts: a malformed pair fails at once, not after the first round.
const sides = { a: { flags: words('A_NODE_ARGS'), env: serverEnv('A_ENV') }, b: { flags: words('B_NODE_ARGS'), env: serverEnv('B_ENV') } };
for (let round = 0; round < ROUNDS; round++) {
  const a = await measure(path.resolve(other), 100_000_000 * (2 * round + 1), sides.a.flags, sides.a.env);
  const b = await measure(undefined, 100_000_000 * (2 * round + 2), sides.b.flags, sides.b.env);
  ratios.push(b.rps / a.rps);
  cpuRatios.push(b.cpuUs / a.cpuUs);
  mainRatios.push(b.mainUs / a.mainUs);
  console.log(
    `round ${round + 1}: A ${a.rps.toFixed(0)} req/s, ${a.cpuUs.toFixed(0)} µs CPU/request (main thread ${a.mainUs.toFixed(0)}, p99 ${a.p99})  ` +
      `B ${b.rps.toFixed(0)} req/s, ${b.cpuUs.toFixed(0)} µs CPU/request (main thread ${b.mainUs.toFixed(0)}, p99 ${b.p99})  B/A ${(b.rps / a.rps).toFixed(3)}`,
  );
}
const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
console.log(
  `median B/A: throughput ${median(ratios).toFixed(3)}, server CPU per request ${median(cpuRatios).toFixed(3)} ` +
    `(main thread ${median(mainRatios).toFixed(3)}) ` +
    `(${script}, ${ROUNDS} rounds × ${DURATION} s, ${CONNECTIONS} connections)`,
);
