import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, event, NS, soap11Envelope, TestApp, xmlParams } from '../helpers/harness.js';
import { EDGE_CONFIG_DIR, NginxEdge } from '../helpers/nginx-edge.js';
import { RawConnection, type RawResponse } from '../helpers/raw-connection.js';

/** Open TCP connections accepted on 127.0.0.1:`port` (Linux /proc/net/tcp; state 01 = ESTABLISHED). */
function establishedTo(port: number): number {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f[1] === local && f[3] === '01').length;
}

/**
 * The shipped edge (deploy/nginx, Debian's nginx) in front of the real gateway: what uWebSockets.js
 * cannot do alone because its limits are compiled in. The tests run concurrently (the idle one
 * waits a minute); each uses its own event codes.
 */
describe.concurrent('the nginx edge in front of the gateway', () => {
  let t: TestApp;
  let edge: NginxEdge;
  beforeAll(async () => {
    t = await TestApp.start();
    await t.provider('acme', 'secret-1');
    edge = await NginxEdge.start([t.app.gateway.port]);
  });
  afterAll(async () => {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
    await edge?.stop();
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
    await t?.stop();
  });

  const post = (op: string, body: string, extra: string[] = []): string =>
    `POST /service.asmx HTTP/1.1\r\nHost: gps.example.com\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: "${NS}${op}"\r\n` +
    `${extra.map((l) => `${l}\r\n`).join('')}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  const insert = (codigo: string, extra: string[] = []): string => {
    const body = soap11Envelope('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event({ Codigo: codigo }) }));
    return post('LoginYInsertarEvento', body, extra) + body;
  };
  const idOf = (r: RawResponse): number => {
    expect(r.status).toBe(200);
    const m = /<LoginYInsertarEventoResult>(\d+)<\/LoginYInsertarEventoResult>/.exec(r.body.toString());
    if (m === null) throw new Error(`no event id in ${r.body.toString()}`);
    return Number(m[1]);
  };
  /** Stored events whose Codigo starts with `prefix`: code → id. */
  const stored = async (prefix: string): Promise<Map<string, number>> => {
    const events = await t.app.backends.events.recent({ provider: 'acme', limit: 1000 });
    return new Map(events.filter((e) => e.codigo.startsWith(prefix)).map((e) => [e.codigo, Number(e.id)]));
  };

  /** A LoginYInsertarEventos request of at least 75 KB: its head and its body. */
  const bigBatch = (prefix: string): { head: string; body: Buffer; codes: string[] } => {
    const codes: string[] = [];
    let events = '';
    for (let i = 0; events.length < 75 * 1024; i++) {
      codes.push(`${prefix}${i}`);
      events += `<pEvento>${xmlParams(event({ Codigo: `${prefix}${i}` }))}</pEvento>`;
    }
    const body = Buffer.from(soap11Envelope('LoginYInsertarEventos', `${xmlParams(credentials())}<Eventos>${events}</Eventos>`));
    return { head: post('LoginYInsertarEventos', body.toString()), body, codes };
  };

  it('stores and answers a 75 KB batch sent at 5 KB/s', { timeout: 45_000 }, async () => {
    const { head, body, codes } = bigBatch('slow-');
    const c = await RawConnection.open(edge.port);
    const started = Date.now();
    c.write(head);
    await c.writeSlowly(body, 1024, 200);
    const r = await c.read(false, 20_000);
    const seconds = (Date.now() - started) / 1000;
    c.close();
    expect(seconds).toBeGreaterThan(14);
    expect(r.status).toBe(200);
    const ids = [...r.body.toString().matchAll(/<int>(-?\d+)<\/int>/g)].map((m) => Number(m[1]));
    expect(ids).toHaveLength(codes.length);
    const byCode = await stored('slow-');
    expect(codes.map((code) => byCode.get(code))).toEqual(ids);
    expect(ids.every((id) => id > 0)).toBe(true);
  });

  it('without the edge, the gateway drops the same slow batch (why the edge exists)', { timeout: 45_000 }, async () => {
    const { head, body } = bigBatch('direct-slow-');
    const c = await RawConnection.open(t.app.gateway.port);
    c.write(head);
    await expect(c.writeSlowly(body, 1024, 200)).rejects.toThrow(/closed the connection after \d+ of \d+ body bytes/);
    expect(c.unread()).toBe('');
    expect((await stored('direct-slow-')).size).toBe(0);
  });

  it('answers two pipelined inserts on one connection, in order, each with its own id', async () => {
    const c = await RawConnection.open(edge.port);
    c.write(insert('pipe-1') + insert('pipe-2'));
    const first = idOf(await c.read(false, 10_000));
    const second = idOf(await c.read(false, 10_000));
    c.close();
    expect(first).not.toBe(second);
    const byCode = await stored('pipe-');
    expect(byCode.get('pipe-1')).toBe(first);
    expect(byCode.get('pipe-2')).toBe(second);
  });

  it('keeps a client connection idle for 60 s usable', { timeout: 75_000 }, async () => {
    const c = await RawConnection.open(edge.port);
    c.write(insert('idle-1'));
    idOf(await c.read(false, 10_000));
    await new Promise((r) => setTimeout(r, 60_000));
    expect(c.closed).toBe(false);
    // By now the gateway has closed or nginx has retired every upstream connection; a POST on a
    // connection uWS was closing would come back as a 502.
    c.write(insert('idle-2'));
    const id = idOf(await c.read(false, 10_000));
    c.close();
    expect((await stored('idle-')).get('idle-2')).toBe(id);
    expect(edge.errorLog()).not.toMatch(/\[error\]/);
  });

  it('keeps upstream connections alive and retires them itself after 4 s idle', { timeout: 30_000 }, async () => {
    // Its own gateway and edge: the connections counted are only this test's.
    const gw = await TestApp.start();
    const own = await NginxEdge.start([gw.app.gateway.port]);
    try {
      await gw.provider('acme', 'secret-1');
      const c = await RawConnection.open(own.port);
      for (const code of ['pool-1', 'pool-2']) {
        c.write(insert(code));
        idOf(await c.read(false, 10_000));
      }
      expect(establishedTo(gw.app.gateway.port)).toBe(1);
      // nginx's pool retires an idle upstream connection after 4 s (keepalive_timeout 4s): the
      // gateway's uWS closes none itself (docs/running.md §The edge in front).
      await new Promise((r) => setTimeout(r, 6_000));
      expect(establishedTo(gw.app.gateway.port)).toBe(0);
      c.write(insert('pool-3'));
      idOf(await c.read(false, 10_000));
      c.close();
    } finally {
      await own.stop();
      await gw.stop();
    }
  });

  it('without the edge, an idle connection stays open: uWS closes none (the edge must)', { timeout: 30_000 }, async () => {
    const c = await RawConnection.open(t.app.gateway.port);
    c.write(insert('direct-idle'));
    idOf(await c.read(false, 10_000));
    expect(await c.closesWithin(14_000)).toBe(false);
    c.close();
  });

  it('answers 431 to a request with 100 header lines and keeps serving the connection', async () => {
    const padding = Array.from({ length: 95 }, (_, i) => `X-Pad-${i}: v`);
    const c = await RawConnection.open(edge.port);
    c.write(insert('many-headers', padding));
    const r = await c.read(false, 10_000);
    expect(r.status).toBe(431);
    expect(r.body.toString()).toBe('Request Header Fields Too Large: more than 64 header lines.\r\n');
    c.write(insert('after-many-headers'));
    const id = idOf(await c.read(false, 10_000));
    c.close();
    const byCode = await stored('many-headers');
    expect(byCode.size).toBe(0);
    expect((await stored('after-many-headers')).get('after-many-headers')).toBe(id);
  });

  it('serves a request with 60 header lines, which uWS alone leaves unanswered', async () => {
    const c = await RawConnection.open(edge.port);
    c.write(insert('sixty-headers', Array.from({ length: 55 }, (_, i) => `X-Pad-${i}: v`)));
    const id = idOf(await c.read(false, 10_000));
    c.close();
    expect((await stored('sixty-headers')).get('sixty-headers')).toBe(id);
  });

  it('serves an HTTP/1.0 client and answers 400 to what uWS alone drops unanswered (no Host, a lower-case method)', async () => {
    const c = await RawConnection.open(edge.port);
    c.write(insert('http10').replace(' HTTP/1.1\r\n', ' HTTP/1.0\r\n'));
    const id = idOf(await c.read(false, 10_000));
    c.close();
    expect((await stored('http10')).get('http10')).toBe(id);
    for (const head of ['GET /service.asmx?wsdl HTTP/1.1\r\n\r\n', 'get /service.asmx?wsdl HTTP/1.1\r\nHost: x\r\n\r\n']) {
      const r = await RawConnection.open(edge.port);
      r.write(head);
      expect((await r.read(false, 10_000)).status).toBe(400);
      r.close();
    }
  });

  it('answers 400 to a head line over 8 KB and to conflicting Content-Length headers', async () => {
    const big = await RawConnection.open(edge.port);
    big.write(insert('big-head', [`Cookie: a=${'c'.repeat(9_000)}`]));
    expect((await big.read(false, 10_000)).status).toBe(400);
    big.close();
    const dup = await RawConnection.open(edge.port);
    dup.write(insert('dup-length', ['Content-Length: 5']));
    expect((await dup.read(false, 10_000)).status).toBe(400);
    expect(await dup.closesWithin(2_000)).toBe(true);
    expect((await stored('big-head')).size + (await stored('dup-length')).size).toBe(0);
  });

  it('forwards what the gateway reads: Host (WSDL addresses), SOAPAction, Content-Type and the session cookie', async () => {
    const wsdl = await fetch(`http://127.0.0.1:${edge.port}/service.asmx?wsdl`);
    expect(await wsdl.text()).toContain(`location="http://127.0.0.1:${edge.port}/service.asmx"`);
    const login = await fetch(`http://127.0.0.1:${edge.port}/service.asmx/Login`, {
      method: 'POST',
      body: new URLSearchParams(credentials()),
    });
    expect(await login.text()).toContain('>true<');
    const cookie = /^(ASP\.NET_SessionId=[a-z0-5]{24});/.exec(login.headers.get('set-cookie') ?? '')?.[1];
    expect(cookie).toBeDefined();
    const body = soap11Envelope('InsertarEvento', xmlParams(event({ Codigo: 'cookie-1' })));
    const c = await RawConnection.open(edge.port);
    c.write(post('InsertarEvento', body, [`Cookie: ${cookie}`]) + body);
    const r = await c.read(false, 10_000);
    c.close();
    const m = /<InsertarEventoResult>(\d+)<\/InsertarEventoResult>/.exec(r.body.toString());
    expect(m).not.toBeNull();
    expect((await stored('cookie-1')).get('cookie-1')).toBe(Number(m?.[1]));
  });

  it('passes the client address as the only X-Forwarded-For entry, so a client cannot pick its lockout key', { timeout: 30_000 }, async () => {
    await t.provider('xff', 'secret-1');
    const login = async (password: string, forwardedFor: string): Promise<string> => {
      const r = await fetch(`http://127.0.0.1:${edge.port}/service.asmx/Login`, {
        method: 'POST',
        headers: { 'X-Forwarded-For': forwardedFor },
        body: new URLSearchParams({ SystemUser: 'xff', Password: password }),
      });
      return r.text();
    };
    // Each failure claims another address; the gateway (trusting the edge on loopback) must still
    // count them all against the one client the edge saw, and lock it out.
    for (let i = 0; i < t.config.logins.lockoutMaxFailures; i++) expect(await login('wrong-password', `203.0.113.${i}`)).toContain('>false<');
    expect(await login('secret-1', '198.51.100.7')).toContain('>false<');
  });

  it('ships the docker-compose upstream with the same pool settings as the tested one', () => {
    const directives = (file: string): string[] =>
      readFileSync(path.join(EDGE_CONFIG_DIR, file), 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '' && !l.startsWith('#'));
    const servers = (lines: string[]): string[] => lines.filter((l) => l.startsWith('server '));
    const tested = directives('gateways.conf');
    const compose = directives('gateways.compose.conf');
    expect(compose.filter((l) => !l.startsWith('server '))).toEqual(tested.filter((l) => !l.startsWith('server ')));
    expect(servers(compose)).toEqual(['server gateway-1:8080 max_fails=3 fail_timeout=5s;', 'server gateway-2:8080 max_fails=3 fail_timeout=5s;']);
    expect(servers(tested)).toHaveLength(1);
  });
});
