import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp, credentials, event, xmlParams } from '../helpers/harness.js';
import { REPO } from '../helpers/paths.js';

/**
 * The console's map in Debian's Chromium against the real gateway: tiles come from a loopback
 * server of this test (CONSOLE_MAP_TILE_URL), never from the Internet. Markers are checked at
 * their place in Web Mercator pixels, a click shows the event, a track draws and a live event
 * moves its marker. Photographed into test-results/console-map/.
 */
const CHROMIUM = '/usr/bin/chromium';
const SHOTS = path.join(REPO, 'test-results', 'console-map');
const STEP_MS = 10_000;
const ATTRIBUTION = 'Test tiles <b>not bold</b>';

let t: TestApp;
let tiles: http.Server;
let tileOrigin: string;
const tileRequests: string[] = [];
let context: BrowserContext | undefined;
let page: Page;
let userDataDir: string | undefined;
const requestedUrls: string[] = [];
const pageErrors: string[] = [];

/** A 256 px tile with its grid line and its z/x/y written on it, so a screenshot shows the tiling. */
function tileSvg(name: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256"><rect width="256" height="256" fill="#eef2e6" stroke="#b8c4a8"/><text x="8" y="20" font-size="12" fill="#7a8a66">${name}</text></svg>`;
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

let seq = 0;
async function insert(dominio: string, latitud: number, longitud: number): Promise<string> {
  seq += 1;
  const fields = event({ Dominio: dominio, Codigo: `C${seq}`, Latitud: String(latitud), Longitud: String(longitud), FechaHoraEvento: new Date(Date.UTC(2026, 10, 1) + seq * 1000).toISOString() });
  const reply = await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials('acme', 'secret-1'), ...fields }));
  const id = /<LoginYInsertarEventoResult>(\d+)</.exec(reply.text)?.[1];
  if (id === undefined) throw new Error(`no event id in ${reply.text}`);
  return id;
}

/** The centre of a vehicle's marker on the page. */
async function markerAt(dominio: string): Promise<{ x: number; y: number }> {
  const box = await page.locator(`path.vehicle[data-dominio="${dominio}"]`).boundingBox();
  if (box === null) throw new Error(`marker of ${dominio} not shown`);
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

/** Web Mercator's y in radians (north up). */
const mercatorY = (lat: number): number => Math.log(Math.tan(Math.PI / 4 + (lat * Math.PI) / 360));

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: the console's browser tests need Debian's Chromium.`);
  fs.mkdirSync(SHOTS, { recursive: true });
  tiles = http.createServer((req, res) => {
    tileRequests.push(req.url ?? '');
    const m = /^\/tiles\/(\d+)\/(\d+)\/(\d+)\.svg$/.exec(req.url ?? '');
    if (m === null) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'image/svg+xml' }).end(tileSvg(`${m[1]}/${m[2]}/${m[3]}`));
  });
  await new Promise<void>((resolve) => tiles.listen(0, '127.0.0.1', resolve));
  tileOrigin = `http://127.0.0.1:${(tiles.address() as AddressInfo).port}`;
  t = await TestApp.start({ CONSOLE_MAP_TILE_URL: `${tileOrigin}/tiles/{z}/{x}/{y}.svg`, CONSOLE_MAP_ATTRIBUTION: ATTRIBUTION });
  // The markers' colour is by age against the browser's clock.
  t.now = Date.now();
  await t.provider('acme', 'secret-1');
  await t.provider('empty', 'secret-1');

  userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-map-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    locale: 'en-US',
    viewport: { width: 1280, height: 900 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(STEP_MS);
  page.on('request', (r) => requestedUrls.push(r.url()));
  page.on('pageerror', (e) => pageErrors.push(e.message));
}, 60_000);

afterAll(async () => {
  await context?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await t?.stop();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- as above
  if (tiles !== undefined) await new Promise<void>((resolve) => tiles.close(() => resolve()));
  if (userDataDir !== undefined) fs.rmSync(userDataDir, { recursive: true, force: true });
});

