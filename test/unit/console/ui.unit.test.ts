import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, NetworkError, apiPath, createAdminApi, withQuery } from '../../../console/src/api.js';
import { addFresh, compareIds, mergeEvents } from '../../../console/src/events-list.js';
import { CATALOGUES, dateLocale, LANGUAGES, pickLanguage, placeholders, translate, type MessageKey } from '../../../console/src/i18n.js';
import { backoffDelay, followStream, type StreamState } from '../../../console/src/stream.js';
import type { EventView } from '../../../console/src/types.js';
import { waitFor } from '../../helpers/wait.js';

/**
 * Unit tests of the console's own logic (language, API client, event stream, event list). The
 * HTTP servers here are small fakes scripted per test; the console against the real gateway is
 * test/browser/console-browser.browser.test.ts.
 */
const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  }
});

async function fakeServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function eventView(id: string): EventView {
  return {
    id,
    systemUser: 'acme',
    dominio: 'AB123CD',
    nroSerie: 'SN-1',
    codigo: '1',
    latitud: -34.6,
    longitud: -58.4,
    altitud: 25,
    velocidad: 40,
    rumbo: null,
    validPosition: true,
    valido: null,
    eventTime: '2026-11-22T11:59:30Z',
    receptionTime: null,
    receivedAt: '2026-11-22T12:00:00.000Z',
    storedAt: '2026-11-22T12:00:00.000Z',
    operation: 'LoginYInsertarEvento',
  };
}

describe('console Events view: ids highlighted as fresh', () => {
  it('keeps only the latest ones, however many arrive', () => {
    let ids: ReadonlySet<string> = new Set();
    for (let i = 1; i <= 10_000; i++) ids = addFresh(ids, String(i), 50);
    expect(ids.size).toBe(50);
    expect([...ids][0]).toBe('9951');
    expect(ids.has('10000')).toBe(true);
    // An id seen again moves to the newest end rather than growing the set.
    ids = addFresh(ids, '9951', 50);
    expect(ids.size).toBe(50);
    expect([...ids].at(-1)).toBe('9951');
  });
});

describe('console language', () => {
  it('has every message in both languages with the same placeholders', () => {
    const keys = Object.keys(CATALOGUES.en) as MessageKey[];
    expect(Object.keys(CATALOGUES.es).sort()).toEqual([...keys].sort());
    for (const key of keys) {
      expect(placeholders(CATALOGUES.es[key]), key).toEqual(placeholders(CATALOGUES.en[key]));
      expect(CATALOGUES.es[key].trim(), key).not.toBe('');
    }
  });

  it('picks Spanish for any es* browser language, English otherwise, and a stored choice first', () => {
    expect(pickLanguage(null, ['es-AR', 'en'])).toBe('es');
    expect(pickLanguage(null, ['ES'])).toBe('es');
    expect(pickLanguage(null, ['fr-FR', 'es-419'])).toBe('es');
    expect(pickLanguage(null, ['en-US', 'es'])).toBe('en');
    expect(pickLanguage(null, ['de', 'fr'])).toBe('en');
    expect(pickLanguage(null, [])).toBe('en');
    expect(pickLanguage('en', ['es-AR'])).toBe('en');
    expect(pickLanguage('es', ['en-US'])).toBe('es');
    expect(pickLanguage('klingon', ['es-MX'])).toBe('es');
    expect(LANGUAGES).toEqual(['en', 'es']);
  });

  it("writes dates in the browser's own locale of the chosen language (as its date fields do), else the language's default", () => {
    expect(dateLocale('en', ['en-US', 'es'])).toBe('en-US');
    expect(dateLocale('en', ['es-AR', 'en-AU'])).toBe('en-AU');
    expect(dateLocale('en', ['en'])).toBe('en-GB');
    expect(dateLocale('es', ['en-US'])).toBe('es-AR');
    expect(dateLocale('es', ['es-ES', 'en-US'])).toBe('es-ES');
    // The point of it: an en-US browser shows month first in both the tables and the Since field.
    const shown = new Intl.DateTimeFormat(dateLocale('en', ['en-US']), { dateStyle: 'short' }).format(new Date(Date.UTC(2026, 10, 28, 12)));
    expect(shown).toBe('11/28/26');
  });

  it('fills placeholders and leaves unknown ones as written', () => {
    expect(translate('en', 'providers.created', { name: 'acme' })).toBe('Provider acme created.');
    expect(translate('es', 'providers.created', { name: 'acme' })).toBe('Prestador acme creado.');
    expect(translate('es', 'commands.queued', { numero: 7 })).toBe('Comando 7 encolado para {name}.');
  });
});

