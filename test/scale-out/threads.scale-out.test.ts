/**
 * GATEWAY_THREADS in the scale-out mode, against the real Redis and Kafka: with each thread's
 * own clients (GATEWAY_THREAD_CLIENTS=own, the default) and with the threads calling Redis and
 * Kafka through the main thread's clients (shared). Calls go over connections of their own, so
 * they land on both threads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { decodeEvent } from '../../shared/events/wire.js';
import { credentials, event, sessionCookie, TestApp, xmlParams } from '../helpers/harness.js';
import { services, uniqueName } from '../helpers/services.js';
import { freshSoap11, insertsAcrossClose, resultOf, servedBy } from '../helpers/threads.js';

const SPREAD = 24;

function scaleOutEnv(clients: string): Record<string, string> {
  const s = services();
  return {
    REDIS_URL: s.redisUrl,
    REDIS_KEY_PREFIX: `${uniqueName('thr')}:`,
    KAFKA_BROKERS: s.kafkaBrokers.join(','),
    KAFKA_TOPIC: uniqueName('thr-events'),
    GATEWAY_THREADS: '2',
    GATEWAY_THREAD_CLIENTS: clients,
    LOCKOUT_MAX_FAILURES: '3',
    APPEND_TIMEOUT_MS: '5000',
  };
}

/** The ids of every event on the topic, read from the beginning up to the high watermarks. */
async function idsOnTopic(brokers: string[], topic: string): Promise<Set<number>> {
  const kafka = new Kafka({ brokers, clientId: uniqueName('thr-read'), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const total = offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  const ids = new Set<number>();
  if (total === 0) return ids;
  const consumer = kafka.consumer({ groupId: uniqueName('thr-read'), maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    let read = 0;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${read} of ${total} messages of ${topic}`)), 20_000);
      consumer
        .run({
          eachMessage: async ({ message }) => {
            ids.add(Number(decodeEvent(message.value ?? Buffer.alloc(0)).id));
            if (++read >= total) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return ids;
}

const insert = (t: TestApp, overrides: Record<string, string>) =>
  freshSoap11(t, 'LoginYInsertarEvento', xmlParams({ ...credentials(), ...event(overrides) }));

const both = async (t: TestApp, operation: string): Promise<void> => {
  const { main, all } = await servedBy(t, operation);
  expect(main, `${operation} answered on the main thread`).toBeGreaterThan(0);
  expect(all - main, `${operation} answered on the other thread`).toBeGreaterThan(0);
};

describe.each(['shared', 'own'])('two front-end threads, scale-out, GATEWAY_THREAD_CLIENTS=%s', (clients) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start(scaleOutEnv(clients));
    await t.provider('acme', 'secret-1');
    await t.provider('locky', 'secret-1');
  });
  afterAll(() => t.stop());

  it('ready: every thread serves and answers', async () => {
    expect((await fetch(`${t.app.admin.url}/readyz`)).status).toBe(200);
  });

  it('a session opened on one thread is live on every thread', async () => {
    const cookies = await Promise.all(Array.from({ length: SPREAD }, () => freshSoap11(t, 'Login', xmlParams(credentials())).then(sessionCookie)));
    const replies = await Promise.all(cookies.map((cookie, i) => freshSoap11(t, 'InsertarEvento', xmlParams(event({ Codigo: `s-${i}` })), cookie)));
    for (const reply of replies) expect(resultOf(reply)).toBeGreaterThan(0);
    await both(t, 'Login');
    await both(t, 'InsertarEvento');
  });

  it('failed logins on any thread count towards one lockout', async () => {
    for (let i = 0; i < 3; i++) await freshSoap11(t, 'Login', xmlParams(credentials('locky', 'wrong')));
    const right = await Promise.all(Array.from({ length: SPREAD }, () => freshSoap11(t, 'Login', xmlParams(credentials('locky', 'secret-1')))));
    for (const reply of right) expect(reply.text).toContain('<LoginResult>false</LoginResult>');
  });

  it('ids are unique across threads, a resend on any thread gets the first id', async () => {
    const ids = (await Promise.all(Array.from({ length: 40 }, (_, i) => insert(t, { Codigo: `u-${i}` })))).map(resultOf);
    for (const id of ids) expect(id).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(ids.length);
    const copies = new Set((await Promise.all(Array.from({ length: SPREAD }, () => insert(t, { Codigo: 'resent' })))).map(resultOf));
    expect(copies.size).toBe(1);
    expect([...copies][0]).toBeGreaterThan(0);
    await both(t, 'LoginYInsertarEvento');
  });

  it('every event acknowledged before or during the stop is on the topic', async () => {
    // Stop once the first answers are back, with the rest still on their way (whatever the machine's load).
    const acked = await insertsAcrossClose(t, 120, (i) => insert(t, { Codigo: `g-${i}` }));
    expect(acked.length).toBeGreaterThanOrEqual(10);
    const onTopic = await idsOnTopic(t.config.kafka.brokers!, t.config.kafka.topic);
    for (const id of acked) expect(onTopic.has(id)).toBe(true);
  });
});
