/**
 * Losing Redis must never reuse an id. Two gateways ingest distinct events continuously through
 * SOAP while Redis is flushed (FLUSHALL: what a restart without its data does); ingestion goes on.
 * Every acknowledged id must belong to one event only, and ClickHouse must end with exactly the
 * acknowledged events. Runs alone (the "faults" project): it flushes the test Redis.
 *
 * ID_RECOVERY_MARGIN is 0 here, so any id the restore misses in Kafka or ClickHouse (or an append
 * published from a block that predates the flush) would be issued again and caught.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../helpers/distributed.js';
import { credentials, event, type TestApp, xmlParams } from '../helpers/harness.js';
import { services } from '../helpers/services.js';

interface Answer {
  gateway: string;
  codigo: string;
  code: number;
  /** When the request was sent, relative to the flush (ms; negative = before). */
  sentAt: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Redis loses its data during ingest', () => {
  let c: Cluster;
  let redis: Redis;
  beforeAll(async () => {
    c = await startCluster({
      APPEND_TIMEOUT_MS: '2000',
      ID_RECOVERY_MARGIN: '0',
      // After the flush the provider is gone until recreated; its failed logins must not lock it.
      LOCKOUT_MAX_FAILURES: '1000000',
    });
    await c.gw1.provider('acme', 'secret-1');
    redis = new Redis(services().redisUrl, { maxRetriesPerRequest: 1 });
  }, 120_000);
  afterAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
    await redis?.quit();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
    await c?.stop();
  }, 120_000);

  it('never acknowledges an id twice; ClickHouse ends with exactly the acknowledged events', { timeout: 180_000 }, async () => {
    const answers: Answer[] = [];
    let flushedAt = Number.POSITIVE_INFINITY;
    let seq = 0;
    let stopping = false;
    const ingest = async (gw: TestApp, name: string) => {
      while (!stopping) {
        const codigos = Array.from({ length: 10 }, () => `${name}-${++seq}`);
        const sentAt = Date.now() - flushedAt;
        const batch = codigos.map((codigo) => `<pEvento>${xmlParams(event({ Codigo: codigo }))}</pEvento>`).join('');
        const reply = await gw.soap11('LoginYInsertarEventos', `${xmlParams(credentials())}<Eventos>${batch}</Eventos>`);
        const codes = [...reply.text.matchAll(/<int>(-?\d+)<\/int>/g)].map((m) => Number(m[1]));
        codigos.forEach((codigo, i) => answers.push({ gateway: name, codigo, code: codes[i] ?? Number.NaN, sentAt }));
      }
    };
    const loops = [ingest(c.gw1, 'gw1'), ingest(c.gw2, 'gw2')];
    await sleep(2_000);

    // Readiness of gw2 from the flush on: not ready while the id state is gone, ready after.
    const readiness: number[] = [];
    let watching = true;
    const watchReadiness = async (): Promise<void> => {
      while (watching) {
        readiness.push((await fetch(`${c.gw2.app.admin.url}/readyz`)).status);
        await sleep(50);
      }
    };
    const watch = watchReadiness();

    flushedAt = Date.now();
    expect(await redis.flushall()).toBe('OK');
    // The operator recreates what was lost (providers; production runs Redis with AOF).
    for (let created = false; !created; ) {
      created = await c.gw1.provider('acme', 'secret-1').then(
        () => true,
        () => false,
      );
    }

    // Ingestion goes on: wait until both gateways acknowledge events sent well after the flush
    // (past the restore, which waits APPEND_TIMEOUT_MS + 1 s before reading the log).
    const LATE_MS = 4_000;
    const deadline = Date.now() + 60_000;
    const ackedAfter = (gw: string) => answers.filter((a) => a.gateway === gw && a.sentAt > LATE_MS && a.code > 0).length;
    while (ackedAfter('gw1') < 100 || ackedAfter('gw2') < 100) {
      if (Date.now() > deadline) throw new Error(`ingestion did not resume: ${ackedAfter('gw1')} / ${ackedAfter('gw2')} acknowledged after the flush`);
      await sleep(100);
    }
    stopping = true;
    await Promise.all(loops);
    watching = false;
    await watch;

    const acked = answers.filter((a) => a.code > 0);
    const before = acked.filter((a) => a.sentAt < 0);
    expect(before.length).toBeGreaterThan(50);
    // Inserts were answered -5 while the id state was being restored (never an id).
    const refused = answers.filter((a) => a.sentAt > 0 && a.code === -5);
    expect(refused.length).toBeGreaterThan(0);
    for (const a of answers) expect([-1, -5].includes(a.code) || a.code > 0, `${a.codigo}: ${a.code}`).toBe(true);

    // No id acknowledged twice (every event is distinct, so a second acknowledgement is a reuse).
    const byId = new Map<number, string>();
    for (const a of acked) {
      expect(byId.get(a.code), `id ${a.code} acknowledged for ${byId.get(a.code)} and ${a.codigo}`).toBeUndefined();
      byId.set(a.code, a.codigo);
    }
    // The restored counter is above every id acknowledged before the flush.
    const highestBefore = Math.max(...before.map((a) => a.code));
    const lateSent = acked.filter((a) => a.sentAt > LATE_MS);
    expect(lateSent.length).toBeGreaterThan(0);
    for (const a of lateSent) expect(a.code).toBeGreaterThan(highestBefore);

    // ClickHouse: exactly the acknowledged events, each once, under its id.
    const rows = await c.waitForRows([...byId.keys()], 60_000);
    expect(rows.size).toBe(byId.size);
    for (const [id, codigo] of byId) expect(rows.get(id)?.codigo, `id ${id}`).toBe(codigo);
    const ch = c.backends(c.gw1).clickhouse!;
    const db = c.env.CLICKHOUSE_DATABASE;
    const stored = await (await ch.query({ query: `SELECT id, codigo FROM ${db}.events FINAL`, format: 'JSONEachRow' })).json<{ id: string; codigo: string }>();
    expect(stored).toHaveLength(byId.size);
    expect(new Set(stored.map((r) => r.codigo)).size).toBe(byId.size);
    // Before any merge too: no id holds two different events.
    const shared = await (await ch.query({ query: `SELECT id FROM ${db}.events GROUP BY id HAVING uniqExact(codigo) > 1`, format: 'JSONEachRow' })).json<unknown>();
    expect(shared).toEqual([]);

    // Both gateways noticed; exactly one restored after the flush (the others adopted it). Read
    // across all of a gateway's front-end threads (each has its own clients and id state): the
    // test's connections may all have landed on one of them.
    const metric = async (t: TestApp, name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(await t.app.metricsText())?.[1] ?? 0);
    expect(await metric(c.gw1, 'gateway_id_state_lost_total')).toBeGreaterThanOrEqual(1);
    expect(await metric(c.gw2, 'gateway_id_state_lost_total')).toBeGreaterThanOrEqual(1);
    // The first start restored too (a fresh Redis looks like a lost one).
    expect((await metric(c.gw1, 'gateway_id_state_restored_total')) + (await metric(c.gw2, 'gateway_id_state_restored_total'))).toBe(2);
    expect(await metric(c.gw1, 'gateway_id_state_recovering')).toBe(0);
    expect(readiness).toContain(503);
    expect(readiness.at(-1)).toBe(200);
  });
});
