import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Backends } from '../../shared/backends/types.js';
import { loadConfig, type Config } from '../../shared/config/index.js';
import { hashPassword } from '../../shared/domain/passwords.js';
import { startApplication, type Application } from '../../gateway/app.js';
import { SharedClock } from '../../gateway/threads/clock.js';
import { event } from './client-event.js';

export const NS = 'http://tempuri.org/';
export const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
export const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
export const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
export const XSD = 'http://www.w3.org/2001/XMLSchema';
export const DECL = '<?xml version="1.0" encoding="utf-8"?>';
/** A fixed start time so golden responses with dates are stable. */
export const T0 = Date.UTC(2026, 10, 22, 12, 0, 0);

export interface Reply {
  status: number;
  contentType: string | null;
  setCookie: string | null;
  text: string;
}

/** The real server on ephemeral ports over a temporary DATA_DIR, with a controllable clock. */
export class TestApp {
  /** The time every front-end thread of the server reads (two threads unless a test says otherwise). */
  readonly sharedClock = SharedClock.create(T0);
  get now(): number {
    return this.sharedClock.now();
  }
  set now(ms: number) {
    this.sharedClock.set(ms);
  }
  readonly clock = (): number => this.now;
  app!: Application;
  config!: Config;
  base = '';
  dataDir = '';

  /** Log lines (JSON) at info and above, captured for the tests that assert on them. */
  readonly logs: string[] = [];