describe('console admin API client', () => {
  it('sends the token in the Authorization header only, and JSON bodies', async () => {
    const seen: { url: string; auth: string | undefined; type: string | undefined; body: string }[] = [];
    const base = await fakeServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ url: req.url ?? '', auth: req.headers.authorization, type: req.headers['content-type'], body });
        res.writeHead(req.method === 'DELETE' ? 204 : 200, { 'Content-Type': 'application/json' });
        res.end(req.method === 'DELETE' ? undefined : JSON.stringify({ ok: true }));
      });
    });
    const api = createAdminApi({ token: 's3cret token', base });
    expect(await api.get('/admin/events', { provider: 'a b', dominio: '', beforeId: null, limit: 5 })).toEqual({ ok: true });
    expect(await api.send('POST', apiPath('admin', 'providers', 'x/y', 'commands'), { cmd: 'CC' })).toEqual({ ok: true });
    expect(await api.send('DELETE', '/admin/providers/x', undefined, { confirm: 'x' })).toBeUndefined();
    expect(seen.map((s) => s.url)).toEqual(['/admin/events?provider=a+b&limit=5', '/admin/providers/x%2Fy/commands', '/admin/providers/x?confirm=x']);
    expect(seen.every((s) => s.auth === 'Bearer s3cret token' && !s.url.includes('s3cret'))).toBe(true);
    expect(seen[1]).toMatchObject({ type: 'application/json', body: '{"cmd":"CC"}' });
  });

  it("turns the API's error answer into an ApiError and reports 401", async () => {
    const base = await fakeServer((req, res) => {
      const status = req.url === '/unauthorized' ? 401 : req.url === '/html' ? 502 : 400;
      res.writeHead(status, { 'Content-Type': status === 502 ? 'text/html' : 'application/json' });
      res.end(status === 502 ? '<h1>Bad Gateway</h1>' : JSON.stringify({ error: 'password is too short', field: 'password', requestId: 'r-1' }));
    });
    let unauthorized = 0;
    const api = createAdminApi({ token: 't', base, onUnauthorized: () => unauthorized++ });
    const bad = await api.send('PATCH', '/x', { password: 'a' }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ApiError);
    expect(bad).toMatchObject({ status: 400, message: 'password is too short', field: 'password', requestId: 'r-1' });
    await expect(api.get('/unauthorized')).rejects.toMatchObject({ status: 401 });
    expect(unauthorized).toBe(1);
    await expect(api.get('/html')).rejects.toMatchObject({ status: 502, message: '<h1>Bad Gateway</h1>' });
    expect(unauthorized).toBe(1);
  });

  it('reports an unreachable gateway as a NetworkError', async () => {
    const base = await fakeServer(() => undefined);
    servers.pop()?.close();
    const err = await createAdminApi({ token: 't', base }).get('/admin/overview').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
  });

  it('builds query strings without empty filters', () => {
    expect(withQuery('/a', {})).toBe('/a');
    expect(withQuery('/a', { x: '', y: null, z: undefined })).toBe('/a');
    expect(withQuery('/a', { provider: 'ñ&=', limit: 0 })).toBe('/a?provider=%C3%B1%26%3D&limit=0');
  });
});

