/**
 * No failure of Redis can make a gateway issue an acknowledged id twice: ids are blocks named by
 * offsets of the Kafka id-blocks topic (shared/backends/ids/allocator.ts), and Redis holds none of it.
 * Two gateways ingest distinct events through SOAP while Redis is flushed, while it is killed
 * (kill -9) and restarted empty, and while Kafka is killed and restarted in the middle of refills
 * (blocks of 20 ids: a refill every two requests). Each time: no id acknowledged for two events,
 * every acknowledged event in ClickHouse exactly once, and the -5 answers are counted and timed.
 * Last, the id-blocks topic is deleted under the running gateways: it is created anew and checked
 * against the stored ids before any of its blocks is used.
 * Runs alone (the "faults" project): it kills the test Redis and Kafka.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../helpers/scale-out.js';
import { credentials, event, type TestApp, xmlParams } from '../helpers/harness.js';
import { services } from '../helpers/services.js';
import { sleep } from '../helpers/wait.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const up = (name: string) => execFileSync('bash', [path.join(ROOT, 'scripts/services/up.sh'), name], { cwd: ROOT, stdio: 'pipe' });
const kill9 = (name: string) => process.kill(Number(readFileSync(path.join(services().servicesDir, `${name}.pid`), 'utf8').trim()), 'SIGKILL');

interface Answer {
  gateway: string;
  codigo: string;
  /** The id, a negative code, or NaN for a fault (Redis down: the login cannot be checked). */
  code: number;
  /** Sent and answered, ms after the fault (negative: before). */
  sentAt: number;
  answeredAt: number;
}

