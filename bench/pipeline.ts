/**
 * The scale-out path end to end on the real services (`npm run services:up`): autocannon posts
 * SOAP LoginYInsertarEventos (100 events per request) to a gateway process running with the worker
 * (`main.ts` in distributed mode), then checks that every acknowledged id arrived in ClickHouse
 * exactly once, and how long the pipeline took to drain.
 * Run: npm run bench:pipeline   (env DURATION=seconds, CONNECTIONS=n, EVENTS_PER_REQUEST=n)
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { createClient } from '@clickhouse/client';
import { startServer } from './lib/server.js';

const DURATION = Number(process.env.DURATION ?? 20);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 20);
const PER_REQUEST = Number(process.env.EVENTS_PER_REQUEST ?? 100);
const NS = 'http://tempuri.org/';

function servicesEnv(): Record<string, string> {
  const file = path.resolve(import.meta.dirname, '..', '.services.env');
  const env: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) env[m[1]!] = m[2]!;
  }
  return env;
}

const fields = (i: number) =>
  `<Dominio>AB${i % 5000}CD</Dominio><NroSerie>SN</NroSerie><Codigo>${i}</Codigo><Latitud>-34.6037221</Latitud><Longitud>-58.3815704</Longitud><Altitud>25</Altitud><Velocidad>42.5</Velocidad><FechaHoraEvento>2026-11-22T08:59:30.${String(i % 1000).padStart(3, '0')}-03:00</FechaHoraEvento><FechaHoraRecepcion>2026-11-22T09:00:00-03:00</FechaHoraRecepcion>`;

async function main(): Promise<void> {
  const services = servicesEnv();
  const run = Date.now().toString(36);
  const database = `bench_${run}`;
  const server = await startServer({
    REDIS_URL: services.REDIS_URL!,
    REDIS_KEY_PREFIX: `bench-${run}:`,
    KAFKA_BROKERS: services.KAFKA_BROKERS!,
    KAFKA_TOPIC: `bench-events-${run}`,
    KAFKA_GROUP_ID: `bench-worker-${run}`,
    CLICKHOUSE_URL: services.CLICKHOUSE_URL!,
    CLICKHOUSE_DATABASE: database,
    LOG_LEVEL: 'info',
  });
  await server.admin('POST', '/admin/providers', { systemUser: 'bench', password: 'bench-secret' });

  const acked = new Set<number>();
  let negative = 0;
  let i = 0;
  const started = Date.now();
  const result = await autocannon({
    url: server.serviceUrl,
    connections: CONNECTIONS,
    duration: DURATION,
    method: 'POST',
    headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NS}LoginYInsertarEventos"` },
    requests: [
      {
        setupRequest: (req) => {
          const base = i++ * PER_REQUEST;
          const events = Array.from({ length: PER_REQUEST }, (_, k) => `<pEvento>${fields(base + k)}</pEvento>`).join('');
          return {
            ...req,
            body: `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><LoginYInsertarEventos xmlns="${NS}"><SystemUser>bench</SystemUser><Password>bench-secret</Password><Eventos>${events}</Eventos></LoginYInsertarEventos></soap:Body></soap:Envelope>`,
          };
        },
        onResponse: (_status, body) => {
          for (const m of body.matchAll(/<int>(-?\d+)<\/int>/g)) {
            const code = Number(m[1]);
            if (code > 0) acked.add(code);
            else negative++;
          }
        },
      },
    ],
  });
  const loadEnded = Date.now();

  const ch = createClient({ url: services.CLICKHOUSE_URL!, username: 'default', password: '' });
  const count = async (): Promise<{ rows: number; ids: number }> => {
    const r = await ch.query({ query: `SELECT count() AS rows, uniqExact(id) AS ids FROM ${database}.events FINAL`, format: 'JSONEachRow' });
    const [row] = (await r.json()) as { rows: string; ids: string }[];
    return { rows: Number(row?.rows ?? 0), ids: Number(row?.ids ?? 0) };
  };
  let stored = await count();
  while (stored.ids < acked.size && Date.now() - loadEnded < 120_000) {
    await new Promise((r) => setTimeout(r, 250));
    stored = await count();
  }
  const drainMs = Date.now() - loadEnded;
  const lagQuery = await ch.query({
    query: `SELECT avg(toUnixTimestamp(stored_at) * 1000 - received_at_ms) AS avg_ms, max(toUnixTimestamp(stored_at) * 1000 - received_at_ms) AS max_ms FROM ${database}.events`,
    format: 'JSONEachRow',
  });
  const [lag] = (await lagQuery.json()) as { avg_ms: number; max_ms: number }[];
  // Every acknowledged id, exactly once (ids the gateway folds stay below 2^31 here, so they equal the stored ids).
  const idsQuery = await ch.query({ query: `SELECT id, count() AS n FROM ${database}.events FINAL GROUP BY id HAVING n > 1 LIMIT 5`, format: 'JSONEachRow' });
  const dupes = (await idsQuery.json()) as unknown[];
  const allIds = await ch.query({ query: `SELECT id FROM ${database}.events FINAL`, format: 'JSONCompact' });
  const present = new Set(((await allIds.json()) as { data: [string][] }).data.map(([id]) => Number(id)));
  const lost = [...acked].filter((id) => !present.has(id)).length;
  const rss = server.rssKb();
  await server.stop();
  await ch.command({ query: `DROP DATABASE IF EXISTS ${database}` });
  await ch.close();

  const seconds = (loadEnded - started) / 1000;
  console.log(`\nPipeline (gateway+worker in one process, real Redis/Kafka/ClickHouse 18.16 on the same 2 cores), ${new Date().toISOString()}\n`);
  console.log('| connections | events/request | req/s | acked events/s | p50 ms | p99 ms | negative codes | stored ids | lost | duplicated | drain after load (ms) | avg/max lag (ms, s resolution) | gateway+worker RSS MB |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  console.log(
    `| ${CONNECTIONS} | ${PER_REQUEST} | ${Math.round(result.requests.average)} | ${Math.round(acked.size / seconds)} | ${result.latency.p50} | ${result.latency.p99} | ${negative} | ${stored.ids} | ${lost} | ${dupes.length} | ${drainMs} | ${Math.round(lag?.avg_ms ?? 0)}/${Math.round(lag?.max_ms ?? 0)} | ${Math.round(rss / 1024)} |`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
