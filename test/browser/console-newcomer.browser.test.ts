import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/paths.js';
import { credentials, event, TestApp } from '../helpers/harness.js';
import { freePort } from '../helpers/spawned.js';

/**
 * What got in a newcomer's way in the console, each checked in Debian's Chromium at 1400 px and
 * at a phone's width (390 px): the sign-in help names a command that runs as written; a viewer
 * gets no empty Actions column; the Audit table fits 1400 px whole; dates are written as the
 * browser's own date fields write them (en-US: month first); a map whose tile server cannot be
 * reached says so on the map; the Refusals view gives each refusal's reason. Pictures go to
 * test-results/console/newcomer/.
 */
const CHROMIUM = '/usr/bin/chromium';
const SHOTS = path.join(REPO, 'test-results', 'console', 'newcomer');
const STEP_MS = 10_000;
const WIDTHS = [
  { name: 'desktop', width: 1400, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;
const run = promisify(execFile);

let t: TestApp;
let browser: Browser | undefined;
let unreachableTiles = '';
const tokens: Record<string, string> = {};
const pageErrors: string[] = [];

async function signIn(token: string, width: number, height: number): Promise<Page> {
  if (browser === undefined) throw new Error('no browser');
  const context = await browser.newContext({ locale: 'en-US', timezoneId: 'UTC', viewport: { width, height } });
  const page = await context.newPage();
  page.setDefaultTimeout(STEP_MS);
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${t.app.admin.url}/`);
  await page.fill('input[name="token"]', token);
  await page.click('form[name="login"] button[type="submit"]');
  await page.waitForSelector('[data-view="overview"]');
  return page;
}

async function open(page: Page, view: string): Promise<void> {
  await page.goto(`${t.app.admin.url}/#/${view}`);
  await page.waitForSelector(`[data-view="${view}"]`);
}

/** Nothing sticks out of the page sideways (a wide table scrolls inside its own box). */
async function noPageOverflow(page: Page): Promise<void> {
  // What sticks out is named in the failure message (a wide table scrolls inside .table-wrap: not counted).
  const { scroll, inner, wide } = await page.evaluate<{ scroll: number; inner: number; wide: string[] }>(`({
    scroll: document.documentElement.scrollWidth,
    inner: window.innerWidth,
    wide: [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1 && el.closest('.table-wrap, .leaflet-container') === null)
      .slice(0, 5)
      .map((el) => el.tagName.toLowerCase() + '.' + el.className + ' ' + Math.round(el.getBoundingClientRect().width) + 'px'),
  })`);
  expect(scroll, wide.join('; ')).toBeLessThanOrEqual(inner);
}

const shot = (page: Page, name: string): Promise<Buffer> => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: the console's browser tests need Debian's Chromium (apt-get install -y chromium).`);
  fs.mkdirSync(SHOTS, { recursive: true });
  // A tile server nobody answers on: what the console sees offline or behind a firewall.
  unreachableTiles = `127.0.0.1:${await freePort()}`;
  t = await TestApp.start({ CONSOLE_MAP_TILE_URL: `http://${unreachableTiles}/{z}/{x}/{y}.png` });
  await t.provider('acme', 'secret-1');
  for (const [name, role] of [['vera', 'viewer'], ['ana', 'admin']] as const) {
    const created = await t.admin('POST', '/admin/tokens', { name, role });
    tokens[role] = (created.json as { token: string }).token;
  }
  // Audit entries with long cells: a provider name at its longest, a change of every field.
  const long = `fleet-${'x'.repeat(58)}`;
  await t.admin('POST', '/admin/providers', { systemUser: long, password: 'secret-1', timeZone: 'America/Argentina/Buenos_Aires', requireRegisteredVehicles: true });
  await t.admin('PATCH', `/admin/providers/${long}`, { password: 'secret-22', enabled: false, timeZone: 'America/Argentina/Cordoba', requireRegisteredVehicles: false });
  await t.admin('PUT', '/admin/providers/acme/trip/vehicles/AB123CD', { nroSerie: 'SN-1' });
  await t.post('LoginYInsertarEvento', { ...credentials(), ...event() });
  await t.post('LoginYInsertarEvento', { ...credentials(), ...event({ FechaHoraEvento: 'yesterday' }) });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await t?.stop();
});

