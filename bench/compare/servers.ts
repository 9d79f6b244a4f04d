/**
 * The servers `npm run bench` measures, each started fresh for its row and stopped after it:
 * the ceiling (bare uWebSockets.js), the peers (gSOAP, Apache CXF, node-soap: our WSDL with an
 * in-memory LoginYInsertarEvento; gSOAP also storing durably as ours does) and ours (the compiled
 * gateway, durable acknowledgements).
 */
import { execFileSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DATABASE_FILE, openDatabase } from '../../shared/backends/embedded/database.js';
import { UPSERT_LAST_REPORT_SQL } from '../../shared/backends/embedded/trips.js';
import { startServer, type BenchServer } from '../lib/server.js';
import { exited, loopback, signal, spawnReady, track } from '../lib/processes.js';
import { buildCxfPeer } from '../peers/cxf/build.js';
import { buildGsoapPeer } from '../peers/gsoap/build.js';
import { log, NS, PASSWORD, USER } from './config.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

export interface Target {
  /** The service URL (`.../service.asmx`; https:// for the TLS rows). */
  url: string;
  /** The CA an https:// target's certificate is checked against. */
  ca?: string;
  pid: number;
  /** Where the server writes its GC pauses (bench/lib/gc-meter.mjs); null for servers without one we can read. */
  gcFile: string | null;
  stop(): Promise<void>;
}

/** A bench server script of ours (TypeScript, run with tsx) in its own process group, with the GC meter. */
async function tsxServer(name: string, file: string, env: Record<string, string> = {}): Promise<Target> {
  const gcFile = path.join(mkdtempSync(path.join(tmpdir(), 'gw-bench-gc-')), 'gc.json');
  const meter = pathToFileURL(path.join(ROOT, 'bench', 'lib', 'gc-meter.mjs')).href;
  const ready = await spawnReady(name, process.execPath, ['--import', 'tsx', '--import', meter, file], { cwd: ROOT, env: { PORT: '0', BENCH_GC_FILE: gcFile, ...env } });
  return { ...ready, gcFile };
}

export const startCeiling = (): Promise<Target> => tsxServer('ceiling', 'bench/ceiling/server.ts');

export const startNodeSoap = (): Promise<Target> =>
  tsxServer('node-soap', 'bench/peers/node-soap/server.ts', { PEER_USER: USER, PEER_PASSWORD: PASSWORD });

/** The peers' builds, once per run (cached across runs): a failed build fails only its rows. */
const builds = new Map<string, Promise<unknown>>();
function once<T>(key: string, build: () => Promise<T>): Promise<T> {
  let b = builds.get(key) as Promise<T> | undefined;
  if (!b) builds.set(key, (b = build()));
  return b;
}

/**
 * gSOAP: `threads` = 0 for one thread accepting and serving, N for a pool of N behind a queue.
 * `durable`: it stores each event as ours does (server.cpp's Store) in a fresh database our own
 * migrations create, so the row, its indexes and the file are the same.
 */
