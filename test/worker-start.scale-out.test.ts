/**
 * The worker against Kafka that is not ready for it, on the real services: started before its topic
 * exists (the measured failure: "This server does not host this topic-partition", then "worker
 * failed to start"), it now stays up, says why on /readyz, and consumes once a gateway created the
 * topic. A non-retriable broker error ends it through onFatal, logged as such. Broker restarts at
 * run time are in test/faults/worker.faults.test.ts; which errors are retried,
 * test/unit/shared/backends/kafka/errors.unit.test.ts.
 */
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { brokerErrorType } from '../shared/backends/kafka/errors.js';
import { loadConfig } from '../shared/config/index.js';
import { Metrics } from '../shared/metrics.js';
import { startWorkerProcess, type WorkerProcess } from '../worker/process.js';
import { createWorker, type Worker } from '../worker/run.js';
import { credentials, event, TestApp, xmlParams } from './helpers/harness.js';
import { services, uniqueName } from './helpers/services.js';
import { CH, newDatabase, RecordingSink, testLogger, type Logged, useWorkerFixture, waitFor } from './helpers/worker-fixture.js';

useWorkerFixture();

const idOf = (text: string): number => Number(/Result>(-?\d+)</.exec(text)?.[1] ?? NaN);

describe('worker started before its topic exists', () => {
  const stops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }, 60_000);

  it('stays up, /readyz says why, then consumes once a gateway created the topic', async () => {
    const s = services();
    const env: Record<string, string> = {
      REDIS_URL: s.redisUrl,
      REDIS_KEY_PREFIX: `${uniqueName('ws')}:`,
      KAFKA_BROKERS: s.kafkaBrokers.join(','),
      KAFKA_TOPIC: uniqueName('not_yet'),
      KAFKA_GROUP_ID: uniqueName('worker'),
      CLICKHOUSE_URL: s.clickhouseUrl,
      CLICKHOUSE_DATABASE: newDatabase(),
      WORKER_BATCH_MS: '100',
      ADMIN_HOST: '127.0.0.1',
      ADMIN_PORT: '0',
    };
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const worker: WorkerProcess = await startWorkerProcess(loadConfig(env), logger, new Metrics({ defaults: false }), { probes: true });
    stops.push(() => worker.close());
    const readyz = async () => {
      const res = await fetch(`${worker.probesUrl}/readyz`);
      return { status: res.status, body: (await res.json()) as { status: string; reason?: string } };
    };

    // Not ready, saying why, and retrying (not exiting) for a while: logged once, then with a count.
    const waiting = await waitFor('a not-ready answer naming the topic', async () => {
      const r = await readyz();
      return r.status === 503 && r.body.reason?.includes(env.KAFKA_TOPIC!) ? r : undefined;
    });
    expect(waiting.body).toEqual({ status: 'unavailable', reason: `waiting for Kafka topic ${env.KAFKA_TOPIC}: no such topic yet` });
    const retrying = (l: string) => l.includes('Kafka consumer cannot run (retriable); retrying');
    const still = await waitFor('a count of the retries since', () => lines.find((l) => retrying(l) && l.includes('failuresSinceLastLine')), 20_000);
    expect((JSON.parse(still) as { failuresSinceLastLine: number }).failuresSinceLastLine).toBeGreaterThanOrEqual(2);
    expect(lines.filter(retrying).length).toBe(2);
    expect((await readyz()).status).toBe(503);
    expect(lines.some((l) => /non-retriable|failed to start/.test(l))).toBe(false);

    // A gateway starts: it creates the topic; the worker joins and stores what the gateway takes.
    const gateway = await TestApp.start(env);
    stops.push(() => gateway.stop());
    await gateway.provider('acme', 'secret-1');
    const id = idOf((await gateway.soap11('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event({ Codigo: 'late-topic' }) }))).text);
    expect(id).toBeGreaterThan(0);
    await waitFor('ready', async () => (await readyz()).status === 200, 30_000);
    expect((await readyz()).body).toEqual({ status: 'ok' });
    const ch = (gateway.app.backends as unknown as { clickhouse: { query(q: { query: string; format: 'JSONEachRow' }): Promise<{ json(): Promise<unknown> }> } }).clickhouse;
    const rows = await waitFor('the event in ClickHouse', async () => {
      const r = await ch.query({ query: `SELECT id, codigo FROM ${env.CLICKHOUSE_DATABASE}.events FINAL WHERE id = ${id}`, format: 'JSONEachRow' });
      const found = (await r.json()) as { id: string; codigo: string }[];
      return found.length > 0 ? found : undefined;
    }, 30_000);
    expect(rows).toEqual([{ id: String(id), codigo: 'late-topic' }]);
  }, 90_000);

  it('ends through onFatal on a non-retriable broker error, and says so', async () => {
    const log: Logged[] = [];
    const fatal: Error[] = [];
    const w: Worker = await createWorker({
      brokers: services().kafkaBrokers,
      // Kafka refuses this name: INVALID_TOPIC_EXCEPTION, which no retry can fix.
      topic: 'not a valid topic!',
      groupId: uniqueName('wg'),
      clientId: uniqueName('worker'),
      clickhouse: { ...CH, database: newDatabase() },
      batchRows: 10,
      batchMs: 100,
      lastReports: new RecordingSink(),
      logger: testLogger(log),
      backoff: { initialMs: 50, maxMs: 200 },
      onFatal: (err) => fatal.push(err),
    });
    stops.push(() => w.abort());
    await expect(w.joined).rejects.toThrow(/Received response with error/);
    expect(fatal).toHaveLength(1);
    expect(brokerErrorType(fatal[0])).toBe('INVALID_TOPIC_EXCEPTION');
    const why = 'ResponseError: Received response with error while executing API Metadata(v12) (INVALID_TOPIC_EXCEPTION: The request attempted to perform an operation on an invalid topic.)';
    expect(w.status()).toEqual({ ready: false, phase: 'failed', reason: `non-retriable Kafka error: ${why}` });
    const line = log.find((l) => l.level === 'error' && l.message.startsWith('worker stopped: non-retriable Kafka error'));
    expect(line?.fields.err).toBe(why);
    expect(log.some((l) => l.message.includes('retrying'))).toBe(false);
  }, 60_000);
});
