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
 *      SQLITE_SYNCHRONOUS=FULL, as in bench/compare.ts, unless an _ENV says otherwise; A_NODE /
 *      B_NODE: the Node.js executable of each side, e.g. A_NODE=/usr/bin/node for the runtime
 *      before; WARMUP=2 seconds of load before each measured window)
 *
 * Per side and round: req/s, CPU per request (user and kernel), page faults per request, the main
 * thread's GC share, RSS and p99 (bench/lib/meter.ts); then the median B/A ratio of each.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describeWindow, windowOf, type Window } from './lib/meter.js';
import { startServer } from './lib/server.js';
import { runWrk } from './lib/wrk.js';

const [other, script = 'soap11-insert.lua', ...scriptArgs] = process.argv.slice(2);
if (other === undefined || !existsSync(path.join(other, 'dist', 'main.js'))) {
  throw new Error('usage: bench/ab.ts <checkout with a built dist/> [script.lua [args]]');
}
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const DURATION = Number(process.env.DURATION ?? 8);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 100);
const WARMUP = Number(process.env.WARMUP ?? 2);

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

interface Side {
  flags: string[];
  env: Record<string, string>;
  node: string | undefined;
}

async function measure(root: string | undefined, seed: number, side: Side): Promise<Window & { p99Ms: number | null }> {
  const server = await startServer(
    { SQLITE_SYNCHRONOUS: 'FULL', ...side.env },
    { nodeArgs: side.flags, ...(root === undefined ? {} : { root }), ...(side.node === undefined ? {} : { node: side.node }) },
  );
  try {
    await server.admin('POST', '/admin/providers', { systemUser: 'bench', password: 'bench-secret' });
    const wrk = (seconds: number, seed: number) =>
      runWrk({ url: server.serviceUrl, script, seconds, connections: CONNECTIONS, seed, args: scriptArgs });
    await wrk(WARMUP, seed + 50_000_000);
    const before = server.reading();
    const r = await wrk(DURATION, seed);
    const after = server.reading();
    if (r.code !== 0 || r.reqPerSec === null || r.requests === null) throw new Error(`wrk failed (exit ${r.code}):\n${r.stdout}${r.stderr}`);
    if (r.bad !== 0) throw new Error(`answers failed the check (${r.bad}):\n${r.stdout}`);
    return { ...windowOf(before, after, r.requests), p99Ms: r.p99 };
  } finally {
    await server.stop();
  }
}

const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
const rounds: { a: Window & { p99Ms: number | null }; b: Window & { p99Ms: number | null } }[] = [];
// Read once, before any server starts: a malformed pair fails at once, not after the first round.
const side = (name: 'A' | 'B'): Side => ({ flags: words(`${name}_NODE_ARGS`), env: serverEnv(`${name}_ENV`), node: process.env[`${name}_NODE`] || undefined });
const sides = { a: side('A'), b: side('B') };
const p99 = (ms: number | null): string => (ms === null ? '?' : `${ms.toFixed(2)} ms`);
for (let round = 0; round < ROUNDS; round++) {
  const a = await measure(path.resolve(other), 100_000_000 * (2 * round + 1), sides.a);
  const b = await measure(undefined, 100_000_000 * (2 * round + 2), sides.b);
  rounds.push({ a, b });
  console.log(`round ${round + 1}\n  A ${describeWindow(a)}, p99 ${p99(a.p99Ms)}\n  B ${describeWindow(b)}, p99 ${p99(b.p99Ms)}`);
}
const ratio = (pick: (w: Window & { p99Ms: number | null }) => number | null): string => {
  const xs = rounds.map(({ a, b }) => {
    const x = pick(a);
    const y = pick(b);
    return x === null || y === null || x === 0 ? null : y / x;
  });
  return xs.includes(null) ? 'n/a' : `${median(xs as number[]).toFixed(3)}x`;
};
console.log(
  `median B/A over ${ROUNDS} rounds × ${DURATION} s, ${CONNECTIONS} connections (${script}): ` +
    `req/s ${ratio((w) => w.reqPerSec)}, CPU per request ${ratio((w) => w.cpuUs)} (user ${ratio((w) => w.userUs)}, kernel ${ratio((w) => w.systemUs)}), ` +
    `faults per request ${ratio((w) => w.faultsPerRequest)}, GC share ${ratio((w) => w.gcShare)}, p99 ${ratio((w) => w.p99Ms)}, RSS ${ratio((w) => w.rssMb)}`,
);
