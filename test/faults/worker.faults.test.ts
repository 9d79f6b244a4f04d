/**
 * The worker while ClickHouse or Kafka is down: runs alone (the "faults" project) because it stops
 * the shared servers.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { uniqueName } from '../helpers/services.js';
import {
  committed,
  counts,
  ensureClickHouseUp,
  ids,
  makeEvent,
  newDatabase,
  newTopic,
  produce,
  RecordingMetrics,
  ROOT,
  sleep,
  start,
  sumCommitted,
  useWorkerFixture,
  waitFor,
  type Logged,
} from '../helpers/worker-fixture.js';

useWorkerFixture();

const service = (action: 'up' | 'down', name: string) =>
  execFileSync('bash', [path.join(ROOT, `scripts/services/${action}.sh`), name], { cwd: ROOT, stdio: 'pipe', timeout: 120_000 });

describe('worker while Kafka restarts', () => {
  it('stays up and says why while the broker is gone, then consumes again; never fatal', async () => {
    const db = newDatabase();
    const groupId = uniqueName('wg');
    const topic = await newTopic(4);
    const log: Logged[] = [];
    const fatal: Error[] = [];
    const w = await start({ topic, groupId, database: db, batchRows: 100, batchMs: 100, onFatal: (e) => fatal.push(e) }, log);
    await produce(topic, ids(50, 1n).map((id) => ({ id, event: makeEvent({ systemUser: 'kafka-down' }) })));
    await waitFor('first rows committed', async () => sumCommitted(await committed(groupId, topic)) === 50);
    expect(w.status()).toEqual({ ready: true, phase: 'consuming', reason: null });
    try {
      service('down', 'kafka');
      const down = await waitFor('not ready', () => (w.status().ready ? undefined : w.status()), 60_000);
      expect(['waiting', 'restarting']).toContain(down.phase);
      expect(down.reason).toMatch(/Kafka/);
      await sleep(3_000);
      expect(w.status().ready).toBe(false);
      expect(log.some((l) => /(retriable); retrying|Kafka fetches fail/.test(l.message))).toBe(true);
    } finally {
      service('up', 'kafka');
    }
    await waitFor('ready again', () => w.status().ready, 90_000);
    // Failing fetches end with one "recovered" line, also when the session was replaced meanwhile.
    const fetchLines = (): string[] => log.map((l) => l.message).filter((m) => m.startsWith('Kafka fetches fail'));
    if (fetchLines().length > 0) await waitFor('fetches recovered', () => fetchLines().some((m) => m.endsWith(': recovered')), 30_000);
    await produce(topic, ids(50, 1000n).map((id) => ({ id, event: makeEvent({ systemUser: 'kafka-down' }) })));
    await waitFor('the new rows committed', async () => sumCommitted(await committed(groupId, topic)) === 100, 60_000);
    expect(await counts(db)).toMatchObject({ rows: 100, ids: 100 });
    expect(fatal).toEqual([]);
    expect(log.some((l) => /non-retriable/.test(l.message))).toBe(false);
    await w.stop();
  }, 240_000);
});

describe('worker while ClickHouse is down', () => {
  it('commits nothing and pauses while down, then catches up with no loss', async () => {
    const db = newDatabase();
    const groupId = uniqueName('wg');
    const topic = await newTopic(4);
    const log: Logged[] = [];
    const metrics = new RecordingMetrics();
    const w = await start(
      { topic, groupId, database: db, batchRows: 200, batchMs: 100, maxBufferedRows: 400, metrics: metrics.sink },
      log,
    );
    await produce(
      topic,
      ids(100, 1n).map((id) => ({ id, event: makeEvent({ systemUser: 'down' }) })),
    );
    await waitFor('first rows committed', async () => sumCommitted(await committed(groupId, topic)) === 100);
    try {
      execFileSync('bash', [path.join(ROOT, 'scripts/services/down.sh'), 'clickhouse'], { cwd: ROOT, stdio: 'pipe', timeout: 60_000 });
      await produce(
        topic,
        ids(3000, 1000n).map((id) => ({ id, event: makeEvent({ systemUser: 'down' }) })),
      );
      await waitFor('insert retries', () => w.stats.insertRetries >= 3);
      await waitFor('paused with a full buffer', () => w.stats.paused);
      await sleep(1_000);
      // Nothing committed past what was stored; lag shows the backlog; memory is bounded.
      expect(sumCommitted(await committed(groupId, topic))).toBe(100);
      await waitFor('lag grows', () => Object.values(w.stats.lag).reduce((a, b) => a + b, 0) === 3000);
      expect(w.stats.buffered).toBeLessThanOrEqual(400);
      expect(log.some((l) => /ClickHouse insert failed/.test(l.message))).toBe(true);
    } finally {
      ensureClickHouseUp();
    }
    await waitFor('caught up', async () => sumCommitted(await committed(groupId, topic)) === 3100, 60_000);
    await waitFor('lag back to 0', () => Object.values(w.stats.lag).reduce((a, b) => a + b, 0) === 0);
    expect(await counts(db)).toMatchObject({ rows: 3100, ids: 3100 });
    expect(w.stats.paused).toBe(false);
    await w.stop();
  }, 180_000);
});

