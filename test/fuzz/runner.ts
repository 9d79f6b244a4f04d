/**
 * Runs a fuzz campaign against a FuzzTarget: `concurrency` keep-alive connections pull case
 * numbers from one counter; each answer goes through the oracle; after every 1,000 cases the
 * canary runs; violations are grouped by kind with the smallest request of each kept as its repro.
 */
import { Connection, type Answer } from './client.js';
import { canary, login, queueCommand, registerVehicles } from './checkpoint.js';
import { serialize, type LiveContext } from './corpus.js';
import { generateCase, type FuzzCase } from './mutator.js';
import { check, uwsRefusal, type Violation } from './oracle.js';
import type { FuzzTarget } from './target.js';

/** Dedicated-connection cases in flight at most. */
const MAX_DEDICATED = 256;

export interface RunOptions {
  seed: number;
  /** Stop after this many cases... */
  count: number;
  /** ...or after this long, whichever comes first. */
  durationMs: number;
  concurrency: number;
  /** An answer slower than this is a hang. */
  timeoutMs: number;
  checkpointEvery: number;
  onProgress?: (p: Progress) => void;
  progressEveryMs: number;
}

export interface Repro {
  seed: number;
  index: number;
  seedName: string;
  mutations: string[];
  request: Buffer;
  answer: Answer;
  detail: string;
}

export interface ViolationGroup {
  kind: string;
  count: number;
  /** How often each corpus seed led to it. */
  seeds: Map<string, number>;
  /** The smallest request of the group. */
  repro: Repro;
  /** The smallest request for each distinct list of mutations, a few of them: one kind can have several causes. */
  variants: Map<string, Repro>;
}

const MAX_VARIANTS = 4;

export interface Progress {
  cases: number;
  elapsedMs: number;
  rss: number | null;
}

export interface RunResult {
  seed: number;
  cases: number;
  elapsedMs: number;
  statuses: Map<string, number>;
  groups: Map<string, ViolationGroup>;
  hangs: number;
  crash: { code: number | null; signal: string | null; inFlight: Repro[]; log: string[] } | null;
  canaries: { passed: number; failed: { k: number; detail: string; request: Buffer }[] };
  rss: { start: number | null; peak: number | null; end: number | null };
  loggedErrors: Map<string, number>;
}