export async function startGsoap(threads: number, durable = false): Promise<Target> {
  const binary = await once('gsoap', () => buildGsoapPeer(log));
  const args = [String(threads), USER, PASSWORD];
  let dataDir: string | null = null;
  if (durable) {
    dataDir = mkdtempSync(path.join(tmpdir(), 'gw-bench-gsoap-'));
    openDatabase(dataDir, 'FULL').close();
    args.push(path.join(dataDir, DATABASE_FILE), UPSERT_LAST_REPORT_SQL);
  }
  const ready = await spawnReady(`gsoap (${threads} threads${durable ? ', durable' : ''})`, binary, args);
  const stop = async (): Promise<void> => {
    await ready.stop();
    if (dataDir === null) return;
    // What it answered is what it stored: the row's check reads one answer, this counts them all.
    const db = new Database(path.join(dataDir, DATABASE_FILE), { readonly: true });
    try {
      log(`  gSOAP stored ${db.prepare('SELECT COUNT(*) FROM events').pluck().get() as number} events`);
    } finally {
      db.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  };
  return { ...ready, gcFile: null, stop };
}

export async function startCxf(): Promise<Target> {
  const args = await once('cxf', () => buildCxfPeer(log));
  // The JVM starts slowly on a busy 2-core machine.
  return { ...(await spawnReady('cxf', 'java', [...args, USER, PASSWORD], { readyMs: 180_000 })), gcFile: null };
}

/** A private CA and a certificate for 127.0.0.1, made once per run (scripts/services/secure/certs.sh, openssl). */
let certs: { dir: string; ca: string } | null = null;
function benchCerts(): { dir: string; ca: string } {
  if (certs === null) {
    const dir = mkdtempSync(path.join(tmpdir(), 'gw-bench-tls-'));
    execFileSync('bash', [path.join(ROOT, 'scripts/services/secure/certs.sh'), dir]);
    certs = { dir, ca: readFileSync(path.join(dir, 'ca.pem'), 'utf8') };
  }
  return certs;
}

/** Ours with TLS_CERT_FILE / TLS_KEY_FILE: every listener HTTPS, TLS 1.2+. */
export async function startOursTls(): Promise<Target & { server: BenchServer }> {
  const { dir, ca } = benchCerts();
  const target = await startOurs({ TLS_CERT_FILE: path.join(dir, 'server.pem'), TLS_KEY_FILE: path.join(dir, 'server.key') }, ca);
  return { ...target, ca };
}

/** Ours: the gateway through bench/lib/server.ts, with the provider created through the admin API. */
export async function startOurs(env: Record<string, string> = {}, ca?: string): Promise<Target & { server: BenchServer }> {
  const server = await startServer({ SQLITE_SYNCHRONOUS: 'FULL', ...env }, ca === undefined ? {} : { ca });
  const child = server.child;
  track(child, false);
  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (exited(child)) return; // crashed: server.stop() would wait for an exit already seen
      const done = server.stop();
      if (!(await Promise.race([done.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 15_000))]))) {
        signal(child, 'SIGKILL', false);
        await done;
      }
    })();
    return stopping;
  };
  try {
    loopback(server.serviceUrl);
    loopback(server.adminUrl);
    const created = await server.admin('POST', '/admin/providers', { systemUser: USER, password: PASSWORD });
    if ((created as { systemUser?: unknown } | null)?.systemUser !== USER) {
      throw new Error(`creating the provider failed: ${JSON.stringify(created)}`);
    }
    return { url: server.serviceUrl, pid: child.pid!, gcFile: server.gcFile, server, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** One request on its own connection (`Connection: close`, so no server thread is left holding it). */
function post(url: string, headers: Record<string, string>, body: string, ca?: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const options = { method: 'POST', agent: false as const, headers: { ...headers, 'Content-Length': Buffer.byteLength(body) } };
    const onResponse = (res: http.IncomingMessage): void => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', reject);
    };
    const target = loopback(url);
    const req = target.startsWith('https:') ? https.request(target, { ...options, ca, servername: 'localhost' }, onResponse) : http.request(target, options, onResponse);
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer from ${url} in 30 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

const insertEnvelope = (password: string): string =>
  `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>` +
  `<LoginYInsertarEvento xmlns="${NS}"><SystemUser>${USER}</SystemUser><Password>${password}</Password>` +
  `<Dominio>AB1CD</Dominio><NroSerie>SN</NroSerie><Codigo>0</Codigo><Latitud>-34.6037221</Latitud>` +
  `<Longitud>-58.3815704</Longitud><Altitud>25</Altitud><Velocidad>42.5</Velocidad>` +
  `<FechaHoraEvento>2026-11-22T08:59:30.000-03:00</FechaHoraEvento>` +
  `<FechaHoraRecepcion>2026-11-22T09:00:00-03:00</FechaHoraRecepcion></LoginYInsertarEvento></soap:Body></soap:Envelope>`;

/** The integer in `<[prefix:]LoginYInsertarEventoResult>`, or null. */
const result = (text: string): number | null => {
  const m = /<(?:[\w.-]+:)?LoginYInsertarEventoResult>(-?\d+)<\/(?:[\w.-]+:)?LoginYInsertarEventoResult>/.exec(text);
  return m ? Number(m[1]) : null;
};

/**
 * Before a server is measured: it must answer SOAP 1.1 LoginYInsertarEvento correctly (200,
 * text/xml, a SOAP 1.1 envelope, the response element in our namespace, a positive id), and a
 * wrong password must not get a positive id (the peers do compare the credentials).
 */
export async function checkAnswers(target: Target): Promise<void> {
  const headers = { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NS}LoginYInsertarEvento"` };
  const good = await post(target.url, headers, insertEnvelope(PASSWORD), target.ca);
  const problems = [
    good.status === 200 ? '' : `status ${good.status}`,
    /^text\/xml\b/.test(good.headers['content-type'] ?? '') ? '' : `Content-Type ${good.headers['content-type'] ?? '(none)'}`,
    good.text.includes('"http://schemas.xmlsoap.org/soap/envelope/"') ? '' : 'no SOAP 1.1 envelope',
    /<(?:[\w.-]+:)?LoginYInsertarEventoResponse[\s>]/.test(good.text) && good.text.includes(`"${NS}"`) ? '' : 'no LoginYInsertarEventoResponse in our namespace',
    (result(good.text) ?? 0) > 0 ? '' : 'no positive id',
  ].filter(Boolean);
  if (problems.length > 0) throw new Error(`wrong answer to SOAP 1.1 LoginYInsertarEvento (${problems.join(', ')}): ${good.text.slice(0, 400)}`);
  const bad = await post(target.url, headers, insertEnvelope('wrong-password'), target.ca);
  const id = result(bad.text);
  if (id !== null && id > 0) throw new Error(`a wrong password got a positive id (${id})`);
}

/** Logs in once over SOAP 1.1 and returns the `ASP.NET_SessionId=...` cookie. */
export async function login(url: string): Promise<string> {
  const body =
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>` +
    `<Login xmlns="${NS}"><SystemUser>${USER}</SystemUser><Password>${PASSWORD}</Password></Login></soap:Body></soap:Envelope>`;
  const res = await post(url, { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NS}Login"` }, body);
  const cookie = /ASP\.NET_SessionId=[^;,\s]+/.exec((res.headers['set-cookie'] ?? []).join('; '))?.[0];
  if (res.status !== 200 || !res.text.includes('<LoginResult>true</LoginResult>') || cookie === undefined) {
    throw new Error(`Login failed (${res.status}): ${res.text.slice(0, 300)}`);
  }
  return cookie;
}
