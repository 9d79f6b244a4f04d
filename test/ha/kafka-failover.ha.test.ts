/**
 * Kafka in its HA form (three KRaft brokers, replication factor 3, min.insync.replicas 2, no unclean
 * election) under ingest through two gateways and a worker, all processes: (c) the leader of the
 * busiest partition SIGKILLed mid-ingest and restarted later, and (d) a gateway and the worker
 * kill -9'd while it is down; (e) the leader of the busiest partition stalled (SIGSTOP: its
 * connections open, nothing answered) for 20 s, then resumed, and (f) the same for the broker
 * coordinating the worker's consumer group. Ingest goes on with two brokers; nothing acknowledged is
 * lost or twice, and no process dies of it.
 */
import { Connection, findCoordinatorV4, FindCoordinatorKeyTypes } from '@platformatic/kafka';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ha, killNode, redisSettled, report, resumeNode, sleep, stallNode, startLoad, startProc, startRun, stopRun, tally, upNode, waitFor, type Run } from './ha-cluster.js';

/** The stated bound: inserts are acknowledged again within this long after the leader died. */
const RESUME_BOUND_MS = 20_000;

const kafkaNodes = ['kafka-1', 'kafka-2', 'kafka-3'];

/** The run in progress, stopped by afterAll when a case fails midway. */
let current: Run | undefined;