describe('the sign-in help', () => {
  it('shows the command in code, no backticks, and the command runs as written', async () => {
    if (browser === undefined) throw new Error('no browser');
    for (const size of WIDTHS) {
      const page = await browser.newPage({ locale: 'en-US', viewport: { width: size.width, height: size.height } });
      await page.goto(`${t.app.admin.url}/`);
      const hint = page.locator('.login-hint');
      expect(await hint.textContent()).not.toContain('`');
      const codes = await hint.locator('code').allTextContents();
      expect(codes).toEqual(['npx gateway-admin token create NAME --role viewer', 'data/admin-token']);
      await noPageOverflow(page);
      await shot(page, `sign-in-${size.name}`);
      await page.close();
    }
    const command = 'npx gateway-admin token create NAME --role viewer'.replace('NAME', 'from-the-hint');
    const { stdout } = await run('bash', ['-c', command], { cwd: REPO, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ADMIN_URL: t.app.admin.url, ADMIN_TOKEN: t.app.adminToken } });
    expect(stdout).toMatch(/^gwo_[A-Za-z0-9_-]{43}\n$/);
  });
});

describe.each(WIDTHS)('at $width px', (size) => {
  it('a viewer gets no Actions column in any table', async () => {
    const page = await signIn(tokens.viewer!, size.width, size.height);
    for (const [view, row] of [['providers', 'tr[data-provider="acme"]'], ['vehicles', null], ['commands', null], ['lockouts', null]] as const) {
      await open(page, view);
      if (view === 'vehicles') {
        await page.locator('[data-view="vehicles"] select[name="provider"]').selectOption('acme');
        await page.waitForSelector('tr[data-vehicle="AB123CD"]');
      }
      if (row !== null) await page.waitForSelector(row);
      expect(await page.locator(`[data-view="${view}"] th`, { hasText: 'Actions' }).count(), view).toBe(0);
    }
    await open(page, 'providers');
    await noPageOverflow(page);
    await shot(page, `viewer-providers-${size.name}`);
    await page.context().close();
  });

  it('dates read month first in an en-US browser, as its Since field does', async () => {
    const page = await signIn(tokens.admin!, size.width, size.height);
    await open(page, 'providers');
    const created = await page.locator('tr[data-provider="acme"] time').first().textContent();
    // T0 of the test clock: 2026-11-22 12:00 UTC.
    expect(created).toBe('11/22/26, 12:00:00');
    await open(page, 'audit');
    expect(await page.getAttribute('[data-view="audit"] input[name="since"]', 'type')).toBe('datetime-local');
    await page.context().close();
  });

  it('the Audit table shows its last column without scrolling at 1400 px; on a phone only the table scrolls', async () => {
    const page = await signIn(tokens.admin!, size.width, size.height);
    await open(page, 'audit');
    await page.waitForSelector('tr[data-route="PATCH /admin/providers/:systemUser"]');
    const box = await page.evaluate<{ scroll: number; client: number }>(`(() => {
      const wrap = document.querySelector('[data-view="audit"] .table-wrap');
      return { scroll: wrap.scrollWidth, client: wrap.clientWidth };
    })()`);
    if (size.width >= 1400) expect(box.scroll).toBeLessThanOrEqual(box.client);
    const lastHeader = page.locator('[data-view="audit"] th').last();
    expect(await lastHeader.textContent()).toBe('Fields sent');
    if (size.width >= 1400) expect(await lastHeader.isVisible()).toBe(true);
    await noPageOverflow(page);
    await shot(page, `audit-${size.name}`);
    await page.context().close();
  });

  it('a map whose tiles cannot be loaded says so on the map', async () => {
    const page = await signIn(tokens.viewer!, size.width, size.height);
    await open(page, 'map');
    const note = page.locator('.map-frame [data-tiles="failing"]');
    await note.waitFor();
    expect(await note.textContent()).toContain(`The map tiles could not be loaded from ${unreachableTiles}`);
    expect(await note.isVisible()).toBe(true);
    await noPageOverflow(page);
    await shot(page, `map-without-tiles-${size.name}`);
    await page.context().close();
  });

  it('the Refusals view gives the reason of a refused event', async () => {
    const page = await signIn(tokens.viewer!, size.width, size.height);
    await open(page, 'refusals');
    const row = page.locator('tr[data-refusal="acme"][data-answer="-3"]');
    await row.waitFor();
    expect(await row.textContent()).toContain('FechaHoraEvento "yesterday" is not a dateTime');
    await noPageOverflow(page);
    await shot(page, `refusals-${size.name}`);
    await page.context().close();
  });
});

describe('the console', () => {
  it('threw nothing in any page', () => {
    expect(pageErrors).toEqual([]);
  });
});
