/**
 * Redis stalls (issue 28): the gateway (sessions, providers, lockouts, the resend dedupe) and the
 * worker (last-report times) reach Redis through a fault proxy that black-holes their connections
 * (open, silent), makes them half-open, resets them, or slows every chunk. During each fault every
 * insert is answered within APPEND_TIMEOUT_MS + 1 s (-5: a command times out after
 * REDIS_COMMAND_TIMEOUT_MS); after the heal, with the stalled connections still dead, inserts are
 * acknowledged again within 10 s; every acknowledged event, and every event answered -5 and
 * resent, is stored exactly once; memory and logs stay flat. Last, the last resort: a gateway
 * whose Redis client cannot heal itself exits 1 once STUCK_EXIT_SECONDS passed while Redis answers
 * a fresh connection. Runs alone (the "faults" project).
 */
import { describe, expect, it } from 'vitest';
import { FaultProxy } from '../helpers/fault-proxy.js';
import { startProc } from '../helpers/processes.js';
import { services, uniqueName } from '../helpers/services.js';
import { sleep } from '../helpers/wait.js';
import { gatewayEngineStallCases, tally } from './stall-run.js';

describe('Redis stalls: the gateway and the worker behind a fault proxy', () => {
  const stalls = gatewayEngineStallCases('redis');
  const cases = stalls.cases;

  it('every acknowledged event is stored exactly once, and every resent one too', { timeout: 180_000 }, async () => {
    const run = stalls.run();
    await run.load.stop();
    const t = await tally(run);
    expect(t.acknowledged).toBeGreaterThan(300);
    expect(t.lost).toBe(0);
    expect(t.twice).toBe(0);
    expect(t.resent).toBeGreaterThan(0);
    expect(t.resentLost).toBe(0);
    expect(cases.length).toBe(4);
  });
});

describe('the last resort: a gateway whose Redis client cannot heal itself', () => {
  it('exits 1 after STUCK_EXIT_SECONDS, with one line saying which client and why, while Redis answers a fresh connection', { timeout: 120_000 }, async () => {
    const s = services();
    const redis = new URL(s.redisUrl);
    const proxy = await FaultProxy.start({ host: redis.hostname, port: Number(redis.port) });
    const gateway = await startProc('gateway', {
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      REDIS_KEY_PREFIX: `${uniqueName('stuck')}:`,
      // A command deadline far away: its dead connections are not replaced in the test's time,
      // as a client that cannot heal itself (a library bug) would keep them.
      REDIS_COMMAND_TIMEOUT_MS: '600000',
      STUCK_EXIT_SECONDS: '5',
      KAFKA_BROKERS: s.kafkaBrokers.join(','),
      KAFKA_TOPIC: uniqueName('stuck_events'),
      GATEWAY_THREADS: '1',
      ADMIN_TOKEN: 'stuck-token',
      HOST: '127.0.0.1',
      PORT: '0',
      ADMIN_PORT: '0',
      LOG_LEVEL: 'info',
    });
    try {
      // Its connections die and stay dead; new ones work (the heal): only a fresh client reaches Redis.
      proxy.blackHole();
      proxy.heal();
      const started = Date.now();
      const code = await Promise.race([gateway.exited, sleep(60_000).then(() => 'still running')]);
      expect(code, gateway.logTail()).toBe(1);
      const seconds = (Date.now() - started) / 1000;
      const fatal = gateway
        .lines()
        .map((l) => JSON.parse(l) as { level: number; msg: string; component?: string })
        .filter((l) => l.level >= 60);
      expect(fatal).toHaveLength(1);
      expect(fatal[0]!.msg).toMatch(/^Redis client: failing for \d+ s while Redis answers a fresh connection; exiting \(code 1\) so the supervisor restarts the process$/);
      expect(fatal[0]!.component).toBe('Redis client');
      console.log(`[stall] redis stuck client: exited 1 after ${seconds.toFixed(1)} s (STUCK_EXIT_SECONDS 5, checked every 5 s)`);
      expect(seconds).toBeLessThan(30);
    } finally {
      await gateway.stop();
      await proxy.close();
    }
  });
});