describe('console map in Chromium', () => {
  const A = { dominio: 'AA111AA', lat: -34.6, lng: -58.38 };
  const B = { dominio: 'BB222BB', lat: -34.7, lng: -58.5 };
  let firstA = '';

  it('places each vehicle inserted over SOAP at its position, on tiles from the configured server', async () => {
    firstA = await insert(A.dominio, A.lat, A.lng);
    await insert(B.dominio, B.lat, B.lng);
    await page.goto(`${t.app.admin.url}/`);
    await page.fill('input[name="token"]', t.app.adminToken);
    await page.click('form[name="login"] button[type="submit"]');
    await page.waitForSelector('[data-view="overview"]');
    await page.click('nav a[href="#/map"]');
    await page.waitForSelector(`path.vehicle[data-dominio="${A.dominio}"][data-age="fresh"]`);
    await page.waitForSelector(`path.vehicle[data-dominio="${B.dominio}"]`);
    await page.waitForSelector('[data-vehicles="2"]');

    // Web Mercator: x grows with longitude, y with mercatorY southwards; W is the world's width in pixels.
    const a = await markerAt(A.dominio);
    const b = await markerAt(B.dominio);
    const world = ((a.x - b.x) * 360) / (A.lng - B.lng);
    const zoom = Math.log2(world / 256);
    expect(Math.abs(zoom - Math.round(zoom))).toBeLessThan(0.02);
    const expectedDy = ((mercatorY(A.lat) - mercatorY(B.lat)) / (2 * Math.PI)) * world;
    expect(Math.abs(b.y - a.y - expectedDy)).toBeLessThan(1.5);
    // The tiles on screen are the ones of that zoom, from the test's server.
    await page.waitForSelector(`img.leaflet-tile-loaded[src^="${tileOrigin}/tiles/${Math.round(zoom)}/"]`);
    expect(tileRequests.some((u) => u.startsWith(`/tiles/${Math.round(zoom)}/`))).toBe(true);
    // Tiles that load: no word of failing ones (console-newcomer.browser.test.ts has the other case).
    expect(await page.locator('[data-tiles="failing"]').count()).toBe(0);
    // The configured attribution is text, not markup.
    expect(await page.textContent('.leaflet-control-attribution')).toContain(ATTRIBUTION);
    expect(await page.locator('.leaflet-control-attribution b').count()).toBe(0);
    await shot('map');
  });

  it('a click on a marker shows its latest event', async () => {
    await page.click(`path.vehicle[data-dominio="${A.dominio}"]`);
    const detail = page.locator(`[data-selected-event="${firstA}"]`);
    await detail.waitFor();
    expect(await detail.locator('[data-field="dominio"]').textContent()).toBe(A.dominio);
    expect(await detail.locator('[data-field="codigo"]').textContent()).toBe('C1');
    expect(await detail.locator('[data-field="position"]').textContent()).toBe('-34.60000, -58.38000');
    await shot('map-selected');
  });

  it('a live event moves its marker (and the event shown) without a reload', async () => {
    await page.waitForSelector('[data-view="map"] [data-stream-state="open"]');
    const before = await markerAt(A.dominio);
    const bBefore = await markerAt(B.dominio);
    const world = ((before.x - bBefore.x) * 360) / (A.lng - B.lng);
    const moved = { lat: -34.65, lng: -58.45 };
    const id = await insert(A.dominio, moved.lat, moved.lng);
    await page.waitForSelector(`path.vehicle[data-dominio="${A.dominio}"][data-event-id="${id}"]`);
    await page.waitForSelector(`[data-selected-event="${id}"]`);
    const after = await markerAt(A.dominio);
    expect(Math.abs(after.x - before.x - ((moved.lng - A.lng) / 360) * world)).toBeLessThan(1.5);
    expect(Math.abs(after.y - before.y - ((mercatorY(A.lat) - mercatorY(moved.lat)) / (2 * Math.PI)) * world)).toBeLessThan(1.5);
    expect(await page.locator('path.vehicle').count()).toBe(2);
  });

  it("draws a vehicle's track for a time range, and a live event extends it", async () => {
    await page.click('[data-view="map"] button:has-text("Track this vehicle")');
    expect(await page.inputValue('[data-view="map"] input[name="dominio"]')).toBe(A.dominio);
    await page.selectOption('[data-view="map"] select[name="range"]', '1');
    await page.click('[data-view="map"] button[name="showTrack"]');
    await page.waitForSelector('path.track[data-points="2"]');
    await page.waitForSelector('[data-track-points="2"]');
    await insert(A.dominio, -34.62, -58.47);
    await page.waitForSelector('path.track[data-points="3"]');
    await page.waitForSelector('[data-track-points="3"]');
    await shot('map-track');
  });

  it('another provider shows its own fleet: none here', async () => {
    await page.selectOption('[data-view="map"] select[name="provider"]', 'empty');
    await page.waitForSelector('[data-vehicles="0"]');
    expect(await page.locator('path.vehicle').count()).toBe(0);
    expect(await page.locator('path.track').count()).toBe(0);
    await page.selectOption('[data-view="map"] select[name="provider"]', 'acme');
    await page.waitForSelector('[data-vehicles="2"]');
    expect(await page.locator('path.vehicle').count()).toBe(2);
  });

  it('asked nothing of anyone but the admin API and the tile server, and ran without errors', () => {
    const elsewhere = requestedUrls.filter((u) => !u.startsWith(t.app.admin.url) && !u.startsWith(`${tileOrigin}/`) && !u.startsWith('data:'));
    expect(elsewhere).toEqual([]);
    expect(requestedUrls.filter((u) => u.includes(t.app.adminToken))).toEqual([]);
    expect(pageErrors.join('\n')).toBe('');
  });
});