  static async start(env: Record<string, string> = {}, backends?: (config: Config) => Promise<Backends>): Promise<TestApp> {
    const t = new TestApp();
    const capture = new Writable({
      write(chunk: Buffer, _encoding, done) {
        t.logs.push(chunk.toString('utf8'));
        done();
      },
    });
    t.dataDir = mkdtempSync(path.join(tmpdir(), 'gw-test-'));
    // Two front-end threads unless a test says otherwise: larger machines run several by default,
    // so every behaviour is proven across the thread hop too, not only on the main thread.
    t.config = loadConfig({ DATA_DIR: t.dataDir, ADMIN_TOKEN: 'test-token', HOST: '127.0.0.1', SQLITE_SYNCHRONOUS: 'NORMAL', GATEWAY_THREADS: '2', ...env });
    t.app = await startApplication({
      config: t.config,
      logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'info' }, capture),
      clock: t.sharedClock,
      port: 0,
      adminPort: 0,
      ...(backends ? { backends: await backends(t.config) } : {}),
    });
    t.base = `http://127.0.0.1:${t.app.gateway.port}`;
    return t;
  }

  get url(): string {
    return `${this.base}${this.config.service.path}`;
  }

  async stop(): Promise<void> {
    await this.app.close();
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  advance(ms: number): void {
    this.now += ms;
  }

  async provider(systemUser: string, password: string, extra: { timeZone?: string; requireRegisteredVehicles?: boolean } = {}): Promise<void> {
    const created = await this.app.backends.providers.create({
      systemUser,
      passwordHash: await hashPassword(password),
      enabled: true,
      timeZone: extra.timeZone ?? null,
      requireRegisteredVehicles: extra.requireRegisteredVehicles ?? false,
      createdAt: this.now,
      updatedAt: this.now,
    });
    if (created === null) throw new Error(`provider ${systemUser} exists`);
  }

  async request(method: string, pathAndQuery: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<Reply> {
    const res = await fetch(`${this.base}${pathAndQuery}`, { method, headers, ...(body === undefined ? {} : { body }) });
    return {
      status: res.status,
      contentType: res.headers.get('content-type'),
      setCookie: res.headers.get('set-cookie'),
      text: await res.text(),
    };
  }

  /** SOAP 1.1 call with the standard quoted SOAPAction unless `headers` says otherwise. */
  soap11(op: string, params: string, headers?: Record<string, string>, cookie?: string): Promise<Reply> {
    return this.request('POST', this.config.service.path, soap11Envelope(op, params), {
      'Content-Type': 'text/xml; charset=utf-8',
      ...(headers ?? { SOAPAction: `"${NS}${op}"` }),
      ...(cookie ? { Cookie: cookie } : {}),
    });
  }

  soap12(op: string, params: string, cookie?: string): Promise<Reply> {
    return this.request('POST', this.config.service.path, soap12Envelope(op, params), {
      'Content-Type': 'application/soap+xml; charset=utf-8',
      ...(cookie ? { Cookie: cookie } : {}),
    });
  }

  get(op: string, query: Record<string, string>, cookie?: string): Promise<Reply> {
    const qs = new URLSearchParams(query).toString();
    return this.request('GET', `${this.config.service.path}/${op}${qs ? `?${qs}` : ''}`, undefined, cookie ? { Cookie: cookie } : {});
  }

  post(op: string, form: Record<string, string>, cookie?: string): Promise<Reply> {
    return this.request('POST', `${this.config.service.path}/${op}`, new URLSearchParams(form).toString(), {
      'Content-Type': 'application/x-www-form-urlencoded',
      ...(cookie ? { Cookie: cookie } : {}),
    });
  }

  /** The Prometheus text of this server's /metrics. */
  async metrics(): Promise<string> {
    const res = await fetch(`${this.app.admin.url}/metrics`, { headers: { Authorization: `Bearer ${this.app.adminToken}` } });
    return res.text();
  }

  async admin(method: string, pathAndQuery: string, body?: unknown): Promise<{ status: number; json: unknown }> {
    const res = await fetch(`${this.app.admin.url}${pathAndQuery}`, {
      method,
      headers: { Authorization: `Bearer ${this.app.adminToken}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, json: text === '' ? null : (JSON.parse(text) as unknown) };
  }
}

export function soap11Envelope(op: string, params: string): string {
  return `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${SOAP11}" xmlns:xsi="${XSI}" xmlns:xsd="${XSD}"><soap:Body><${op} xmlns="${NS}">${params}</${op}></soap:Body></soap:Envelope>`;
}

export function soap12Envelope(op: string, params: string): string {
  return `<?xml version="1.0" encoding="utf-8"?><soap12:Envelope xmlns:soap12="${SOAP12}" xmlns:xsi="${XSI}" xmlns:xsd="${XSD}"><soap12:Body><${op} xmlns="${NS}">${params}</${op}></soap12:Body></soap12:Envelope>`;
}

/** `<A>1</A><B>2</B>` from an object, in insertion order. */
export function xmlParams(params: Record<string, string>): string {
  return Object.entries(params)
    .map(([k, v]) => `<${k}>${v}</${k}>`)
    .join('');
}

export function soapResponse(version: '1.1' | '1.2', body: string): string {
  return `${DECL}<soap:Envelope xmlns:soap="${version === '1.1' ? SOAP11 : SOAP12}" xmlns:xsi="${XSI}" xmlns:xsd="${XSD}"><soap:Body>${body}</soap:Body></soap:Envelope>`;
}

export function sessionCookie(reply: Reply): string {
  const m = /^(ASP\.NET_SessionId=[a-z0-5]{24});/.exec(reply.setCookie ?? '');
  if (m === null) throw new Error(`no session cookie in ${reply.setCookie}`);
  return m[1]!;
}

export { clientEvent, event } from './client-event.js';

export function credentials(user = 'acme', password = 'secret-1'): Record<string, string> {
  return { SystemUser: user, Password: password };
}

/**
 * One LoginYInsertarEvento over SOAP 1.1 to a gateway at `url` (`user`'s credentials, default acme's,
 * password secret-1; an event whose NroSerie is `marker`): the Result code, or null when no answer
 * came within 10 s or none could be read from it. What the load of the fault and HA tests sends.
 */
export async function postSoapInsert(url: string, marker: string, codigo: number, user = 'acme'): Promise<number | null> {
  const body = soap11Envelope('LoginYInsertarEvento', xmlParams({ ...credentials(user), ...event({ NroSerie: marker, Codigo: String(codigo % 90) }) }));
  try {
    const res = await fetch(url, {
      method: 'POST',
      body,
      headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NS}LoginYInsertarEvento"` },
      signal: AbortSignal.timeout(10_000),
    });
    const code = Number(/Result>(-?\d+)</.exec(await res.text())?.[1] ?? NaN);
    return Number.isNaN(code) ? null : code;
  } catch {
    return null;
  }
}
