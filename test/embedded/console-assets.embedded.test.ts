import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync, constants as zlibConstants, gunzipSync } from 'node:zlib';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIRST_LOAD_BUDGET_BYTES } from '../../console/build.js';
import { CONSOLE_CSP, consoleCsp, defaultConsoleDir, loadConsoleAssets, pickEncoding } from '../../gateway/admin/console-assets.js';
import { TestApp } from '../helpers/harness.js';
import { REPO } from '../helpers/paths.js';

/**
 * The admin server serves the console built by test/setup/console-build.ts: the page and its
 * assets without the token, with their types, caching and CSP; the API stays behind the token.
 */
let t: TestApp;
let page: string;
let assets: string[];

interface Fetched {
  status: number;
  headers: Headers;
  body: Buffer;
}

/** Raw bytes as sent (node:http, so Content-Encoding is not undone for us), the path as written. */
function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Fetched> {
  const { hostname, port } = new URL(url);
  const rawPath = url.slice(url.indexOf('/', url.indexOf('//') + 2));
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname, port, path: rawPath, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
        resolve({ status: res.statusCode ?? 0, headers: h, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  t = await TestApp.start();
  const res = await get(`${t.app.admin.url}/`);
  page = res.body.toString('utf8');
  assets = [...page.matchAll(/(?:src|href)="(\/console\/[^"]+)"/g)].map((m) => m[1] ?? '');
});

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await t?.stop();
});

