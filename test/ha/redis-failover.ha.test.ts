/**
 * Redis in its HA form (primary, replica, three Sentinels) under ingest through two gateways and a
 * worker, all separate processes following the Sentinels: (a) the primary kill -9'd, and a gateway
 * and the worker kill -9'd during the failover; (b) the same after the replication link was cut, so
 * that the promoted replica misses the primary's last writes; (e) the primary stalled (SIGSTOP:
 * connections open, nothing answered) until the Sentinels promote the replica, then resumed.
 * Nothing acknowledged may be lost, no id answered twice, and no operator told "queued" for a
 * command the failover lost.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ha,
  killNode,
  nodeClient,
  redisPrimary,
  redisSettled,
  report,
  resumeNode,
  sleep,
  stallNode,
  startLoad,
  startProc,
  startRun,
  stopRun,
  tally,
  upNode,
  waitFor,
  type Run,
} from './ha-cluster.js';
import { ANSWER_SLACK_MS, commandsLost, slowestAnswerMs, startCommandLoad, type CommandLoad } from '../helpers/failover-load.js';

/** The stated bound: inserts answer again within this long after the primary died. */
const RESUME_BOUND_MS = 20_000;

type Load = ReturnType<typeof startLoad>;

/** Operators queue commands through the admin API all along (helpers/failover-load.ts). */
function startCommands(run: Run): CommandLoad {
  return startCommandLoad(() => run.gateways, 'ha-token');
}

/** Seconds from the kill until the Sentinels named another primary, and until an insert was acknowledged again. */
async function failover(killed: string, killedAt: number, load: Load, r: Run): Promise<{ failoverSeconds: number; resumedAfterSeconds: number }> {
  const promoted = await waitFor('the replica promoted', async () => ((await redisPrimary()).node !== killed ? Date.now() : undefined), 60_000);
  const resumed = await waitFor(
    'an insert acknowledged after the kill',
    () => load.answers.find((a) => a.startedAt > killedAt + 600 && (a.code ?? 0) > 0)?.endedAt,
    RESUME_BOUND_MS + 10_000,
  ).catch((err: unknown) => {
    // What the gateways said and answered meanwhile: the only record of a run that did not resume.
    const since = load.answers.filter((a) => a.startedAt > killedAt);
    const codes = new Map<string, number>();
    for (const a of since) codes.set(String(a.code), (codes.get(String(a.code)) ?? 0) + 1);
    const logs = r.gateways.map((g, i) => `--- gateway ${i} (alive ${g.alive()}):\n${g.logTail()}`).join('\n');
    throw new Error(`${String(err)}\nanswers since the kill by code: ${JSON.stringify([...codes])}\n${logs}`);
  });
  return { failoverSeconds: (promoted - killedAt) / 1000, resumedAfterSeconds: (resumed - killedAt) / 1000 };
}

/** The killed primary back (as the new primary's replica), a little more load, then the tally. */
async function finish(r: Run, killed: string, load: Load, commands: CommandLoad) {
  upNode(killed);
  await sleep(4000);
  await load.stop();
  await commands.stop();
  return { t: await tally(load.answers, r.env), commandsLost: await commandsLost(r.stores, commands.queued) };
}

