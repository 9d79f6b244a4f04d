/**
 * Kafka stalls (issue 28): the gateway's producer and id blocks and the worker's consumer all
 * reach the broker through a fault proxy that black-holes their connections (open, silent), makes
 * them half-open, resets them, or slows every chunk. During each fault every insert is answered
 * within APPEND_TIMEOUT_MS + 1 s; after the heal, with the stalled connections still dead,
 * inserts are acknowledged again within 10 s; every acknowledged event, and every event answered
 * -5 and resent, is stored exactly once; memory and logs stay flat. Also 200 ms on every chunk for
 * 15 s: ingest slows, stays correct and recovers its rate. Runs alone (the "faults" project).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectCase, runCase, startStallRun, tally, type CaseFigures, type StallRun } from './stall-run.js';
import { sleep } from '../helpers/wait.js';

describe('Kafka stalls: the producer, the id blocks and the worker behind a fault proxy', () => {
  let run: StallRun;
  const cases: CaseFigures[] = [];
  beforeAll(async () => {
    run = await startStallRun('kafka');
  }, 120_000);
  afterAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
    await run?.stop();
  }, 60_000);

  it('black hole: answers within the deadline, acknowledged again within 10 s of the heal', { timeout: 120_000 }, async () => {
    const f = await runCase(run, 'black hole', () => run.proxy.blackHole());
    cases.push(f);
    expectCase(f);
    expect(f.minus5).toBeGreaterThan(0);
  });

  it('half-open connections: the same', { timeout: 120_000 }, async () => {
    const f = await runCase(run, 'half-open', () => run.proxy.halfOpen());
    cases.push(f);
    expectCase(f);
  });

  it('reset: the same', { timeout: 120_000 }, async () => {
    const f = await runCase(run, 'reset', () => run.proxy.reset());
    cases.push(f);
    expectCase(f);
  });

  it('slow (every chunk held 1 s): the same', { timeout: 120_000 }, async () => {
    const f = await runCase(run, 'slow 1000 ms', () => run.proxy.slow(1000));
    cases.push(f);
    expectCase(f);
  });

  it('200 ms on every chunk for 15 s: ingest slows, stays correct, and recovers its rate', { timeout: 120_000 }, async () => {
    const rate = (from: number, to: number) => run.load.attempts.filter((a) => a.endedAt >= from && a.endedAt < to && (a.code ?? 0) > 0).length / ((to - from) / 1000);
    const before = Date.now();
    await sleep(5000);
    const f = await runCase(run, 'latency 200 ms', () => run.proxy.slow(200), 15_000);
    cases.push(f);
    const beforeRate = rate(before, f.faultAt);
    const duringRate = rate(f.faultAt + 2000, f.healAt);
    const healed = Date.now();
    await sleep(6000);
    const afterRate = rate(healed, Date.now());
    console.log(`[stall] kafka latency 200 ms: acknowledged/s before ${beforeRate.toFixed(0)}, during ${duringRate.toFixed(0)}, after ${afterRate.toFixed(0)}`);
    expectCase(f);
    expect(duringRate).toBeGreaterThan(0);
    expect(duringRate).toBeLessThan(beforeRate);
    expect(afterRate).toBeGreaterThan(beforeRate * 0.6);
  });

  it('every acknowledged event is stored exactly once, and every resent one too', { timeout: 180_000 }, async () => {
    await run.load.stop();
    const t = await tally(run);
    expect(t.acknowledged).toBeGreaterThan(500);
    expect(t.lost).toBe(0);
    expect(t.twice).toBe(0);
    expect(t.resent).toBeGreaterThan(0);
    expect(t.resentLost).toBe(0);
    expect(cases.length).toBe(5);
  });
});
