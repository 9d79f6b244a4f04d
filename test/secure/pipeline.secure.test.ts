/**
 * The whole scale-out pipeline over the secure engines, each process as its own principal with only
 * the permissions docs/security.md and docs/operations.md list: the migrations user applies the
 * schema, the worker (Kafka `worker`, ClickHouse `worker`, no DDL) loads what the gateway (Kafka
 * `gateway`, Redis `gateway`, ClickHouse `analyst`) acknowledged over HTTPS. Then no secret value
 * may appear in any log line, /metrics or admin API answer of any of them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../../gateway/admin/client.js';
import { createClickHouseClient, type ClickHouseClient } from '../../shared/backends/clickhouse/index.js';
import { secure } from '../helpers/secure.js';
import { freePort, Spawned } from '../helpers/spawned.js';

const s = secure();
const ca = readFileSync(s.certs.ca, 'utf8');
const tls = new Agent({ connect: { ca } });
const token = s.secret('admin-token');
const provider = `sec${Date.now().toString(36)}`;
const providerPassword = 'provider-pass-1';

let gateway: Spawned | undefined;
let worker: Spawned | undefined;
let gatewayPort: number;
let adminPort: number;
let workerPort: number;
let admin: AdminClient;
let analyst: ClickHouseClient | undefined;

beforeAll(async () => {
  // The schema's owner first; then neither the worker nor the gateway needs DDL.
  const migrate = Spawned.start('worker/main.ts', s.migratorEnv(), ['--migrate']);
  expect(await migrate.exitWithin(90_000), migrate.output.join('\n')).toBe(0);

  [gatewayPort, adminPort, workerPort] = [await freePort(), await freePort(), await freePort()];
  gateway = Spawned.start('gateway/main.ts', { ...s.gatewayEnv(), HOST: '127.0.0.1', PORT: String(gatewayPort), ADMIN_PORT: String(adminPort), GATEWAY_THREADS: '1' });
  worker = Spawned.start('worker/main.ts', { ...s.workerEnv(), ADMIN_HOST: '127.0.0.1', ADMIN_PORT: String(workerPort), WORKER_BATCH_MS: '100' });
  await gateway.line(/gateway listening/);
  admin = new AdminClient({ baseUrl: `https://127.0.0.1:${adminPort}`, token, ca });
  analyst = createClickHouseClient({ url: s.env.CLICKHOUSE_URL!, database: s.env.CLICKHOUSE_DATABASE!, username: 'analyst', password: s.secret('clickhouse-analyst'), tlsCa: Buffer.from(ca) });
}, 180_000);

afterAll(async () => {
  await Promise.all([gateway?.stop(), worker?.stop()]);
  await analyst?.close();
  await tls.close();
});

/** One event through the HTTP POST binding over HTTPS; the id answered. */
async function insert(n: number): Promise<number> {
  const form = new URLSearchParams({
    SystemUser: provider,
    Password: providerPassword,
    Dominio: `SEC${n}`,
    NroSerie: 'S1',
    Codigo: 'c',
    Latitud: '-34.6',
    Longitud: '-58.4',
    Altitud: '10',
    Velocidad: '40',
    FechaHoraEvento: '2026-11-22T08:59:30-03:00',
    FechaHoraRecepcion: '2026-11-22T09:00:00-03:00',
  });
  const res = await fetch(`https://127.0.0.1:${gatewayPort}/service.asmx/LoginYInsertarEvento`, {
    method: 'POST',
    body: form.toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    dispatcher: tls,
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return Number(/<int[^>]*>(-?\d+)<\/int>/.exec(text)?.[1]);
}

describe('the pipeline on the secure engines', () => {
  it('events acknowledged over HTTPS reach ClickHouse through SASL_SSL Kafka, each process with only its grants', async () => {
    await admin.createProvider({ systemUser: provider, password: providerPassword });
    const ids: number[] = [];
    for (let n = 0; n < 5; n++) ids.push(await insert(n));
    expect(ids.every((id) => id > 0), ids.join(',')).toBe(true);

    await worker!.line(/"msg":"ClickHouse schema ready"/);
    const deadline = Date.now() + 60_000;
    let found: number[] = [];
    while (Date.now() < deadline) {
      const result = await analyst!.query({ query: `SELECT id FROM ${s.env.CLICKHOUSE_DATABASE}.events WHERE id IN (${ids.join(',')})`, format: 'JSONEachRow' });
      found = (await result.json<{ id: string }>()).map((r) => Number(r.id));
      if (ids.every((id) => found.includes(id))) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect([...new Set(found)].sort()).toEqual([...ids].sort());

    // The admin API reads them back as the analyst (HTTPS to ClickHouse), and is ready on every backend.
    const events = (await admin.request('GET', `/admin/events?provider=${provider}&limit=10`)).body as { events?: unknown[] };
    expect(JSON.stringify(events)).toContain(`SEC4`);
    const ready = await fetch(`https://127.0.0.1:${adminPort}/readyz`, { dispatcher: tls });
    expect(ready.status, await ready.text()).toBe(200);
    const workerReady = await fetch(`https://127.0.0.1:${workerPort}/readyz`, { dispatcher: tls });
    expect(workerReady.status).toBe(200);
  });

  it('the worker may not run DDL and the analyst may not write: the grants are the ones documented', async () => {
    const asWorker = createClickHouseClient({ url: s.env.CLICKHOUSE_URL!, database: 'default', username: 'worker', password: s.secret('clickhouse-worker'), tlsCa: Buffer.from(ca) });
    try {
      await expect(asWorker.command({ query: `DROP TABLE ${s.env.CLICKHOUSE_DATABASE}.events` })).rejects.toThrow(/DDL queries are prohibited|Not enough privileges/);
    } finally {
      await asWorker.close();
    }
    await expect(analyst!.command({ query: `INSERT INTO ${s.env.CLICKHOUSE_DATABASE}.schema_migrations (version, name) VALUES (999, 'x')` })).rejects.toThrow(/readonly|Not enough privileges/);
  });

  it('no secret value appears in any log line, /metrics or admin API answer', async () => {
    const secrets = readdirSync(s.env.SECURE_SECRETS_DIR!).map((f) => readFileSync(path.join(s.env.SECURE_SECRETS_DIR!, f), 'utf8').trim());
    secrets.push(providerPassword);
    const texts: string[] = [];
    for (const route of ['/metrics', '/admin/overview', '/admin/providers', `/admin/providers/${provider}`, '/admin/poison', '/admin/lockouts', `/admin/events?provider=${provider}`, '/readyz', '/no-such-route']) {
      texts.push(JSON.stringify((await admin.request('GET', route, undefined, { okStatuses: [404, 503] })).body));
    }
    texts.push(await (await fetch(`https://127.0.0.1:${workerPort}/metrics`, { dispatcher: tls })).text());
    // A refused login and a bad admin request must not echo what was sent either.
    await admin.request('POST', '/admin/providers', { systemUser: provider, password: s.secret('redis-gateway') }, { okStatuses: [400, 409] });
    await gateway!.stop();
    await worker!.stop();
    const logs = [...gateway!.output, ...worker!.output];
    expect(logs.length).toBeGreaterThan(5);
    for (const secret of secrets) {
      for (const text of [...texts, ...logs]) expect(text.includes(secret), `a secret in: ${text.slice(0, 300)}`).toBe(false);
    }
  });
});