/** The broker leading the partition of `topic` that holds the most records, as `kafka-N`. */
async function busiestLeader(topic: string): Promise<{ node: string; partition: number }> {
  const admin = new Kafka({ clientId: 'ha-test', brokers: ha.kafkaBrokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    const busiest = offsets.reduce((a, b) => (Number(b.high) > Number(a.high) ? b : a));
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    const partition = meta.topics[0]!.partitions.find((p) => p.partitionId === busiest.partition)!;
    return { node: `kafka-${partition.leader}`, partition: busiest.partition };
  } finally {
    await admin.disconnect();
  }
}

/**
 * Ingest through two gateways and a worker, the broker `pick` names frozen (SIGSTOP: its connections
 * open, nothing answered) for 20 s and then resumed; every acknowledged event must reach ClickHouse
 * and every process must have healed by itself.
 */
async function stallRun(label: string, pick: (r: Run) => Promise<{ node: string; partition: number }>): Promise<void> {
  for (const n of kafkaNodes) upNode(n);
  const r = await startRun();
  current = r;
  const load = startLoad(label.slice(1, 2), () => r.gateways.map((g) => g.serviceUrl), 6);
  await waitFor('ingest running', async () => load.acknowledgedSince(0) > 200, 60_000);

  const target = await pick(r);
  const stalledAt = Date.now();
  stallNode(target.node);
  let resumed: number;
  let ackedWhileStalled: number;
  try {
    // Requests to the stalled broker time out, its silent connections are replaced, and the
    // clients move to the new leaders and coordinator once the controller fenced the old one.
    resumed = await waitFor('an insert acknowledged after the stall', async () => load.answers.find((a) => a.startedAt > stalledAt + 200 && (a.code ?? 0) > 0)?.endedAt, RESUME_BOUND_MS + 10_000);
    await waitFor('ingest with the broker stalled', async () => load.acknowledgedSince(stalledAt + 2000) > 200, 60_000);
    await sleep(Math.max(0, stalledAt + 20_000 - Date.now()));
    ackedWhileStalled = load.acknowledgedSince(stalledAt);
  } finally {
    resumeNode(target.node);
  }
  const resumedNodeAt = Date.now();
  await waitFor('ingest after the broker resumed', async () => load.acknowledgedSince(resumedNodeAt + 1000) > 200, 60_000);
  await load.stop();

  const t = await tally(load.answers, r.env);
  const figures = { ...t, stalled: target.node, partition: target.partition, ackedWhileStalled, stalledSeconds: (resumedNodeAt - stalledAt) / 1000, resumedAfterSeconds: (resumed - stalledAt) / 1000 };
  report(label, figures);
  expect(ackedWhileStalled).toBeGreaterThan(300);
  expect(t.idsIssuedTwice).toBe(0);
  // Every process is still the one started: none died of the stall (nothing here restarts them).
  expect(r.worker.alive(), `the worker exited:\n${r.worker.logTail()}`).toBe(true);
  expect(r.gateways.every((g) => g.alive())).toBe(true);
  expect(t.lost, r.worker.logTail()).toBe(0);
  expect(resumed - stalledAt).toBeLessThan(RESUME_BOUND_MS);
  await stopRun(r);
  current = undefined;
}

/** The broker coordinating `groupId`, as `kafka-N`, asked of the cluster (FindCoordinator). */
async function groupCoordinator(groupId: string): Promise<string> {
  const [host, port] = ha.kafkaBrokers[0]!.split(':');
  const connection = new Connection('ha-test');
  await connection.connect(host!, Number(port));
  try {
    const answer = await findCoordinatorV4.api.async(connection, FindCoordinatorKeyTypes.GROUP, [groupId]);
    const coordinator = answer.coordinators[0]!;
    expect(coordinator.errorCode).toBe(0);
    return `kafka-${coordinator.nodeId}`;
  } finally {
    await connection.close();
  }
}

describe('Kafka broker failure (3 brokers, RF 3, min ISR 2)', () => {
  beforeAll(async () => {
    for (const n of kafkaNodes) upNode(n);
    await redisSettled();
  }, 180_000);
  afterAll(async () => {
    await stopRun(current);
    for (const n of kafkaNodes) upNode(n);
  }, 180_000);

  it('(c)+(d) leader of the busiest partition SIGKILLed, a gateway and the worker kill -9 meanwhile: ingest goes on, nothing lost, none twice', async () => {
    current = await startRun();
    const r = current;
    const load = startLoad('c', () => r.gateways.filter((g) => g.alive()).map((g) => g.serviceUrl), 6);
    await waitFor('ingest running', async () => load.acknowledgedSince(0) > 200, 60_000);

    const leader = await busiestLeader(r.env.KAFKA_TOPIC!);
    const killedAt = Date.now();
    killNode(leader.node);
    await sleep(1000);
    r.gateways[1]!.kill9();
    r.worker.kill9();
    const resumed = await waitFor('an insert acknowledged after the kill', async () => load.answers.find((a) => a.startedAt > killedAt + 200 && (a.code ?? 0) > 0)?.endedAt, RESUME_BOUND_MS + 10_000);
    r.gateways[1] = await startProc('gateway', r.env);
    r.worker = await startProc('worker', r.env);
    // Two of three brokers serve: ingest goes on through both gateways.
    await waitFor('ingest with two brokers', async () => load.acknowledgedSince(killedAt + 2000) > 300, 60_000);
    const restartAt = Date.now();
    const ackedWhileDown = load.acknowledgedSince(killedAt);
    upNode(leader.node);
    await sleep(3000);
    await load.stop();

    const t = await tally(load.answers, r.env);
    const figures = { ...t, killed: leader.node, partition: leader.partition, ackedWhileBrokerDown: ackedWhileDown, brokerDownSeconds: (restartAt - killedAt) / 1000, resumedAfterSeconds: (resumed - killedAt) / 1000 };
    report('(c)+(d) Kafka leader SIGKILL', figures);
    expect(t.acknowledged).toBeGreaterThan(500);
    expect(ackedWhileDown).toBeGreaterThan(300);
    expect(t.idsIssuedTwice).toBe(0);
    expect(t.lost).toBe(0);
    expect(resumed - killedAt).toBeLessThan(RESUME_BOUND_MS);
    await stopRun(current);
    current = undefined;
  });

  it('(e) leader of the busiest partition stalled (SIGSTOP) 20 s, then resumed: ingest goes on through the other brokers, nothing lost, none twice', async () => {
    await stallRun('(e) Kafka leader stalled (SIGSTOP)', (r) => busiestLeader(r.env.KAFKA_TOPIC!));
  });

  it("(f) the worker's group coordinator stalled (SIGSTOP) 20 s, then resumed: the worker leaves it for the new coordinator without dying, nothing lost, none twice", async () => {
    await stallRun('(f) Kafka group coordinator stalled (SIGSTOP)', async (r) => ({ node: await groupCoordinator(r.env.KAFKA_GROUP_ID!), partition: -1 }));
  });
});