describe('ids and Redis or Kafka failures mid-ingest (two gateways, the worker)', () => {
  let c: Cluster;
  let redis: Redis;
  const codigos = new Set<string>();
  const acked = new Map<number, string>();
  beforeAll(async () => {
    c = await startCluster({ APPEND_TIMEOUT_MS: '2000', ID_BLOCK_SIZE: '20', LOCKOUT_MAX_FAILURES: '1000000' });
    await c.gw1.provider('acme', 'secret-1');
    redis = new Redis(services().redisUrl, { maxRetriesPerRequest: 1 });
    redis.on('error', () => {});
  }, 120_000);
  afterAll(async () => {
    up('redis');
    up('kafka');
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
    redis?.disconnect();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
    await c?.stop();
  }, 120_000);

  /** Both gateways insert batches of 10 distinct events until `stop` resolves; then every answer. */
  async function ingestAround(name: string, fault: () => Promise<void>, recover: () => Promise<void>): Promise<Answer[]> {
    const answers: Answer[] = [];
    let faultAt = Number.POSITIVE_INFINITY;
    let stopping = false;
    let seq = 0;
    const loop = async (gw: TestApp, label: string) => {
      while (!stopping) {
        const batch = Array.from({ length: 10 }, () => `${name}-${label}-${++seq}`);
        const sent = Date.now();
        const body = batch.map((codigo) => `<pEvento>${xmlParams(event({ Codigo: codigo }))}</pEvento>`).join('');
        const reply = await gw.soap11('LoginYInsertarEventos', `${xmlParams(credentials())}<Eventos>${body}</Eventos>`).catch(() => null);
        const codes = reply === null ? [] : [...reply.text.matchAll(/<int>(-?\d+)<\/int>/g)].map((m) => Number(m[1]));
        const answered = Date.now();
        batch.forEach((codigo, i) => answers.push({ gateway: label, codigo, code: codes[i] ?? Number.NaN, sentAt: sent - faultAt, answeredAt: answered - faultAt }));
        if (codes.length === 0) await sleep(50);
      }
    };
    const loops = [loop(c.gw1, 'gw1'), loop(c.gw2, 'gw2')];
    await sleep(1500);
    faultAt = Date.now();
    await fault();
    await recover();
    // Ingest resumes on both gateways: wait for 50 acknowledged events each, sent after the recovery.
    const resumedAt = Date.now() - faultAt;
    const deadline = Date.now() + 60_000;
    const ackedAfter = (gw: string) => answers.filter((a) => a.gateway === gw && a.sentAt > resumedAt && a.code > 0).length;
    while (ackedAfter('gw1') < 50 || ackedAfter('gw2') < 50) {
      if (Date.now() > deadline) throw new Error(`${name}: ingest did not resume (${ackedAfter('gw1')} / ${ackedAfter('gw2')})\n${await whatTheyAnswered(answers, resumedAt)}`);
      await sleep(100);
    }
    stopping = true;
    await Promise.all(loops);
    return answers;
  }

  /** A run that did not resume: each gateway's answers since the recovery by code, and its login-failure counters. */
  async function whatTheyAnswered(answers: readonly Answer[], since: number): Promise<string> {
    const lines: string[] = [];
    for (const [label, gw] of [['gw1', c.gw1], ['gw2', c.gw2]] as const) {
      const codes = new Map<string, number>();
      for (const a of answers) if (a.gateway === label && a.sentAt > since) codes.set(String(a.code), (codes.get(String(a.code)) ?? 0) + 1);
      const failures = (await gw.app.metricsText()).split('\n').filter((l) => /^gateway_(login_failures|lockouts)/.test(l));
      lines.push(`${label}: answers by code ${JSON.stringify([...codes])}; ${failures.join('; ')}`);
    }
    return lines.join('\n');
  }

  /** The guarantees, and the figures for bench/RESULTS.md. */
  async function check(name: string, answers: Answer[]): Promise<void> {
    for (const a of answers) expect(Number.isNaN(a.code) || a.code > 0 || [-1, -5].includes(a.code), `${a.codigo}: ${a.code}`).toBe(true);
    const mine = answers.filter((a) => a.code > 0);
    expect(mine.filter((a) => a.sentAt < 0).length).toBeGreaterThan(20);
    let twice = 0;
    for (const a of mine) {
      expect(codigos.has(a.codigo)).toBe(false);
      codigos.add(a.codigo);
      const holder = acked.get(a.code);
      if (holder !== undefined) twice++;
      expect(holder, `id ${a.code} acknowledged for ${holder} and ${a.codigo}`).toBeUndefined();
      acked.set(a.code, a.codigo);
    }
    // ClickHouse: every acknowledged event of this run, once, under its id.
    const ids = mine.map((a) => a.code);
    const rows = await c.waitForRows(ids, 60_000);
    const lost = ids.filter((id) => rows.get(id)?.codigo !== acked.get(id)).length;
    expect(lost).toBe(0);
    const db = c.env.CLICKHOUSE_DATABASE;
    const ch = c.backends(c.gw1).clickhouse!;
    const shared = await (await ch.query({ query: `SELECT id FROM ${db}.events GROUP BY id HAVING uniqExact(codigo) > 1`, format: 'JSONEachRow' })).json<unknown>();
    expect(shared).toEqual([]);
    const unavailable = answers.filter((a) => a.code === -5 && a.sentAt >= 0);
    const span = unavailable.length === 0 ? 0 : Math.max(...unavailable.map((a) => a.answeredAt)) - Math.min(...unavailable.map((a) => a.sentAt));
    console.log(
      `${name}: ${mine.length} acknowledged, ${twice} ids twice, ${lost} lost; after the fault ${unavailable.length} answered -5 over ${(span / 1000).toFixed(1)} s, ` +
        `${answers.filter((a) => a.sentAt >= 0 && a.code === -1).length} answered -1, ${answers.filter((a) => a.sentAt >= 0 && Number.isNaN(a.code)).length} faults`,
    );
  }

  /** Recreates the provider Redis lost (an operator would, or Redis would have it with AOF). */
  const recreateProvider = async () => {
    for (let done = false; !done; ) done = await c.gw1.provider('acme', 'secret-1').then(() => true, async () => (await sleep(100), false));
  };

  it('Redis FLUSHALL mid-ingest: no id issued twice, nothing acknowledged lost, no -5 from ids', { timeout: 180_000 }, async () => {
    const answers = await ingestAround(
      'flush',
      async () => {
        expect(await redis.flushall()).toBe('OK');
      },
      recreateProvider,
    );
    await check('Redis FLUSHALL', answers);
    // Ids never waited for Redis: no insert was refused for want of an id.
    const rejected = await c.gw1.app.metricsText();
    expect(/^gateway_id_blocks_unavailable 0/m.test(rejected)).toBe(true);
  });

  it('Redis killed (kill -9) and restarted empty mid-ingest: no id issued twice, nothing acknowledged lost', { timeout: 180_000 }, async () => {
    const answers = await ingestAround(
      'redis-kill',
      async () => {
        kill9('redis');
        await sleep(1000);
        up('redis');
      },
      recreateProvider,
    );
    await check('Redis kill -9, restarted empty', answers);
  });

  it('Kafka killed (kill -9) and restarted mid-refill: no id issued twice, nothing acknowledged lost', { timeout: 240_000 }, async () => {
    const answers = await ingestAround(
      'kafka-kill',
      async () => {
        kill9('kafka');
        await sleep(1000);
        up('kafka');
      },
      async () => {},
    );
    await check('Kafka kill -9 and restart', answers);
    expect(answers.filter((a) => a.sentAt >= 0 && a.code === -5).length).toBeGreaterThan(0);
  });

  it('the id-blocks topic deleted under running gateways: created anew, checked against the stored ids, no id issued twice', { timeout: 180_000 }, async () => {
    const kafka = new Kafka({ brokers: services().kafkaBrokers, clientId: 'id-blocks-faults', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    const idTopic = `${c.env.KAFKA_TOPIC}.id-blocks`;
    const earlier = [...acked.keys()];
    const answers = await ingestAround(
      'recreate',
      async () => {
        // Everything acknowledged so far is stored (the check reads ClickHouse and the worker's lag).
        await c.waitForRows([...acked.keys()], 60_000);
        await admin.deleteTopics({ topics: [idTopic] });
      },
      async () => {},
    );
    await admin.disconnect();
    await check('id-blocks topic deleted', answers);
    const highestBefore = Math.max(...earlier, ...answers.filter((a) => a.code > 0 && a.answeredAt < 0).map((a) => a.code));
    expect(highestBefore).toBeGreaterThan(0);
    // The new topic's blocks are taken above everything stored before (by ID_RECOVERY_MARGIN: the
    // floor was raised), never from its first offsets again.
    const metric = async (t: TestApp) => Number(/^gateway_id_floor (\d+)/m.exec(await t.app.metricsText())?.[1] ?? 0);
    expect(await metric(c.gw1)).toBeGreaterThan(highestBefore);
    expect(await metric(c.gw2)).toBeGreaterThan(highestBefore);
  });
});