describe('console page and assets', () => {
  it('serves the page at / without the token, with a strict CSP and no inline script or style', async () => {
    const res = await get(`${t.app.admin.url}/?anything=1`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    // Images also from the map's tile server (OpenStreetMap's unless CONSOLE_MAP_TILE_URL says otherwise).
    expect(res.headers.get('content-security-policy')).toBe(consoleCsp('https://tile.openstreetmap.org'));
    expect(res.headers.get('content-security-policy')).toContain("img-src 'self' data: https://tile.openstreetmap.org;");
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).toContain("connect-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe-inline');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const html = res.body.toString('utf8');
    expect(html).toMatch(/<div id="app"><\/div>/);
    // Every script has a src and there is no <style> or style attribute.
    expect([...html.matchAll(/<script\b[^>]*>/g)].every((m) => /\ssrc="\/console\//.test(m[0]))).toBe(true);
    expect(html).not.toMatch(/<style|\sstyle=/);
    expect(assets).toHaveLength(2);
    expect(assets.some((a) => /^\/console\/main-[A-Z0-9]{8}\.js$/.test(a))).toBe(true);
    expect(assets.some((a) => /^\/console\/main-[A-Z0-9]{8}\.css$/.test(a))).toBe(true);
  });

  it('serves the hashed assets with their types, immutable, in br or gzip as the client accepts', async () => {
    for (const asset of assets) {
      const plain = await get(`${t.app.admin.url}${asset}`);
      expect(plain.status).toBe(200);
      expect(plain.headers.get('content-type')).toBe(asset.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
      expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(plain.headers.get('content-encoding')).toBeNull();
      expect(plain.headers.get('vary')).toBe('Accept-Encoding');
      expect(Number(plain.headers.get('content-length'))).toBe(plain.body.length);

      const gz = await get(`${t.app.admin.url}${asset}`, { 'Accept-Encoding': 'gzip, deflate' });
      expect(gz.headers.get('content-encoding')).toBe('gzip');
      expect(gunzipSync(gz.body).equals(plain.body)).toBe(true);
      const br = await get(`${t.app.admin.url}${asset}`, { 'Accept-Encoding': 'gzip, deflate, br' });
      expect(br.headers.get('content-encoding')).toBe('br');
      expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
      expect(br.body.length).toBeLessThan(plain.body.length);

      const head = await get(`${t.app.admin.url}${asset}`, {}, 'HEAD');
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
    }
  });

  it(`keeps the first load (page, script, style sheet) under ${FIRST_LOAD_BUDGET_BYTES / 1024} KB gzip`, async () => {
    let total = 0;
    for (const url of ['/', ...assets]) {
      const res = await get(`${t.app.admin.url}${url}`, { 'Accept-Encoding': 'gzip' });
      expect(res.headers.get('content-encoding')).toBe('gzip');
      total += res.body.length;
    }
    console.log(`console first load: ${(total / 1024).toFixed(1)} KB gzip`);
    expect(total).toBeLessThan(FIRST_LOAD_BUDGET_BYTES);
  });

  it('puts no token and nothing fetched from elsewhere into the bundle', async () => {
    const bodies = await Promise.all(assets.map(async (a) => (await get(`${t.app.admin.url}${a}`)).body.toString('utf8')));
    for (const text of [page, ...bodies]) {
      expect(text).not.toContain(t.app.adminToken);
      expect(text).not.toMatch(/https?:\/\/(?!www\.w3\.org)[a-z0-9.-]+\.[a-z]{2,}\/[^\s"']*\.(js|css|woff2?)\b/i);
    }
  });

  it('answers 404 for anything else under /console/, without the token and without reading the disk', async () => {
    for (const url of ['/console/', '/console/nope.js', '/console/index.html', '/console/../package.json', '/console/%2e%2e/package.json', '/console/a/b.js']) {
      const res = await get(`${t.app.admin.url}${url}`);
      expect(res.status, url).toBe(404);
      expect(res.headers.get('content-type'), url).toBe('text/plain; charset=utf-8');
    }
  });

  it('leaves everything else behind the token', async () => {
    expect((await get(`${t.app.admin.url}/admin/providers`)).status).toBe(401);
    expect((await get(`${t.app.admin.url}/metrics`)).status).toBe(401);
    expect((await get(`${t.app.admin.url}/`, {}, 'POST')).status).toBe(401);
    expect((await get(`${t.app.admin.url}/index.html`)).status).toBe(401);
    expect((await t.admin('GET', '/admin/providers')).status).toBe(200);
  });
});

describe('console assets without a build', () => {
  it('keeps the server answering and says how to build the console', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'console-none-'));
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const served = loadConsoleAssets(logger, path.join(empty, 'missing'));
    const server = http.createServer((req, res) => {
      if (!served.serve(req, res)) res.writeHead(418).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const res = await get(`${base}/`);
      expect(res.status).toBe(404);
      expect(res.body.toString()).toMatch(/npm run build/);
      expect((await get(`${base}/admin/providers`)).status).toBe(418);
      expect(lines.join('')).toMatch(/console is not built/);
    } finally {
      server.close();
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });

  it("serves the build's compressed copies, and compresses a console without them off the event loop", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-copy-'));
    const built = defaultConsoleDir();
    const script = fs.readdirSync(built).find((n) => n.endsWith('.js'))!;
    const styles = fs.readdirSync(built).find((n) => n.endsWith('.css'))!;
    fs.copyFileSync(path.join(built, 'index.html'), path.join(dir, 'index.html'));
    fs.copyFileSync(path.join(built, script), path.join(dir, script));
    fs.copyFileSync(path.join(built, styles), path.join(dir, styles));
    // The style sheet comes with a copy the server must send as it is (a quick brotli, unlike its own).
    const quick = brotliCompressSync(fs.readFileSync(path.join(dir, styles)), { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 1 } });
    fs.writeFileSync(path.join(dir, `${styles}.br`), quick);
    // The page's copy is older than the page: stale, so not used.
    fs.writeFileSync(path.join(dir, 'index.html.br'), brotliCompressSync(Buffer.from('stale')));
    const past = new Date(Date.now() - 60_000);
    fs.utimesSync(path.join(dir, 'index.html.br'), past, past);

    const served = loadConsoleAssets(pino({ level: 'silent' }), dir);
    const server = http.createServer((req, res) => {
      if (!served.serve(req, res)) res.writeHead(418).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const css = await get(`${base}/console/${styles}`, { 'Accept-Encoding': 'br' });
      expect(css.headers.get('content-encoding')).toBe('br');
      expect(css.body.equals(quick)).toBe(true);
      // Without a copy: uncompressed until the thread pool has made one, then br, decoding to the file.
      const plain = fs.readFileSync(path.join(dir, script));
      let encoded: Fetched | null = null;
      for (let i = 0; i < 200 && encoded === null; i++) {
        const res = await get(`${base}/console/${script}`, { 'Accept-Encoding': 'br' });
        expect(res.status).toBe(200);
        if (res.headers.get('content-encoding') === 'br') encoded = res;
        else {
          expect(res.body.equals(plain)).toBe(true);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      expect(encoded).not.toBeNull();
      expect(brotliDecompressSync(encoded!.body).equals(plain)).toBe(true);
      let pageBr: Fetched | null = null;
      for (let i = 0; i < 200 && pageBr === null; i++) {
        const res = await get(`${base}/`, { 'Accept-Encoding': 'br' });
        if (res.headers.get('content-encoding') === 'br') pageBr = res;
        else await new Promise((r) => setTimeout(r, 50));
      }
      expect(brotliDecompressSync(pageBr!.body).toString()).toBe(fs.readFileSync(path.join(dir, 'index.html'), 'utf8'));
    } finally {
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds dist/console of the package from the source tree and from the compiled tree', () => {
    const root = REPO;
    expect(defaultConsoleDir(path.join(root, 'gateway', 'admin'))).toBe(path.join(root, 'dist', 'console'));
    expect(defaultConsoleDir(path.join(root, 'dist', 'gateway', 'admin'))).toBe(path.join(root, 'dist', 'console'));
  });

  it('chooses br over gzip and honours q=0', () => {
    expect(pickEncoding(undefined)).toBeNull();
    expect(pickEncoding('identity')).toBeNull();
    expect(pickEncoding('gzip')).toBe('gzip');
    expect(pickEncoding('gzip, br')).toBe('br');
    expect(pickEncoding('br;q=0, gzip;q=0.5')).toBe('gzip');
    expect(pickEncoding('gzip;q=0')).toBeNull();
    expect(pickEncoding('*')).toBe('gzip');
  });
});
