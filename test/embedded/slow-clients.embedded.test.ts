/**
 * Clients that are slow or say nothing, straight at the gateway (no edge in front): a body that
 * arrives slower than 16 KB/s is dropped by the gateway (gateway/transport/body-deadline.ts); an
 * idle connection is left open, because this uWebSockets.js build enforces no idle timeout, and is
 * counted (docs/running.md §The edge in front).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, event, NS, soap11Envelope, TestApp, xmlParams } from '../helpers/harness.js';
import { RawConnection } from '../helpers/raw-connection.js';

const metric = (text: string, name: string): number => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);

describe('slow and idle clients without the edge', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await TestApp.start();
    await t.provider('acme', 'secret-1');
  });
  afterAll(() => t.stop());

  it('drops a batch that arrives at 5 KB/s after about 10 s, stores none of it, counts it; a fast one on the next connection is stored', { timeout: 40_000 }, async () => {
    let events = '';
    for (let i = 0; events.length < 75 * 1024; i++) events += `<pEvento>${xmlParams(event({ Codigo: `slow-${i}` }))}</pEvento>`;
    const body = Buffer.from(soap11Envelope('LoginYInsertarEventos', `${xmlParams(credentials())}<Eventos>${events}</Eventos>`));
    const head = `POST /service.asmx HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: "${NS}LoginYInsertarEventos"\r\nContent-Length: ${body.length}\r\n\r\n`;

    const slow = await RawConnection.open(t.app.gateway.port);
    slow.write(head);
    const started = Date.now();
    await expect(slow.writeSlowly(body, 1024, 200)).rejects.toThrow(/closed the connection after \d+ of \d+ body bytes/);
    const seconds = (Date.now() - started) / 1000;
    expect(seconds).toBeGreaterThan(9.5);
    expect(seconds).toBeLessThan(13);
    expect(slow.unread()).toBe('');
    const stored = await t.app.backends.events.recent({ provider: 'acme', limit: 1000 });
    expect(stored.filter((e) => e.codigo.startsWith('slow-'))).toHaveLength(0);
    expect(metric(await t.metrics(), 'gateway_rejected_requests_total\\{reason="slow_body"\\}')).toBe(1);

    const fast = await RawConnection.open(t.app.gateway.port);
    fast.write(head);
    fast.write(body);
    const r = await fast.read(false, 10_000);
    fast.close();
    expect(r.status).toBe(200);
  });

  it('leaves a connection that says nothing open, and counts the open connections', { timeout: 40_000 }, async () => {
    const before = metric(await t.metrics(), 'gateway_open_connections');
    const idle = await Promise.all([1, 2, 3].map(() => RawConnection.open(t.app.gateway.port)));
    await new Promise((r) => setTimeout(r, 200));
    expect(metric(await t.metrics(), 'gateway_open_connections')).toBe(before + 3);
    // uWebSockets.js 20.30 closed these after 8-12 s; 20.57 never does (its timers do not run).
    // Should a later build close them again, docs/running.md §The edge in front must say so.
    expect(await idle[0]!.closesWithin(14_000)).toBe(false);
    for (const c of idle) c.close();
    await new Promise((r) => setTimeout(r, 200));
    expect(metric(await t.metrics(), 'gateway_open_connections')).toBe(before);
  });
});