describe('Redis failover (Sentinel)', () => {
  let run: Run | undefined;
  beforeAll(() => redisSettled(), 120_000);
  afterAll(async () => {
    await stopRun(run);
    await redisSettled();
  }, 180_000);

  it('(a)+(d) primary kill -9 mid-ingest, a gateway and the worker kill -9 during the failover: nothing lost, no id twice', async () => {
    run = await startRun();
    const r = run;
    const load = startLoad('a', () => r.gateways.filter((g) => g.alive()).map((g) => g.serviceUrl), 6);
    const commands = startCommands(r);
    await waitFor('ingest running', async () => load.acknowledgedSince(0) > 200, 60_000);

    const primary = await redisPrimary();
    const killedAt = Date.now();
    killNode(primary.node);
    await sleep(500);
    r.gateways[1]!.kill9();
    r.worker.kill9();
    const times = await failover(primary.node, killedAt, load, r);
    r.gateways[1] = await startProc('gateway', r.env);
    r.worker = await startProc('worker', r.env);
    const { t, commandsLost } = await finish(r, primary.node, load, commands);
    report('(a)+(d) Redis primary kill -9', { ...t, ...times, commandsQueued: commands.queued.length, commandsLost });
    expect(t.acknowledged).toBeGreaterThan(200);
    expect(t.idsIssuedTwice).toBe(0);
    expect(t.lost).toBe(0);
    expect(times.resumedAfterSeconds * 1000).toBeLessThan(RESUME_BOUND_MS);
    expect(commandsLost).toBe(0);
    expect(commands.queued.length).toBeGreaterThan(0);
    await stopRun(run);
    run = undefined;
  });

  it('(b) replication link cut, then primary kill -9: the replica missed the last writes, still nothing lost and no id twice', async () => {
    // A failed (a) left its processes running: stop them first, or they outlive the file.
    await stopRun(run);
    run = undefined;
    await redisSettled();
    run = await startRun();
    const r = run;
    const primary = await redisPrimary();
    const replicaNode = primary.node === 'redis-1' ? 'redis-2' : 'redis-1';
    const replica = nodeClient(ha.redisNodes[Number(replicaNode.slice(-1)) - 1]!.port);
    // The replica follows the primary through a forwarder the test can stop. Sentinels put a replica
    // that follows another address back on the primary once failover-timeout passed; longer than the test.
    await setFailoverTimeout(180_000);
    const link = await startForwarder(primary.port);
    try {
      await replica.call('REPLICAOF', '127.0.0.1', String(link.port));
      await waitFor('the replica in sync through the forwarder', async () => /master_link_status:up/.test(await replica.info('replication')), 30_000);
      const load = startLoad('b', () => r.gateways.filter((g) => g.alive()).map((g) => g.serviceUrl), 6);
      const commands = startCommands(r);
      await waitFor('ingest running', async () => load.acknowledgedSince(0) > 200, 60_000);

      link.pause();
      const cutAt = Date.now();
      const refusedBefore = commands.refused.length;
      // A gateway restarted now takes a fresh id block (and dedupe claims) from the primary that the
      // replica never sees, as any gateway does that uses up its block during the cut.
      r.gateways[1]!.kill9();
      r.gateways[1] = await startProc('gateway', r.env);
      const restartedAt = Date.now();
      await waitFor('ingest acknowledged past the cut', async () => load.acknowledgedSince(restartedAt) > 200, 30_000);
      const refusedWhileCut = commands.refused.length - refusedBefore;

      const killedAt = Date.now();
      const queuedWhileCut = commands.queued.filter((q) => q.at > cutAt + 1500 && q.at < killedAt).length;
      killNode(primary.node);
      link.close();
      const times = await failover(primary.node, killedAt, load, r);
      // And one restarted after the failover takes its block from what the promoted replica knows.
      r.gateways[1].kill9();
      r.gateways[1] = await startProc('gateway', r.env);
      const again = Date.now();
      await waitFor('ingest acknowledged after the second restart', async () => load.acknowledgedSince(again) > 300, 30_000);
      const { t, commandsLost } = await finish(r, primary.node, load, commands);
      const figures = { ...t, ...times, commandsRefusedWhileCut: refusedWhileCut, commandsQueuedWhileCut: queuedWhileCut, commandsQueued: commands.queued.length, commandsLost };
      report('(b) link cut + Redis primary kill -9', figures);
      expect(t.acknowledged).toBeGreaterThan(300);
      expect(t.idsIssuedTwice).toBe(0);
      expect(t.lost).toBe(0);
      expect(times.resumedAfterSeconds * 1000).toBeLessThan(RESUME_BOUND_MS);
      // WAIT: while no replica took the writes, operators were told "unavailable", never "queued"...
      expect(refusedWhileCut).toBeGreaterThan(0);
      expect(queuedWhileCut).toBe(0);
      // ...and every command they were told is queued survived the failover.
      expect(commandsLost).toBe(0);
    } finally {
      link.close();
      replica.disconnect();
      await setFailoverTimeout(15_000);
    }
    await stopRun(run);
    run = undefined;
  });
  it('(e) primary stalled (SIGSTOP) mid-ingest: the Sentinels promote the replica, the gateways and the worker leave its silent connections; resumed, it rejoins as a replica; nothing lost, no id twice', async () => {
    await stopRun(run);
    run = undefined;
    await redisSettled();
    run = await startRun();
    const r = run;
    const load = startLoad('e', () => r.gateways.map((g) => g.serviceUrl), 6);
    const commands = startCommands(r);
    await waitFor('ingest running', async () => load.acknowledgedSince(0) > 200, 60_000);

    const primary = await redisPrimary();
    const stalledAt = Date.now();
    stallNode(primary.node);
    let times: { failoverSeconds: number; resumedAfterSeconds: number };
    try {
      times = await failover(primary.node, stalledAt, load, r);
      await waitFor('ingest after the failover', async () => load.acknowledgedSince(stalledAt + times.resumedAfterSeconds * 1000) > 200, 60_000);
    } finally {
      resumeNode(primary.node);
    }
    const resumedNodeAt = Date.now();
    // Resumed, the old primary is told by the Sentinels to follow the new one.
    await waitFor('the stalled node back as a replica', async () => {
      const c = nodeClient(primary.port);
      try {
        return /role:slave/.test(await c.info('replication'));
      } finally {
        c.disconnect();
      }
    }, 60_000);
    await waitFor('ingest after the node resumed', async () => load.acknowledgedSince(resumedNodeAt) > 200, 60_000);
    await load.stop();
    await commands.stop();
    const t = await tally(load.answers, r.env);
    const lost = await commandsLost(r.stores, commands.queued);
    report('(e) Redis primary stalled (SIGSTOP)', { ...t, ...times, slowestAnswerMs: slowestAnswerMs(load.answers), stalledSeconds: (resumedNodeAt - stalledAt) / 1000, commandsQueued: commands.queued.length, commandsLost: lost });
    expect(t.acknowledged).toBeGreaterThan(300);
    expect(t.idsIssuedTwice).toBe(0);
    expect(t.lost).toBe(0);
    expect(times.resumedAfterSeconds * 1000).toBeLessThan(RESUME_BOUND_MS);
    expect(lost).toBe(0);
    // One deadline per insert: none waited longer than APPEND_TIMEOUT_MS, however many Redis calls it made.
    expect(slowestAnswerMs(load.answers)).toBeLessThanOrEqual(Number(r.env.APPEND_TIMEOUT_MS) + ANSWER_SLACK_MS);
    // Both gateways are still the ones started: they healed by themselves.
    expect(r.gateways.every((g) => g.alive())).toBe(true);
    await stopRun(run);
    run = undefined;
  });
});

async function setFailoverTimeout(ms: number): Promise<void> {
  for (const s of ha.sentinels) {
    const c = nodeClient(s.port);
    try {
      await c.call('SENTINEL', 'SET', ha.sentinelName, 'failover-timeout', String(ms));
    } finally {
      c.disconnect();
    }
  }
}

/**
 * A TCP forwarder between the replica and the primary. `pause` stops forwarding while the sockets
 * stay open (the replica sees a silent link, not a closed one); `close` drops everything.
 */
async function startForwarder(targetPort: number) {
  const sockets = new Set<net.Socket>();
  let paused = false;
  const server = net.createServer((down) => {
    const up = net.connect(targetPort, '127.0.0.1');
    sockets.add(down).add(up);
    down.on('data', (d) => {
      if (!paused) up.write(d);
    });
    up.on('data', (d) => {
      if (!paused) down.write(d);
    });
    const end = () => {
      down.destroy();
      up.destroy();
    };
    down.on('error', end).on('close', end);
    up.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    pause: () => (paused = true),
    close: () => {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}
