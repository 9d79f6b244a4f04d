/**
 * A differential campaign: `count` cases from one seed (each case reproducible on its own from
 * the seed and its index), every one run through the reference and the scanner and judged; a body
 * they agree on then goes through the compiled decoder and its interpreted reference
 * (compiled-oracle.ts), which must agree too.
 * Shared by the CI test (a small count) and `npm run diff:scanner` (a million).
 */
import { generateEnvelope } from './generator.js';
import { chunkPlan, mutate } from './mutator.js';
import { describe, judge, runReference, runScanner, type Outcome, type Verdict } from './oracle.js';
import { compareCompiled } from './compiled-oracle.js';
import { Rng } from './rng.js';
import { SEEDS } from './seeds.js';

export interface Case {
  readonly index: number;
  readonly origin: 'generated' | 'mutated' | 'corpus';
  readonly bytes: Uint8Array;
  readonly plan: readonly number[];
}

export function makeCase(seed: number, index: number, corpus: readonly Uint8Array[]): Case {
  const rng = new Rng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const material = corpus.length > 0 ? corpus : SEEDS;
  const roll = rng.int(100);
  let origin: Case['origin'];
  let bytes: Uint8Array;
  if (roll < 40) {
    origin = 'generated';
    bytes = generateEnvelope(rng);
  } else if (roll < 95) {
    origin = 'mutated';
    const base = rng.chance(0.85) ? generateEnvelope(rng) : rng.pick(material);
    bytes = mutate(rng, base, rng.chance(0.5) ? generateEnvelope(rng) : rng.pick(material));
  } else {
    origin = 'corpus';
    bytes = rng.pick(material);
  }
  return { index, origin, bytes, plan: chunkPlan(rng, bytes.length) };
}

export interface CaseResult {
  readonly reference: Outcome;
  readonly scanned: Outcome;
  readonly verdict: Verdict;
}

export function runCase(bytes: Uint8Array, plan: readonly number[]): CaseResult {
  const reference = runReference(bytes, plan);
  const scanned = runScanner(bytes, plan);
  const verdict = judge(reference, scanned);
  const compiled = verdict.mismatch === null ? compareCompiled(bytes, plan) : null;
  return { reference, scanned, verdict: compiled === null ? verdict : { mismatch: compiled, known: null } };
}

export interface Tally {
  cases: number;
  generated: number;
  mutated: number;
  corpus: number;
  accepted: number;
  rejected: number;
  /** Rejections by error class (both sides agree). */
  byError: Record<string, number>;
  /** Documented deliberate differences, by name. */
  known: Record<string, number>;
  mismatches: { case: Case; result: CaseResult }[];
}

export function newTally(): Tally {
  return { cases: 0, generated: 0, mutated: 0, corpus: 0, accepted: 0, rejected: 0, byError: {}, known: {}, mismatches: [] };
}

export function record(tally: Tally, c: Case, result: CaseResult): void {
  tally.cases++;
  tally[c.origin]++;
  const { verdict, reference } = result;
  if (verdict.mismatch !== null) {
    tally.mismatches.push({ case: c, result });
    return;
  }
  if (verdict.known !== null) {
    tally.known[verdict.known] = (tally.known[verdict.known] ?? 0) + 1;
    return;
  }
  if (reference.accepted) tally.accepted++;
  else {
    tally.rejected++;
    tally.byError[reference.error] = (tally.byError[reference.error] ?? 0) + 1;
  }
}

export function runCampaign(seed: number, count: number, corpus: readonly Uint8Array[] = [], from = 0): Tally {
  const tally = newTally();
  for (let i = from; i < from + count; i++) {
    const c = makeCase(seed, i, corpus);
    record(tally, c, runCase(c.bytes, c.plan));
  }
  return tally;
}

export function explain(c: Case, result: CaseResult): string {
  return [
    `case ${c.index} (${c.origin}), ${c.bytes.length} bytes, chunks at [${c.plan.join(', ')}]`,
    `mismatch: ${result.verdict.mismatch}`,
    `reference: ${describe(result.reference)}`,
    `scanner:   ${describe(result.scanned)}`,
    `body (JSON string of its latin1 bytes): ${JSON.stringify(Buffer.from(c.bytes).toString('latin1'))}`,
  ].join('\n');
}
