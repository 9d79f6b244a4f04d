/**
 * The operators' additions in the scale-out mode: two gateways and a worker on the real Redis,
 * Kafka and ClickHouse. What one gateway's admin API does is seen through the other.
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaEventFeed } from '../../shared/backends/kafka/live-feed.js';
import { encodeEvent, messageKey } from '../../shared/events/wire.js';
import { startCluster, type Cluster } from '../helpers/scale-out.js';
import { eventRecords } from '../helpers/event-records.js';
import { credentials, event, sessionCookie, TestApp, xmlParams } from '../helpers/harness.js';
import { openSse } from '../helpers/sse.js';
import { sleep } from '../helpers/wait.js';

const idOf = (text: string): number => Number(/Result>(-?\d+)</.exec(text)?.[1] ?? NaN);
type Json = Record<string, unknown>;

describe('operators: scale-out mode', () => {
  let c: Cluster;
  let kafka: Kafka;
  const api = async (gw: 'gw1' | 'gw2', method: string, path: string, body?: unknown) => {
    const r = await c[gw].admin(method, path, body);
    return { status: r.status, json: r.json as Json };
  };
  const insert = async (gw: 'gw1' | 'gw2', user: string, codigo: string, dominio = 'AB123CD') =>
    idOf((await c[gw].soap11('LoginYInsertarEvento', xmlParams({ ...credentials(user), ...event({ Codigo: codigo, Dominio: dominio }) }))).text);

  beforeAll(async () => {
    c = await startCluster({ LOCKOUT_MAX_FAILURES: '2' });
    for (const u of ['acme', 'bravo', 'gone']) await c.gw1.provider(u, 'secret-1');
    kafka = new Kafka({ clientId: 'operators-test', brokers: c.env.KAFKA_BROKERS!.split(','), logLevel: logLevel.NOTHING });
  }, 120_000);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  afterAll(() => c?.stop());

  it('event stream: an event accepted by one gateway arrives on the other gateway\'s stream; filters apply; a client that leaves frees its consumer', async () => {
    const base = `${c.gw2.app.admin.url}/admin/events/stream`;
    const all = await openSse(base, c.gw2.app.adminToken);
    const onlyBravo = await openSse(`${base}?provider=bravo`, c.gw2.app.adminToken);
    expect(all.status).toBe(200);
    const feed = c.gw2.app.backends.feed;
    if (!(feed instanceof KafkaEventFeed)) throw new Error('expected the Kafka event feed');
    // One Kafka consumer carries both streams (the hub shares it).
    expect(feed.size).toBe(1);
    expect(c.gw2.app.admin.liveStreams).toBe(2);
    const id = await insert('gw1', 'acme', 'live-1');
    await insert('gw1', 'bravo', 'live-2');
    expect(await all.waitFor((e) => e.codigo === 'live-1')).toMatchObject({ id: String(id), systemUser: 'acme' });
    await all.waitFor((e) => e.codigo === 'live-2');
    await onlyBravo.waitFor((e) => e.codigo === 'live-2');
    expect(onlyBravo.events.map((e) => e.codigo)).toEqual(['live-2']);

    // The streams read without a consumer group: nothing of theirs is registered on the broker,
    // so nothing is left behind when they end.
    const admin = kafka.admin();
    await admin.connect();
    try {
      const streamGroups = async () => (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.startsWith(`${c.gw2.config.kafka.clientId}-admin`));
      expect(await streamGroups()).toEqual([]);
      all.close();
      onlyBravo.close();
      for (let i = 0; i < 100 && feed.size > 0; i++) await sleep(50);
      expect(feed.size).toBe(0);
      expect(await streamGroups()).toEqual([]);
    } finally {
      await admin.disconnect();
    }
  });

  it('events paging reads ClickHouse below beforeId across pages', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(await insert(i % 2 === 0 ? 'gw1' : 'gw2', 'bravo', `page-${i}`, 'PAGE'));
    await c.waitForRows(ids);
    const seen: string[] = [];
    let query = '/admin/events?provider=bravo&dominio=PAGE&limit=2';
    for (let n = 0; n < 10; n++) {
      const page = (await api('gw2', 'GET', query)).json as { events: Json[]; nextBeforeId: string | null };
      seen.push(...page.events.map((e) => e.id as string));
      if (page.nextBeforeId === null) break;
      query = `/admin/events?provider=bravo&dominio=PAGE&limit=2&beforeId=${page.nextBeforeId}`;
    }
    expect(seen).toEqual([...ids].sort((a, b) => b - a).map(String));
  });

  it('map: the latest position per vehicle and a vehicle\'s track, read from ClickHouse', async () => {
    await c.gw1.provider('mapper', 'secret-1');
    const at = async (gw: 'gw1' | 'gw2', dominio: string, codigo: string, lat: number) =>
      idOf((await c[gw].soap11('LoginYInsertarEvento', xmlParams({ ...credentials('mapper'), ...event({ Codigo: codigo, Dominio: dominio, Latitud: String(lat) }) }))).text);
    const ids = [await at('gw1', 'MAP1', 'm-1', -34.1), await at('gw2', 'MAP2', 'm-2', -34.2), await at('gw1', 'MAP1', 'm-3', -34.3)];
    await c.waitForRows(ids);
    const positions = (await api('gw2', 'GET', '/admin/providers/mapper/positions')).json;
    // Sorted by Dominio here: across gateways, ids come from per-gateway blocks.
    expect((positions.positions as Json[]).map((p) => [p.dominio, p.id, p.latitud]).sort()).toEqual([
      ['MAP1', String(ids[2]), -34.3],
      ['MAP2', String(ids[1]), -34.2],
    ]);
    expect(positions).toMatchObject({ eventsRead: 3, complete: true });
    const track = (await api('gw1', 'GET', '/admin/providers/mapper/track/MAP1?from=2000-01-01T00:00:00Z')).json;
    expect((track.events as Json[]).map((e) => e.id)).toEqual([String(ids[0]), String(ids[2])]);
    expect((await api('gw1', 'GET', '/admin/providers/mapper/track/MAP1?limit=0')).status).toBe(400);
  });

  it('a command cancelled through one gateway is never handed out by the other, even while it polls', async () => {
    const numero = (await api('gw1', 'POST', '/admin/providers/acme/commands', { cmd: 'CC', unidad: 'U', equipo: 'E' })).json.numero as number;
    const polls = Array.from({ length: 20 }, () => c.gw2.post('LoginYObtenerComando', credentials()));
    const cancelled = await api('gw1', 'POST', `/admin/providers/acme/commands/${numero}/cancel`);
    const handedOut = (await Promise.all(polls)).filter((r) => r.text.includes(`<NUMERO>${numero}</NUMERO>`)).length;
    expect(cancelled.json).toMatchObject({ state: 'cancelled' });
    // Every poll that got it was counted before the cancel; none after.
    expect(handedOut).toBe(cancelled.json.deliveries);
    expect((await c.gw2.post('LoginYObtenerComando', credentials())).text).not.toContain(`<NUMERO>${numero}</NUMERO>`);
    expect((await c.gw2.post('LoginYEstadoComando', { ...credentials(), NUMERO: String(numero), MSG: 'x' })).text).toContain('>false<');
    expect((await c.gw1.post('LoginYComandoProcesado', { ...credentials(), NUMERO: String(numero), correcto: 'false' })).text).toContain('>false<');
    const listed = (await api('gw2', 'GET', '/admin/commands?state=cancelled')).json.commands as Json[];
    expect(listed.map((x) => x.numero)).toContain(numero);
  });

  it('lockouts set on one gateway are listed and lifted through the other', async () => {
    for (let i = 0; i < 2; i++) await c.gw1.soap11('Login', xmlParams(credentials('bravo', 'wrong!')));
    expect((await c.gw2.soap11('Login', xmlParams(credentials('bravo')))).text).toContain('>false<');
    expect(((await api('gw2', 'GET', '/admin/lockouts')).json.lockouts as Json[]).map((l) => l.systemUser)).toEqual(['bravo']);
    expect((await c.gw2.admin('DELETE', '/admin/providers/bravo/lockouts')).status).toBe(204);
    expect((await c.gw1.soap11('Login', xmlParams(credentials('bravo')))).text).toContain('>true<');
  });

  it('deleting a provider through one gateway ends its sessions on the other and keeps its events', async () => {
    const cookie = sessionCookie(await c.gw1.soap11('Login', xmlParams(credentials('gone'))));
    const kept = await insert('gw1', 'gone', 'kept');
    await api('gw1', 'POST', '/admin/providers/gone/commands', { cmd: 'A', unidad: 'U', equipo: 'E' });
    await api('gw1', 'PUT', '/admin/providers/gone/trip/vehicles/AA1', { nroSerie: 'S1' });
    const deleted = await api('gw2', 'DELETE', '/admin/providers/gone?confirm=gone');
    expect(deleted.json).toEqual({ deleted: 'gone', sessionsEnded: 1, commandsCancelled: 1, tripVehiclesRemoved: 1 });
    expect((await c.gw1.soap11('InSession', '', undefined, cookie)).text).toContain('>false<');
    await c.waitForRows([kept]);
    expect(((await api('gw1', 'GET', '/admin/events?provider=gone')).json.events as Json[]).map((e) => e.id)).toEqual([String(kept)]);
    // Another gateway may still hold the provider for PROVIDER_CACHE_MS; after that it is gone everywhere.
    c.gw1.advance(c.gw1.config.logins.providerCacheMs + 1);
    expect((await c.gw1.soap11('Login', xmlParams(credentials('gone')))).text).toContain('>false<');
  });

  it('poison messages: listed, re-driven onto the topic (the worker then stores the event), discarded', async () => {
    const poison = c.gw1.app.backends.poison!;
    const good = eventRecords({ eventTimeBase: c.gw1.now, stepMs: 1, receivedAt: c.gw1.now, dedupePrefix: 'poison-' })({ codigo: 'redriven' });
    const value = encodeEvent(987_654_321n, good);
    const at = c.gw1.now;
    await poison.add([
      { id: '0-41', topic: c.env.KAFKA_TOPIC!, partition: 0, offset: '41', key: messageKey(good), reason: 'ClickHouse refused the row', at, value, truncated: false },
      { id: '0-42', topic: c.env.KAFKA_TOPIC!, partition: 0, offset: '42', key: null, reason: 'event message is not JSON', at: at + 1, value: Buffer.from('x'.repeat(5000)), truncated: false },
    ]);
    const list = (await api('gw2', 'GET', '/admin/poison')).json.messages as Json[];
    expect(list.map((m) => m.id)).toEqual(['0-42', '0-41']);
    expect(list[0]).toMatchObject({ reason: 'event message is not JSON', key: null, bytes: 5000, truncated: true, redrivable: true });
    expect((list[0]?.value as string).length).toBe(4096);
    expect(list[1]).toMatchObject({ topic: c.env.KAFKA_TOPIC, partition: 0, offset: '41', at: new Date(at).toISOString() });

    expect((await api('gw2', 'POST', '/admin/poison/0-41/redrive')).json).toEqual({ redriven: '0-41' });
    await c.waitForRows([987_654_321]);
    expect(((await api('gw1', 'GET', '/admin/events?provider=acme&limit=1000')).json.events as Json[]).some((e) => e.codigo === 'redriven')).toBe(true);
    expect((await c.gw1.admin('DELETE', '/admin/poison/0-42')).status).toBe(204);
    expect((await api('gw1', 'GET', '/admin/poison')).json.messages).toEqual([]);
    expect((await api('gw1', 'POST', '/admin/poison/0-41/redrive')).status).toBe(404);
    expect((await api('gw1', 'DELETE', '/admin/poison/0-42')).status).toBe(404);
  });

  it('the worker sets a message it cannot decode aside with its reason, and goes on storing the rest', async () => {
    const producer = kafka.producer();
    await producer.connect();
    try {
      await producer.send({ topic: c.env.KAFKA_TOPIC!, acks: -1, messages: [{ key: 'acme|BAD', value: '{"v":1,"id":"12","event":{"systemUser":"acme"}}' }] });
    } finally {
      await producer.disconnect();
    }
    const after = await insert('gw1', 'acme', 'after-poison');
    await c.waitForRows([after]);
    let messages: Json[] = [];
    for (let i = 0; i < 100 && messages.length === 0; i++) {
      messages = (await api('gw2', 'GET', '/admin/poison')).json.messages as Json[];
      if (messages.length === 0) await sleep(100);
    }
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ topic: c.env.KAFKA_TOPIC, key: 'acme|BAD', value: '{"v":1,"id":"12","event":{"systemUser":"acme"}}', redrivable: true });
    expect(messages[0]?.reason).toContain('event field');
    expect(messages[0]?.id).toBe(`${String(messages[0]?.partition)}-${String(messages[0]?.offset)}`);
    expect(await c.workerMetrics.text()).toMatch(/^worker_poison_messages_total 1$/m);
    expect((await api('gw1', 'GET', '/admin/overview')).json.poisonMessages).toBe(1);

    // Re-driven as it is, it is set aside again under its new offset.
    const first = messages[0]!.id as string;
    expect((await api('gw1', 'POST', `/admin/poison/${first}/redrive`)).status).toBe(200);
    let again: Json[] = [];
    for (let i = 0; i < 100 && (again.length !== 1 || again[0]?.id === first); i++) {
      again = (await api('gw2', 'GET', '/admin/poison')).json.messages as Json[];
      await sleep(100);
    }
    expect(again.map((m) => m.id)).not.toContain(first);
    expect(again).toHaveLength(1);
    expect((await c.gw2.admin('DELETE', `/admin/poison/${String(again[0]?.id)}`)).status).toBe(204);
  });

  it('overview: scale-out, every backend up, arrivals from ClickHouse, worker lag known', async () => {
    const id = await insert('gw1', 'acme', 'overview');
    await c.waitForRows([id]);
    const o = (await api('gw2', 'GET', '/admin/overview')).json;
    expect(o).toMatchObject({ mode: 'scale-out', ready: true, lockouts: 0 });
    expect(o.backends).toEqual([
      { name: 'redis', ok: true },
      { name: 'kafka', ok: true },
      { name: 'clickhouse', ok: true },
    ]);
    expect(typeof o.workerLag).toBe('number');
    expect(typeof o.poisonMessages).toBe('number');
    const points = o.eventsPerSecond as { at: string; events: number }[];
    expect(points).toHaveLength(90);
    expect(points.reduce((n, p) => n + p.events, 0)).toBeGreaterThan(0);
    const acme = (o.providers as Json[]).find((p) => p.systemUser === 'acme');
    expect(acme?.events15m).toBeGreaterThan(0);
    expect(acme?.lastEventAt).not.toBeNull();
  });

  it('overview still answers when ClickHouse cannot be reached, naming it', async () => {
    const lonely = await TestApp.start({ ...c.env, CLICKHOUSE_URL: 'http://127.0.0.1:1' });
    try {
      const r = await lonely.admin('GET', '/admin/overview');
      expect(r.status).toBe(200);
      const o = r.json as Json;
      const backends = o.backends as Json[];
      expect(backends.find((b) => b.name === 'clickhouse')).toMatchObject({ ok: false });
      expect(backends.find((b) => b.name === 'events')).toMatchObject({ ok: false });
      expect(backends.find((b) => b.name === 'redis')).toEqual({ name: 'redis', ok: true });
      expect((o.eventsPerSecond as Json[]).every((p) => p.events === 0)).toBe(true);
      // The rest of the API keeps serving.
      expect((await lonely.admin('GET', '/admin/providers/acme')).status).toBe(200);
      // Stored events cannot be read meanwhile: 503, retry later.
      expect((await lonely.admin('GET', '/admin/events')).status).toBe(503);
    } finally {
      await lonely.stop();
    }
  });
});
