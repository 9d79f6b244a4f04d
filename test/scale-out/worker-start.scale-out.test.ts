/**
 * The worker against Kafka that is not ready for it, on the real services: started before its topic
 * exists (the measured failure: "This server does not host this topic-partition", then "worker
 * failed to start"), it now stays up, says why on /readyz, and consumes once a gateway created the
 * topic. A non-retriable broker error ends it through onFatal, logged as such. Broker restarts at
 * run time are in test/faults/worker.faults.test.ts.
 */
import { KafkaJSConnectionError, KafkaJSGroupCoordinatorNotFound, KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError, KafkaJSSASLAuthenticationError } from 'kafkajs';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { describeKafkaError, isRetriableKafkaError } from '../../shared/backends/kafka/errors.js';
import { loadConfig } from '../../shared/config/index.js';
import { Metrics } from '../../shared/runtime/metrics.js';
import { startWorkerProcess, type WorkerProcess } from '../../worker/process.js';
import { createWorker, type Worker } from '../../worker/run.js';
import { credentials, event, TestApp, xmlParams } from '../helpers/harness.js';
import { services, uniqueName } from '../helpers/services.js';
import { CH, newDatabase, RecordingSink, testLogger, type Logged, useWorkerFixture, waitFor } from '../helpers/worker-fixture.js';

useWorkerFixture();

const idOf = (text: string): number => Number(/Result>(-?\d+)</.exec(text)?.[1] ?? NaN);

/** kafkajs' error classes take more arguments than its type declarations admit. */
type ErrorClass = new (message: string | Error, options?: { cause?: Error; retryCount?: number; retryTime?: number }) => Error;
const make = (cls: unknown, ...args: ConstructorParameters<ErrorClass>): Error => new (cls as ErrorClass)(...args);

/** kafkajs' protocol error for a broker error code, as its connection layer builds it. */
const protocolError = (type: string, code: number, retriable: boolean) =>
  new KafkaJSProtocolError({ message: `broker says ${type}`, type, code, retriable } as unknown as Error);

describe('Kafka error classification', () => {
  it('retries what waiting can fix, and nothing else', () => {
    const unknownTopic = protocolError('UNKNOWN_TOPIC_OR_PARTITION', 3, true);
    expect(isRetriableKafkaError(unknownTopic)).toBe(true);
    expect(isRetriableKafkaError(protocolError('LEADER_NOT_AVAILABLE', 5, true))).toBe(true);
    // kafkajs' own retries running out on a retriable cause: still retriable.
    expect(isRetriableKafkaError(new KafkaJSNumberOfRetriesExceeded(unknownTopic, { retryCount: 5, retryTime: 300 }))).toBe(true);
    expect(isRetriableKafkaError(new KafkaJSConnectionError('Connection error: ECONNREFUSED'))).toBe(true);
    // Marked non-retriable by kafkajs, but transient (a coordinator loading after a broker start).
    expect(isRetriableKafkaError(make(KafkaJSGroupCoordinatorNotFound, 'Failed to find group coordinator'))).toBe(true);
    // What kafkajs' retrier throws for a connection error it was told not to retry.
    const timeout = new KafkaJSConnectionError('Connection timeout');
    expect(isRetriableKafkaError(make(KafkaJSNonRetriableError, timeout, { cause: timeout }))).toBe(true);

    expect(isRetriableKafkaError(protocolError('TOPIC_AUTHORIZATION_FAILED', 29, false))).toBe(false);
    expect(isRetriableKafkaError(protocolError('INVALID_TOPIC_EXCEPTION', 17, false))).toBe(false);
    expect(isRetriableKafkaError(new KafkaJSNumberOfRetriesExceeded(protocolError('GROUP_AUTHORIZATION_FAILED', 30, false), { retryCount: 0, retryTime: 0 }))).toBe(false);
    expect(isRetriableKafkaError(make(KafkaJSSASLAuthenticationError, 'SASL PLAIN authentication failed'))).toBe(false);
    expect(isRetriableKafkaError(new TypeError('x is not a function'))).toBe(false);
    expect(isRetriableKafkaError('not even an error')).toBe(false);

    expect(describeKafkaError(unknownTopic)).toBe('KafkaJSProtocolError: broker says UNKNOWN_TOPIC_OR_PARTITION');
  });
});

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

    // Not ready, with the broker's own words, and retrying (not exiting) for a while.
    const waiting = await waitFor('a not-ready answer naming the topic', async () => {
      const r = await readyz();
      return r.status === 503 && r.body.reason?.includes('does not host this topic-partition') ? r : undefined;
    });
    expect(waiting.body).toEqual({
      status: 'unavailable',
      reason: `waiting for Kafka topic ${env.KAFKA_TOPIC}: KafkaJSProtocolError: This server does not host this topic-partition`,
    });
    await waitFor('several retries', () => lines.filter((l) => l.includes('Kafka consumer cannot start yet (retriable); retrying')).length >= 3);
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
    await expect(w.joined).rejects.toThrow(/invalid topic/);
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toMatchObject({ name: 'KafkaJSProtocolError', type: 'INVALID_TOPIC_EXCEPTION' });
    expect(w.status()).toEqual({
      ready: false,
      phase: 'failed',
      reason: 'non-retriable Kafka error: KafkaJSProtocolError: The request attempted to perform an operation on an invalid topic',
    });
    const line = log.find((l) => l.level === 'error' && l.message.startsWith('worker stopped: non-retriable Kafka error'));
    expect(line?.fields.err).toBe('KafkaJSProtocolError: The request attempted to perform an operation on an invalid topic');
    expect(log.some((l) => l.message.includes('retrying'))).toBe(false);
  }, 60_000);
});
