/**
 * Embedded-mode insert throughput with durable acknowledgements: autocannon posts SOAP 1.1
 * LoginYInsertarEvento (every event distinct, so dedupe never short-cuts) and
 * LoginYInsertarEventos with 100 events, against `main.ts` in its own process.
 * Run: npm run bench:insert  (env DURATION=seconds, CONNECTIONS=n)
 */
import autocannon from 'autocannon';
import { startServer } from './lib/server.js';

const DURATION = Number(process.env.DURATION ?? 10);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
const NS = 'http://tempuri.org/';

const fields = (i: number) =>
  `<Dominio>AB${i % 5000}CD</Dominio><NroSerie>SN</NroSerie><Codigo>${i}</Codigo><Latitud>-34.6037221</Latitud><Longitud>-58.3815704</Longitud><Altitud>25</Altitud><Velocidad>42.5</Velocidad><FechaHoraEvento>2026-11-22T08:59:30.${String(i % 1000).padStart(3, '0')}-03:00</FechaHoraEvento><FechaHoraRecepcion>2026-11-22T09:00:00-03:00</FechaHoraRecepcion>`;
const envelope = (op: string, inner: string) =>
  `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><${op} xmlns="${NS}"><SystemUser>bench</SystemUser><Password>bench-secret</Password>${inner}</${op}></soap:Body></soap:Envelope>`;

async function run(name: string, url: string, op: string, body: (i: number) => string, eventsPerRequest: number) {
  let i = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION,
    method: 'POST',
    headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NS}${op}"` },
    requests: [{ setupRequest: (req) => ({ ...req, body: body(i++) }) }],
  });
  return {
    name,
    reqPerSec: result.requests.average,
    eventsPerSec: result.requests.average * eventsPerRequest,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

async function main(): Promise<void> {
  const rows: string[] = [];
  const variants = [
    { sync: 'FULL', commit: 'inline' },
    { sync: 'FULL', commit: 'thread' },
    { sync: 'NORMAL', commit: 'thread' },
  ] as const;
  for (const { sync, commit } of variants) {
    const server = await startServer({ SQLITE_SYNCHRONOUS: sync, SQLITE_COMMIT: commit });
    await server.admin('POST', '/admin/providers', { systemUser: 'bench', password: 'bench-secret' });
    await run('warm-up', server.serviceUrl, 'LoginYInsertarEvento', (i) => envelope('LoginYInsertarEvento', fields(1e7 + i)), 1);
    const single = await run(`LoginYInsertarEvento (synchronous=${sync}, commit=${commit})`, server.serviceUrl, 'LoginYInsertarEvento', (i) => envelope('LoginYInsertarEvento', fields(i)), 1);
    const batch = await run(
      `LoginYInsertarEventos x100 (synchronous=${sync}, commit=${commit})`,
      server.serviceUrl,
      'LoginYInsertarEventos',
      (i) => envelope('LoginYInsertarEventos', `<Eventos>${Array.from({ length: 100 }, (_, k) => `<pEvento>${fields(2e7 + i * 100 + k)}</pEvento>`).join('')}</Eventos>`),
      100,
    );
    const rss = server.rssKb();
    await server.stop();
    for (const r of [single, batch]) {
      rows.push(`| ${r.name} | ${Math.round(r.reqPerSec)} | ${Math.round(r.eventsPerSec)} | ${r.p50} | ${r.p99} | ${r.errors} | ${Math.round(rss / 1024)} |`);
    }
  }
  console.log(`\nEmbedded insert throughput, ${CONNECTIONS} connections, ${DURATION} s each, ${new Date().toISOString()}\n`);
  console.log('| scenario | req/s | events/s | p50 ms | p99 ms | errors | server peak RSS MB |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) console.log(r);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
