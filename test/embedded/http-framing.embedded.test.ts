import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, event, NS, soap11Envelope, TestApp, xmlParams } from '../helpers/harness.js';
import { RawConnection } from '../helpers/raw-connection.js';
import { errorLine } from '../helpers/client-errors.js';
import { UWS_REFUSALS } from '../helpers/uws-refusals.js';

/**
 * Requests whose framing is in doubt, sent byte by byte to the real gateway (no proxy in front):
 * what the gateway answers itself, and what uWebSockets.js drops before the gateway sees it.
 */
describe('request framing at the gateway', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start();
    await t.provider('acme', 'secret-1');
  });
  afterAll(() => t.stop());

  const body = (codigo: string): string => soap11Envelope('LoginYInsertarEvento', xmlParams({ ...credentials(), ...event({ Codigo: codigo }) }));
  const head = (lines: string[]): string =>
    `POST /service.asmx HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: "${NS}LoginYInsertarEvento"\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n`;
  const stored = async (codigo: string): Promise<number> =>
    (await t.app.backends.events.recent({ provider: 'acme', limit: 1000 })).filter((e) => e.codigo === codigo).length;

  /** The gateway still answers a well-formed insert on a fresh connection. */
  async function stillServes(codigo: string): Promise<void> {
    const c = await RawConnection.open(t.app.gateway.port);
    const b = body(codigo);
    c.write(head([`Content-Length: ${Buffer.byteLength(b)}`]) + b);
    const r = await c.read(false, 10_000);
    c.close();
    expect(r.status).toBe(200);
    expect(r.body.toString()).toMatch(/<LoginYInsertarEventoResult>[1-9]\d*<\/LoginYInsertarEventoResult>/);
    expect(await stored(codigo)).toBe(1);
  }

  async function refused(lengthLines: string[], codigo: string, trailer = ''): Promise<void> {
    const c = await RawConnection.open(t.app.gateway.port);
    c.write(head(lengthLines) + body(codigo) + trailer);
    const r = await c.read(false, 10_000);
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(r.body.toString()).toBe(errorLine('badContentLength'));
    // Nothing after a request of unknown length can be trusted: the gateway hangs up.
    expect(await c.closesWithin(2_000)).toBe(true);
    expect(await stored(codigo)).toBe(0);
  }

  it('reads the first of a repeated header, as it always did (Content-Type, SOAPAction)', async () => {
    const b = body('first-wins');
    const c = await RawConnection.open(t.app.gateway.port);
    // The second SOAPAction and Content-Type would each refuse the call; the first ones are read.
    c.write(head([`SOAPAction: "${NS}Nonexistent"`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(b)}`]) + b);
    const r = await c.read(false, 10_000);
    c.close();
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/xml; charset=utf-8');
    expect(r.body.toString()).toMatch(/<LoginYInsertarEventoResult>[1-9]\d*<\/LoginYInsertarEventoResult>/);
    expect(await stored('first-wins')).toBe(1);
  });

  it('answers 400 to two Content-Length headers that differ, stores nothing and hangs up', async () => {
    const n = Buffer.byteLength(body('cl-differ'));
    // Framed by the first line, the 5 extra bytes would start a second request.
    await refused([`Content-Length: ${n}`, `Content-Length: ${n + 5}`], 'cl-differ', 'GET /');
    await refused([`Content-Length: ${n + 5}`, `Content-Length: ${n}`], 'cl-differ', 'GET /');
    await stillServes('after-cl-differ');
  });

  it('answers 400 when a second Content-Length is not a number', async () => {
    const n = Buffer.byteLength(body('cl-invalid'));
    await refused([`Content-Length: ${n}`, 'Content-Length: abc'], 'cl-invalid');
    await refused([`Content-Length: ${n}`, 'Content-Length: -1'], 'cl-invalid');
    await stillServes('after-cl-invalid');
  });

  it('refuses a HEAD the same way, with the headers only', async () => {
    const c = await RawConnection.open(t.app.gateway.port);
    c.write('HEAD /service.asmx HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nContent-Length: 3\r\n\r\nabc');
    const r = await c.read(true, 10_000);
    expect(r.status).toBe(400);
    expect(await c.closesWithin(2_000)).toBe(true);
    expect(c.unread()).toBe('');
  });

  it('accepts repeated identical Content-Length headers (RFC 9110 §8.6)', async () => {
    const b = body('cl-same');
    const c = await RawConnection.open(t.app.gateway.port);
    c.write(head([`Content-Length: ${Buffer.byteLength(b)}`, `Content-Length: ${Buffer.byteLength(b)}`]) + b);
    const r = await c.read(false, 10_000);
    c.close();
    expect(r.status).toBe(200);
    expect(await stored('cl-same')).toBe(1);
  });

  // uWebSockets.js refuses these before the gateway's code runs, with an answer of its own
  // (docs/running.md, "The edge in front"); the gateway stores nothing and keeps serving.
  describe('refused by uWebSockets.js with its own answer', () => {
    async function refusedByUws(raw: string | string[], status: 400 | 431 | 505, codigo: string): Promise<void> {
      const c = await RawConnection.open(t.app.gateway.port);
      for (const part of Array.isArray(raw) ? raw : [raw]) {
        // uWS may hang up before the last part: the parts after that cannot be written.
        if (c.closed) break;
        c.write(part);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await c.closesWithin(2_000)).toBe(true);
      const [head = '', ...rest] = c.unread().split('\r\n\r\n');
      expect(head).toBe(`HTTP/1.1 ${UWS_REFUSALS[status].statusLine}\r\nConnection: close`);
      expect(rest.join('\r\n\r\n')).toBe(UWS_REFUSALS[status].body);
      expect(await stored(codigo)).toBe(0);
    }

    it('a lone Content-Length that is not a number, or negative', async () => {
      await refusedByUws(head(['Content-Length: 12x']) + body('uws-cl-nan'), 400, 'uws-cl-nan');
      await refusedByUws(head(['Content-Length: -1']) + body('uws-cl-neg'), 400, 'uws-cl-neg');
      await stillServes('after-uws-cl-nan');
    });

    it('Content-Length together with Transfer-Encoding', async () => {
      const b = body('uws-cl-te');
      const chunked = `${Buffer.byteLength(b).toString(16)}\r\n${b}\r\n0\r\n\r\n`;
      await refusedByUws(head([`Content-Length: ${Buffer.byteLength(b)}`, 'Transfer-Encoding: chunked']) + chunked, 400, 'uws-cl-te');
      await stillServes('after-uws-cl-te');
    });

    it('an empty Content-Length frames no body: the envelope is read as the next request, which is refused', async () => {
      await refusedByUws(head(['Content-Length: ']) + body('uws-cl-empty'), 505, 'uws-cl-empty');
      await stillServes('after-uws-cl-empty');
    });

    it('a head over 4,096 bytes, in one read or in several', async () => {
      const b = body('uws-big-head');
      const full = head([`Content-Length: ${Buffer.byteLength(b)}`, `X-Padding: ${'p'.repeat(4_200)}`]);
      await refusedByUws(full + b, 431, 'uws-big-head');
      await refusedByUws([full.slice(0, 4_300), full.slice(4_300) + b], 431, 'uws-big-head');
      await stillServes('after-uws-big-head');
    });

    it('more than 98 header lines; 98 are served', async () => {
      const b = body('uws-many');
      // head() writes Host, Content-Type and SOAPAction; Content-Length is one more.
      const lines = (n: number): string[] => [...Array.from({ length: n - 4 }, (_, i) => `X-Pad-${i}: v`), `Content-Length: ${Buffer.byteLength(b)}`];
      await refusedByUws(head(lines(99)) + b, 431, 'uws-many');
      const c = await RawConnection.open(t.app.gateway.port);
      c.write(head(lines(98)) + b);
      const r = await c.read(false, 10_000);
      c.close();
      expect(r.status).toBe(200);
      expect(await stored('uws-many')).toBe(1);
    });

    it('anything but HTTP/1.1 (HTTP/1.0 included) gets 505; HTTP/1.1 without Host gets 400', async () => {
      const b = body('uws-version');
      await refusedByUws(head([`Content-Length: ${Buffer.byteLength(b)}`]).replace('HTTP/1.1', 'HTTP/1.0') + b, 505, 'uws-version');
      await refusedByUws(head([`Content-Length: ${Buffer.byteLength(b)}`]).replace('Host: 127.0.0.1\r\n', '') + b, 400, 'uws-version');
      await stillServes('after-uws-version');
    });
  });
});