export async function runFuzz(target: FuzzTarget, options: RunOptions): Promise<RunResult> {
  const started = performance.now();
  const ctx: LiveContext = { host: `127.0.0.1:${target.port}`, session: '', spare: '' };
  ctx.session = await login(target.port, options.timeoutMs);
  ctx.spare = await login(target.port, options.timeoutMs);
  await registerVehicles(target);
  await queueCommand(target, true);
  await queueCommand(target, false);

  const result: RunResult = {
    seed: options.seed,
    cases: 0,
    elapsedMs: 0,
    statuses: new Map(),
    groups: new Map(),
    hangs: 0,
    crash: null,
    canaries: { passed: 0, failed: [] },
    rss: { start: target.rss(), peak: target.rss(), end: null },
    loggedErrors: target.loggedErrors,
  };
  const sampleRss = (): void => {
    const r = target.rss();
    if (r !== null && (result.rss.peak === null || r > result.rss.peak)) result.rss.peak = r;
  };
  const rssTimer = setInterval(sampleRss, 250);
  const inFlight = new Map<number, { c: FuzzCase; request: Buffer }>();
  let stop = false;
  let finished = false;
  target.onExit((code, signal) => {
    if (finished) return;
    result.crash = {
      code,
      signal,
      log: [...target.logTail],
      inFlight: [...inFlight.values()].map(({ c, request }) => reproOf(c, request, { outcome: 'closed', status: 0, headers: [], body: Buffer.alloc(0), ms: 0, extraBytes: 0, received: 0 }, 'in flight when the gateway exited')),
    };
    stop = true;
  });

  let next = 0;
  let checkpoints = 0;
  let checkpointChain: Promise<void> = Promise.resolve();
  const deadline = started + options.durationMs;
  const runCheckpoint = async (k: number): Promise<void> => {
    if (result.crash !== null) return;
    try {
      const r = await canary(target, k, ctx, options.timeoutMs);
      if (r.ok) result.canaries.passed++;
      else result.canaries.failed.push({ k, detail: r.detail, request: r.request });
      ctx.session = await login(target.port, options.timeoutMs);
      ctx.spare = await login(target.port, options.timeoutMs);
      await queueCommand(target, k % 4 === 3);
    } catch (err) {
      result.canaries.failed.push({ k, detail: `checkpoint ${k} failed: ${err instanceof Error ? err.message : String(err)}`, request: Buffer.alloc(0) });
    }
  };

  const record = (c: FuzzCase, request: Buffer, answer: Answer, violations: Violation[]): void => {
    for (const v of violations) {
      let g = result.groups.get(v.kind);
      if (g === undefined) {
        g = { kind: v.kind, count: 0, seeds: new Map(), repro: reproOf(c, request, answer, v.detail), variants: new Map() };
        result.groups.set(v.kind, g);
      } else if (request.length < g.repro.request.length) g.repro = reproOf(c, request, answer, v.detail);
      const variant = [...new Set(c.mutations)].sort().join(',');
      const known = g.variants.get(variant);
      if (known === undefined ? g.variants.size < MAX_VARIANTS : request.length < known.request.length) g.variants.set(variant, reproOf(c, request, answer, v.detail));
      g.count++;
      g.seeds.set(c.draft.seed, (g.seeds.get(c.draft.seed) ?? 0) + 1);
    }
  };

  const finishCase = (c: FuzzCase, request: Buffer, answer: Answer): void => {
    inFlight.delete(c.index);
    if (result.crash !== null) return;
    const key = answer.outcome === 'answered' ? String(answer.status) : answer.outcome;
    result.statuses.set(key, (result.statuses.get(key) ?? 0) + 1);
    if (answer.outcome === 'timeout') result.hangs++;
    record(c, request, answer, check(c.draft, answer, request));
    result.cases++;
    if (result.cases % options.checkpointEvery === 0) {
      const k = checkpoints++;
      checkpointChain = checkpointChain.then(() => runCheckpoint(k));
    }
  };

  // Cases with unusual framing run on connections of their own, beside the workers, so one the
  // server never answers costs a socket, not a worker's time.
  const dedicated = new Set<Promise<void>>();
  const sendDedicated = async (c: FuzzCase, request: Buffer): Promise<void> => {
    while (dedicated.size >= MAX_DEDICATED) await Promise.race(dedicated);
    const head = c.draft.method.toUpperCase() === 'HEAD';
    const timeoutMs = options.timeoutMs;
    const p: Promise<void> = Connection.once(target.port, request, { head, timeoutMs, graceMs: head ? 50 : 0 })
      .then((answer) => finishCase(c, request, answer))
      .finally(() => dedicated.delete(p));
    dedicated.add(p);
  };

  const worker = async (): Promise<void> => {
    let conn = new Connection(target.port);
    let previous: { c: FuzzCase; request: Buffer; answer: Answer } | null = null;
    const strayCheck = (): void => {
      if (conn.stray === 0 || previous === null) return;
      // Bytes nobody asked for: the server answered the previous request twice, or framed it wrongly.
      record(previous.c, previous.request, previous.answer, [{ kind: 'bytes after the answer on a keep-alive connection', detail: `${conn.stray} stray reads` }]);
      conn.close();
      conn = new Connection(target.port);
    };
    while (!stop && next < options.count && performance.now() < deadline) {
      const index = next++;
      const c = generateCase(options.seed, index);
      const request = serialize(c.draft, ctx);
      inFlight.set(index, { c, request });
      if (c.draft.dedicated || uwsRefusal(c.draft, request) !== null) {
        await sendDedicated(c, request);
        continue;
      }
      strayCheck();
      const reused = conn.answeredOnSocket > 0;
      let answer = await conn.send(request, { head: false, timeoutMs: options.timeoutMs });
      // The server may close an idle keep-alive socket as we write: retry once on a fresh one.
      if (reused && answer.received === 0 && (answer.outcome === 'closed' || answer.outcome === 'reset')) {
        conn.close();
        conn = new Connection(target.port);
        answer = await conn.send(request, { head: false, timeoutMs: options.timeoutMs });
      }
      if (answer.outcome !== 'answered') {
        conn.close();
        conn = new Connection(target.port);
      }
      previous = { c, request, answer };
      finishCase(c, request, answer);
    }
    await new Promise((r) => setTimeout(r, 20));
    strayCheck();
    conn.close();
  };

  const progressTimer = options.onProgress
    ? setInterval(() => options.onProgress?.({ cases: result.cases, elapsedMs: performance.now() - started, rss: target.rss() }), options.progressEveryMs)
    : null;
  try {
    await Promise.all(Array.from({ length: options.concurrency }, () => worker()));
    await Promise.all(dedicated);
    await checkpointChain;
    if (result.crash === null) {
      // One more canary at the very end, so the last stretch of cases is covered too.
      await runCheckpoint(checkpoints++);
    }
  } finally {
    stop = true;
    finished = true;
    clearInterval(rssTimer);
    if (progressTimer) clearInterval(progressTimer);
  }
  sampleRss();
  result.rss.end = target.rss();
  result.elapsedMs = performance.now() - started;
  return result;
}

function reproOf(c: FuzzCase, request: Buffer, answer: Answer, detail: string): Repro {
  return { seed: c.seed, index: c.index, seedName: c.draft.seed, mutations: c.mutations, request, answer, detail };
}
