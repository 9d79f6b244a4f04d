/**
 * The stuck watchdog: a component failing past the limit stops the process only while its engine
 * answers a fresh connection, with one line saying which and why; never before the limit, never
 * while the engine itself is unreachable, and a recovery resets the clock, also one between two
 * checks when the component keeps its own count.
 */
import { describe, expect, it } from 'vitest';
import { StuckWatchdog, type WatchedComponent } from '../../../../shared/runtime/stuck-watchdog.js';

function harness(limitMs = 60_000) {
  let now = 0;
  const lines: { level: string; o: object; m: string }[] = [];
  const stuck: string[] = [];
  const state = { healthy: true, answers: true, engineChecks: 0 };
  const component: WatchedComponent = {
    name: 'Kafka sends',
    engine: 'Kafka',
    healthy: () => state.healthy,
    engineAnswers: async () => {
      state.engineChecks++;
      return state.answers;
    },
  };
  const watchdog = new StuckWatchdog([component], {
    limitMs,
    logger: { fatal: (o, m) => lines.push({ level: 'fatal', o, m }), warn: (o, m) => lines.push({ level: 'warn', o, m }) },
    now: () => now,
  });
  void watchdog.failed.then((err) => stuck.push(err.message));
  return { watchdog, lines, stuck, state, advance: (ms: number) => (now += ms) };
}

describe('StuckWatchdog', () => {
  it('exits past the limit while the engine answers a fresh connection, saying which and why', async () => {
    const h = harness();
    h.state.healthy = false;
    expect(await h.watchdog.check()).toBe(false); // the clock starts
    h.advance(59_000);
    expect(await h.watchdog.check()).toBe(false);
    expect(h.state.engineChecks).toBe(0); // not asked before the limit
    h.advance(1_000);
    expect(await h.watchdog.check()).toBe(true);
    expect(h.stuck).toEqual(['Kafka sends: failing for 60 s while Kafka answers a fresh connection; exiting (code 1) so the supervisor restarts the process']);
    expect(h.lines.filter((l) => l.level === 'fatal')).toHaveLength(1);
    expect(h.lines[0]!.o).toEqual({ component: 'Kafka sends', engine: 'Kafka', failingForSeconds: 60 });
    // Once only.
    h.advance(10_000);
    expect(await h.watchdog.check()).toBe(false);
    expect(h.stuck).toHaveLength(1);
  });

  it('waits while the engine does not answer either (down or cut off: a restart would not help)', async () => {
    const h = harness();
    h.state.healthy = false;
    h.state.answers = false;
    await h.watchdog.check();
    h.advance(120_000);
    expect(await h.watchdog.check()).toBe(false);
    expect(h.stuck).toEqual([]);
    expect(h.state.engineChecks).toBe(1);
    // The engine is back but the component is not: now it exits.
    h.state.answers = true;
    h.advance(5_000);
    expect(await h.watchdog.check()).toBe(true);
  });

  it('a recovery starts the clock again', async () => {
    const h = harness();
    h.state.healthy = false;
    await h.watchdog.check();
    h.advance(50_000);
    await h.watchdog.check();
    h.state.healthy = true;
    await h.watchdog.check();
    h.state.healthy = false;
    await h.watchdog.check();
    h.advance(50_000);
    expect(await h.watchdog.check()).toBe(false);
    expect(h.state.engineChecks).toBe(0);
  });

  it('a component that keeps its own count: a success between two checks that both find it failing starts the clock again', async () => {
    let now = 0;
    let since: number | null = 0;
    const pieces: WatchedComponent = { name: 'ClickHouse inserts', engine: 'ClickHouse', healthy: () => since === null, failingSince: () => since, engineAnswers: async () => true };
    const w = new StuckWatchdog([pieces], { limitMs: 5000, logger: { fatal: () => {}, warn: () => {} }, now: () => now });
    expect(await w.check()).toBe(false);
    // Failing at every check, 5 s apart, but a piece went in between each (its count started again).
    for (let i = 1; i <= 10; i++) {
      now = i * 5000;
      since = now - 2000;
      expect(await w.check()).toBe(false);
    }
    // Then nothing goes in for 5 s: stuck.
    now += 3000;
    expect(await w.check()).toBe(true);
    expect((await w.failed).message).toMatch(/^ClickHouse inserts: failing for 5 s/);
  });

  it('a component whose health check throws counts as failing', async () => {
    let now = 0;
    const broken: WatchedComponent = { name: 'Redis client', engine: 'Redis', healthy: () => Promise.reject(new Error('boom')), engineAnswers: async () => true };
    const w = new StuckWatchdog([broken], { limitMs: 1000, logger: { fatal: () => {}, warn: () => {} }, now: () => now });
    expect(await w.check()).toBe(false);
    now = 1000;
    expect(await w.check()).toBe(true);
    expect((await w.failed).message).toMatch(/^Redis client: failing for 1 s while Redis answers a fresh connection;/);
  });
});
