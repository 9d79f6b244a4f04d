/**
 * `npm run fuzz`: a long fuzz campaign against a fresh embedded gateway, or one case again.
 *
 *   npm run fuzz -- --count 1000000          npm run fuzz -- --duration 10m --seed 7
 *   npm run fuzz -- --seed 7 --case 4242     (rebuilds and sends case 4242 of seed 7 alone)
 *
 * Prints progress, then the status histogram, crashes, hangs, the gateway's RSS and every kind
 * of oracle violation with its smallest repro; the repros are saved under fuzz-out/.
 */
import path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { Connection } from './client.js';
import { login } from './checkpoint.js';
import { serialize, type LiveContext } from './corpus.js';
import { generateCase } from './mutator.js';
import { check } from './oracle.js';
import { describeRepro, saveRepros, summary } from './report.js';
import { runFuzz } from './runner.js';
import { FuzzTarget, ROOT } from './target.js';

const int = (v: string): number => {
  if (!/^\d+$/.test(v)) throw new InvalidArgumentError('a whole number');
  return Number(v);
};

const duration = (v: string): number => {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(v);
  if (m === null) throw new InvalidArgumentError('like 90s, 10m or 1h');
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 's'] ?? 1000;
  return Number(m[1]) * unit;
};

const program = new Command('fuzz')
  .description('Deterministic mutation fuzzer for the gateway')
  .option('--seed <n>', 'run seed (default: random, printed)', int)
  .option('--count <n>', 'cases to run', int)
  .option('--duration <d>', 'how long to run (90s, 10m, 1h)', duration)
  .option('--case <n>', 'run only this case of --seed and show it', int)
  .option('--concurrency <n>', 'connections in parallel', int, 8)
  .option('--timeout <ms>', 'an answer slower than this is a hang', int, 5000)
  .option('--dist', 'fuzz the compiled build (node dist/main.js; run npm run build first)', false)
  .option('--out <dir>', 'where repros are saved', path.join(ROOT, 'fuzz-out'))
  .parse();

interface Options {
  seed?: number;
  count?: number;
  duration?: number;
  case?: number;
  concurrency: number;
  timeout: number;
  dist: boolean;
  out: string;
}

async function single(target: FuzzTarget, seed: number, index: number, timeoutMs: number): Promise<number> {
  const ctx: LiveContext = { host: `127.0.0.1:${target.port}`, session: await login(target.port, timeoutMs), spare: await login(target.port, timeoutMs) };
  const c = generateCase(seed, index);
  const request = serialize(c.draft, ctx);
  const head = c.draft.method.toUpperCase() === 'HEAD';
  const answer = await Connection.once(target.port, request, { head, timeoutMs, graceMs: head ? 50 : 0 });
  const violations = check(c.draft, answer, request);
  console.log(describeRepro({ seed, index, seedName: c.draft.seed, mutations: c.mutations, request, answer, detail: violations.map((v) => v.kind).join('; ') || 'no violation' }));
  console.log(`\nfull answer body:\n${answer.body.toString('utf8')}`);
  for (const v of violations) console.log(`VIOLATION ${v.kind}: ${v.detail}`);
  return violations.length === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const o = program.opts<Options>();
  const seed = o.seed ?? (Math.random() * 0x7fffffff) | 0;
  const target = await FuzzTarget.start({ runner: o.dist ? 'dist' : 'tsx' });
  try {
    if (o.case !== undefined) return await single(target, seed, o.case, o.timeout);
    const count = o.count ?? (o.duration === undefined ? 100_000 : Number.MAX_SAFE_INTEGER);
    console.log(`fuzzing gateway pid ${target.pid} (port ${target.port}), seed ${seed}, ${o.count ?? '∞'} cases, ${o.duration === undefined ? 'no time limit' : `${o.duration / 1000} s`}, ${o.concurrency} connections`);
    let last = { cases: 0, t: 0 };
    const result = await runFuzz(target, {
      seed,
      count,
      durationMs: o.duration ?? Number.MAX_SAFE_INTEGER,
      concurrency: o.concurrency,
      timeoutMs: o.timeout,
      checkpointEvery: 1000,
      progressEveryMs: 10_000,
      onProgress: (p) => {
        const rate = ((p.cases - last.cases) / (p.elapsedMs - last.t)) * 1000;
        last = { cases: p.cases, t: p.elapsedMs };
        console.log(`${(p.elapsedMs / 1000).toFixed(0)} s: ${p.cases} cases, ${rate.toFixed(0)} cases/s, gateway RSS ${p.rss === null ? '-' : `${(p.rss / 1048576).toFixed(0)} MB`}`);
      },
    });
    console.log(summary(result));
    const files = saveRepros(result, o.out);
    console.log(`\nrepros saved under ${o.out} (${files.length} requests)`);
    return result.crash !== null || result.groups.size > 0 || result.canaries.failed.length > 0 ? 1 : 0;
  } finally {
    await target.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