describe('console event stream', () => {
  it('backs off exponentially up to the cap', () => {
    expect([0, 1, 2, 3, 4, 5, 50].map((a) => backoffDelay(a, 500, 5000))).toEqual([500, 1000, 2000, 4000, 5000, 5000, 5000]);
  });

  it('reads events split across chunks, with the token in the header, and reconnects after the server ends the stream', async () => {
    const connections: { auth: string | undefined; url: string; accept: string | undefined }[] = [];
    const base = await fakeServer((req, res) => {
      connections.push({ auth: req.headers.authorization, url: req.url ?? '', accept: req.headers.accept });
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      const n = connections.length;
      const message = `event: event\nid: ${n}\ndata: ${JSON.stringify(eventView(String(n)))}\n\n`;
      // Split mid-line, with a comment and a foreign event type the reader must skip.
      res.write(': keep-alive\n\n');
      res.write('event: other\ndata: {}\n\n');
      res.write(message.slice(0, 17));
      setTimeout(() => res.end(message.slice(17)), 20);
    });
    const received: { data: string; id: string | undefined }[] = [];
    const states: StreamState[] = [];
    const stop = followStream({
      url: `${base}/admin/events/stream?provider=acme`,
      token: 'tok',
      initialDelayMs: 20,
      maxDelayMs: 40,
      onMessage: (data, id) => received.push({ data, id }),
      onState: (s) => states.push(s),
    });
    try {
      await waitFor('the condition', () => received.length >= 2);
    } finally {
      stop();
    }
    expect(received.slice(0, 2).map((r) => [r.id, (JSON.parse(r.data) as EventView).id])).toEqual([['1', '1'], ['2', '2']]);
    expect(connections[0]).toEqual({ auth: 'Bearer tok', url: '/admin/events/stream?provider=acme', accept: 'text/event-stream' });
    expect(states.slice(0, 4)).toEqual(['connecting', 'open', 'retrying', 'connecting']);
    expect(states.at(-1)).toBe('stopped');
  });

  it('retries while the server fails and stops for good on 401', async () => {
    let calls = 0;
    const base = await fakeServer((_req, res) => {
      calls += 1;
      res.writeHead(calls < 3 ? 503 : 401, { 'Content-Type': 'application/json' });
      res.end('{"error":"x"}');
    });
    let unauthorized = 0;
    const states: StreamState[] = [];
    followStream({ url: `${base}/s`, token: 't', initialDelayMs: 10, onMessage: () => undefined, onState: (s) => states.push(s), onUnauthorized: () => unauthorized++ });
    await waitFor('the condition', () => unauthorized === 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(calls).toBe(3);
    expect(states).toEqual(['connecting', 'retrying', 'connecting', 'retrying', 'connecting', 'stopped']);
  });

  it('reconnects after the gateway was unreachable', async () => {
    let up = false;
    let served = 0;
    const base = await fakeServer((_req, res) => {
      if (!up) {
        res.socket?.destroy();
        return;
      }
      served += 1;
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(`event: event\ndata: ${JSON.stringify(eventView('9'))}\n\n`);
    });
    const received: string[] = [];
    const stop = followStream({ url: `${base}/s`, token: 't', initialDelayMs: 10, maxDelayMs: 20, onMessage: (d) => received.push(d) });
    try {
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(received).toEqual([]);
      up = true;
      await waitFor('the condition', () => received.length === 1);
      expect(served).toBe(1);
    } finally {
      stop();
    }
  });
});

describe('console event list', () => {
  it('orders 64-bit decimal ids numerically', () => {
    expect(compareIds('9', '10')).toBeLessThan(0);
    expect(compareIds('18446744073709551615', '18446744073709551614')).toBeGreaterThan(0);
    expect(compareIds('42', '42')).toBe(0);
  });

  it('merges live and fetched events newest first, each once, keeping the newest `max`', () => {
    const merged = mergeEvents([eventView('10'), eventView('8')], [eventView('9'), eventView('10'), eventView('11')], 3);
    expect(merged.map((e) => e.id)).toEqual(['11', '10', '9']);
  });
});
