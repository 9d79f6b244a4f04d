/**
 * Fuzzing in the suite: 20,000 deterministic mutations of a corpus covering every
 * operation in every binding, against the real gateway (`main.ts`, embedded mode) in a child
 * process. The process must stay up, every answer must be documented (test/fuzz/oracle.ts), and
 * a valid LoginYInsertarEvento must succeed and be stored after every 1,000 cases.
 * A failure prints each kind of violation with its smallest request and the command that
 * replays it alone: `npm run fuzz -- --seed S --case N`. `npm run fuzz` runs long campaigns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCase, corpus } from '../fuzz/mutator.js';
import path from 'node:path';
import { saveRepros, summary } from '../fuzz/report.js';
import { runFuzz, type RunResult } from '../fuzz/runner.js';
import { FuzzTarget, ROOT } from '../fuzz/target.js';
import { operationList, httpBindable } from '../../shared/catalogue/index.js';

const SEED = 20261122;
const CASES = 20_000;

describe('fuzzing the gateway', () => {
  let target: FuzzTarget;
  let result: RunResult;

  beforeAll(async () => {
    target = await FuzzTarget.start();
    result = await runFuzz(target, {
      seed: SEED,
      count: CASES,
      durationMs: Number.MAX_SAFE_INTEGER,
      concurrency: 8,
      timeoutMs: 5_000,
      checkpointEvery: 1_000,
      progressEveryMs: 60_000,
    });
    console.log(summary(result));
    if (result.groups.size > 0 || result.crash !== null) saveRepros(result, path.join(ROOT, 'fuzz-out', 'suite'));
  }, 180_000);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  afterAll(() => target?.stop());

  it('the corpus covers every operation in every binding it supports, and the metadata pages', () => {
    const seeds = new Set(corpus().map((d) => d.seed));
    for (const op of operationList) {
      const bindings = httpBindable(op) ? ['soap11', 'soap12', 'get', 'post'] : ['soap11', 'soap12'];
      for (const b of bindings) expect(seeds, `${b}:${op.name}`).toContain(`${b}:${op.name}`);
      expect(seeds).toContain(`meta:op=${op.name}`);
    }
    for (const page of ['help', 'wsdl', 'disco', 'head-wsdl']) expect(seeds).toContain(`meta:${page}`);
  });

  it('cases are deterministic: the same seed and number give the same request', () => {
    for (const i of [0, 1, 999, 12_345]) expect(generateCase(SEED, i)).toEqual(generateCase(SEED, i));
    expect(generateCase(SEED, 1)).not.toEqual(generateCase(SEED + 1, 1));
  });

  it(`runs ${CASES} cases and the gateway process stays up`, () => {
    expect(result.cases).toBe(CASES);
    expect(result.crash).toBeNull();
    expect(target.exit).toBeNull();
  });

  it('a valid LoginYInsertarEvento succeeds and is stored after every 1,000 cases', () => {
    expect(result.canaries.failed).toEqual([]);
    expect(result.canaries.passed).toBe(CASES / 1_000 + 1);
  });

  it('every answer arrives and is a documented status and shape', () => {
    // The summary above lists each kind with its smallest repro.
    const kinds = [...result.groups.values()].map((g) => `${g.kind} (${g.count}×, e.g. npm run fuzz -- --seed ${SEED} --case ${g.repro.index})`);
    expect(kinds).toEqual([]);
  });
});
