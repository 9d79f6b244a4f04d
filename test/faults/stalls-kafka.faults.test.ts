/**
 * Kafka stalls (issue 28): the gateway's producer and id blocks and the worker's consumer all
 * reach the broker through a fault proxy that black-holes their connections (open, silent), makes
 * them half-open, resets them, or slows every chunk. During each fault every insert is answered
 * within APPEND_TIMEOUT_MS + 1 s; after the heal, with the stalled connections still dead,
 * inserts are acknowledged again within 10 s; every acknowledged event, and every event answered
 * -5 and resent, is stored exactly once; memory and logs stay flat. Also 200 ms on every chunk for
 * 15 s: ingest slows, stays correct and recovers its rate. Runs alone (the "faults" project).
 */
import { describe, expect, it } from 'vitest';
import { expectCase, gatewayEngineStallCases, runCase, tally } from './stall-run.js';
import { sleep } from '../helpers/wait.js';

describe('Kafka stalls: the producer, the id blocks and the worker behind a fault proxy', () => {
  const stalls = gatewayEngineStallCases('kafka');
  const cases = stalls.cases;

  it('200 ms on every chunk for 15 s: ingest slows, stays correct, and recovers its rate', { timeout: 120_000 }, async () => {
    const run = stalls.run();
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
    const run = stalls.run();
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
