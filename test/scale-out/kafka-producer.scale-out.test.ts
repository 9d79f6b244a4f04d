/**
 * The event log's producer (@platformatic/kafka) against the real broker (scripts/services): how
 * its errors are classified, a send the broker refuses for its content, and partitions added to
 * the topic while the log runs. The rest of the event log's behaviour is in kafka-event-log.scale-out.test.ts.
 */
import { Admin, NetworkError, ProtocolError, producerSendsChannel, ResponseError } from '@platformatic/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTopic, KafkaAdmin } from '../../shared/backends/kafka/client.js';
import { brokerErrorType, describeKafkaError, isLeadershipError, isMessageError } from '../../shared/backends/kafka/errors.js';
import { KeyPartitioner, openKafkaEventLog, type KafkaEventLog, type KafkaEventLogOptions } from '../../shared/backends/kafka/event-log.js';
import type { DedupeIndex, IdAllocator } from '../../shared/backends/scale-out-types.js';
import { messageKey } from '../../shared/events/wire.js';
import { eventRecords } from '../helpers/event-records.js';
import { services, uniqueName } from '../helpers/services.js';

const PRODUCE_API = 0;

/** A produce response with one partition's error code, as the client reports it. */
const produceError = (code: number): ResponseError => new ResponseError(PRODUCE_API, 9, { '/topics/0/partitions/1': [code, null] }, {});

describe('@platformatic/kafka errors', () => {
  it('classifies partition leadership moves and refusals of content, and names the broker error', () => {
    const notLeader = produceError(6);
    expect(brokerErrorType(notLeader)).toBe('NOT_LEADER_OR_FOLLOWER');
    expect(isLeadershipError(notLeader)).toBe(true);
    expect(isMessageError(notLeader)).toBe(false);
    expect(isLeadershipError(produceError(5))).toBe(true); // LEADER_NOT_AVAILABLE
    expect(isLeadershipError(new ProtocolError('UNKNOWN_TOPIC_OR_PARTITION'))).toBe(true);

    const tooLarge = produceError(10);
    expect(brokerErrorType(tooLarge)).toBe('MESSAGE_TOO_LARGE');
    expect(isMessageError(tooLarge)).toBe(true);
    expect(isLeadershipError(tooLarge)).toBe(false);
    expect(isMessageError(produceError(87))).toBe(true); // INVALID_RECORD

    // Neither: a broker that cannot be reached, an authorization failure.
    const refused = new NetworkError('Connection to 127.0.0.1:1 failed.', { cause: new Error('connect ECONNREFUSED 127.0.0.1:1') });
    expect(brokerErrorType(refused)).toBeNull();
    expect(isLeadershipError(refused) || isMessageError(refused)).toBe(false);
    expect(isLeadershipError(produceError(29)) || isMessageError(produceError(29))).toBe(false); // TOPIC_AUTHORIZATION_FAILED

    // Logs name the innermost cause.
    expect(describeKafkaError(refused)).toContain('ECONNREFUSED');
    expect(describeKafkaError(notLeader)).toContain('(NOT_LEADER_OR_FOLLOWER: ');
  });
});

class CountingIds implements IdAllocator {
  private next = 1n;
  async allocate(count: number): Promise<bigint[]> {
    return Array.from({ length: count }, () => this.next++);
  }
}

const noDedupe: DedupeIndex = {
  claim: async (entries) => entries.map(() => null),
  release: async () => {},
};

const silent: KafkaEventLogOptions['logger'] = { info: () => {}, warn: () => {}, error: () => {} };

