/**
 * Shrinks a disagreeing body to a small one that still disagrees in the same way: first as one
 * chunk, then by deleting ever smaller byte ranges (a simple delta debugging).
 */
import { runCase } from './campaign.js';

const MAX_TRIES = 20_000;

/** The kind of a mismatch without its variable details, so shrinking keeps the same failure. */
function kindOf(mismatch: string | null): string | null {
  return mismatch === null ? null : mismatch.replace(/\(.*$|: .*$/, '');
}

export function minimize(bytes: Uint8Array, plan: readonly number[]): { bytes: Uint8Array; plan: readonly number[] } {
  const target = kindOf(runCase(bytes, plan).verdict.mismatch);
  if (target === null) return { bytes, plan };
  let tries = 0;
  const fails = (b: Uint8Array, p: readonly number[]) => {
    tries++;
    return kindOf(runCase(b, p).verdict.mismatch) === target;
  };
  let current = bytes;
  let currentPlan: readonly number[] = fails(bytes, []) ? [] : plan;
  const planWithin = (length: number) => currentPlan.filter((p) => p < length);
  for (let size = Math.max(1, current.length >> 1); size >= 1 && tries < MAX_TRIES; size = size >> 1) {
    let at = 0;
    while (at < current.length && tries < MAX_TRIES) {
      const candidate = Buffer.concat([current.subarray(0, at), current.subarray(at + size)]);
      const candidatePlan = planWithin(candidate.length);
      if (fails(candidate, candidatePlan)) {
        current = candidate;
        currentPlan = candidatePlan;
      } else at += size;
    }
  }
  return { bytes: current, plan: currentPlan };
}