describe('KafkaEventLog with the real broker', () => {
  const brokers = services().kafkaBrokers;
  let admin: KafkaAdmin;
  let raw: Admin;
  const logs: KafkaEventLog[] = [];
  const makeEvent = eventRecords({ eventTimeBase: Date.now() - 60_000, stepMs: 1, receivedAt: Date.now(), dedupePrefix: `producer-${process.pid}-` });

  beforeAll(async () => {
    admin = await KafkaAdmin.open({ brokers, clientId: 'producer-test', requestTimeoutMs: 5000 });
    raw = new Admin({ clientId: 'producer-test-raw', bootstrapBrokers: brokers });
  });

  afterAll(async () => {
    await Promise.allSettled(logs.map((l) => l.close()));
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
    await admin?.close();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
    await raw?.close();
  });

  async function open(topic: string, overrides: Partial<KafkaEventLogOptions> = {}): Promise<KafkaEventLog> {
    const log = await openKafkaEventLog({
      brokers,
      topic,
      clientId: 'producer-test',
      ids: new CountingIds(),
      dedupe: noDedupe,
      dedupeWindowMs: 600_000,
      lingerMs: 0,
      batchEvents: 500,
      maxInFlightEvents: 1000,
      sendTimeoutMs: 5000,
      logger: silent,
      ...overrides,
    });
    logs.push(log);
    return log;
  }

  it('every send asks for acks=all (the client would default to the leader alone)', async () => {
    const topic = uniqueName('producer-acks');
    await ensureTopic(admin, { topic, partitions: 2, replicationFactor: 1 });
    const log = await open(topic);
    const acks: unknown[] = [];
    const onStart = (context: object): void => {
      const options = 'options' in context ? context.options : undefined;
      acks.push(typeof options === 'object' && options !== null && 'acks' in options ? options.acks : 'none');
    };
    const handlers = { start: onStart, end: () => {}, asyncStart: () => {}, asyncEnd: () => {}, error: () => {} };
    producerSendsChannel.subscribe(handlers);
    try {
      expect((await log.append([makeEvent(), makeEvent({ dominio: 'ACK002' })])).every((o) => o.ok)).toBe(true);
      expect((await log.append([makeEvent({ dominio: 'ACK003' })]))[0]?.ok).toBe(true);
    } finally {
      producerSendsChannel.unsubscribe(handlers);
    }
    expect(acks.length).toBeGreaterThanOrEqual(2);
    expect(new Set(acks)).toEqual(new Set([-1]));
  });

  it('a send the broker refuses for its size fails its events, not the broker state', async () => {
    const topic = uniqueName('producer-large');
    await ensureTopic(admin, { topic, partitions: 1, replicationFactor: 1 });
    // Past the broker's message.max.bytes (1 MB by default) but within what this log lets through.
    const log = await open(topic, { maxSendBytes: 4_000_000 });
    const refused = await log.append([makeEvent({ crudo: 'x'.repeat(1_500_000) })]);
    expect(refused).toEqual([{ ok: false, reason: 'unavailable' }]);
    expect(log.failing).toBe(false);
    expect(log.stats).toMatchObject({ failedSends: 1, failedEvents: 1 });
    // Not failing fast: the next append goes straight through.
    expect((await log.append([makeEvent()]))[0]?.ok).toBe(true);
  });

  it('uses partitions added to the topic while it runs', async () => {
    const topic = uniqueName('producer-grow');
    await ensureTopic(admin, { topic, partitions: 2, replicationFactor: 1 });
    const log = await open(topic, { partitionCheckMs: 100 });
    expect(log.stats.partitions).toBe(2);

    await raw.createPartitions({ topics: [{ name: topic, count: 4 }] });
    const until = Date.now() + 15_000;
    while (log.stats.partitions < 4 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(log.stats.partitions).toBe(4);

    // Events of vehicles whose keys now map to the new partitions are stored there.
    const reference = await KeyPartitioner.open(topic, 4);
    const events = Array.from({ length: 40 }, (_, i) => makeEvent({ dominio: `GROW${i}` }));
    const onNew = events.filter((e) => reference.partition(messageKey(e)) >= 2);
    expect(onNew.length).toBeGreaterThan(0);
    expect((await log.append(events)).every((o) => o.ok)).toBe(true);
    const offsets = await admin.offsets(topic);
    const stored = (p: number): number => Number(offsets.find((o) => o.partition === p)?.high ?? 0);
    expect(stored(2) + stored(3)).toBe(onNew.length);
  });
});
