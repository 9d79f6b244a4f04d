import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApp, credentials, event, xmlParams } from '../helpers/harness.js';
import { REPO } from '../helpers/paths.js';

/**
 * The operators' console in a real browser: Debian's Chromium driven by playwright-core (no
 * browser download) against the real gateway and admin API. One signed-in page walks through an
 * operator's steps in order; each view is photographed into test-results/console/.
 */
const CHROMIUM = '/usr/bin/chromium';
const SHOTS = path.join(REPO, 'test-results', 'console');
const LIVE_WITHIN_MS = 2_000;
const STEP_MS = 10_000;

let t: TestApp;
let context: BrowserContext | undefined;
let page: Page;
let userDataDir: string | undefined;
const requestedUrls: string[] = [];
const pageErrors: string[] = [];
const consoleErrors: string[] = [];

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

async function open(view: string): Promise<void> {
  await page.click(`nav a[href="#/${view}"]`);
  await page.waitForSelector(`[data-view="${view}"]`);
}

function soapResult(text: string, op: string): string {
  const m = new RegExp(`<${op}Result>([^<]*)</${op}Result>`).exec(text);
  if (m === null) throw new Error(`no ${op}Result in ${text}`);
  return m[1] ?? '';
}

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: the console's browser test needs Debian's Chromium (apt-get install -y chromium).`);
  }
  fs.mkdirSync(SHOTS, { recursive: true });
  t = await TestApp.start();
  userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    locale: 'en-US',
    viewport: { width: 1280, height: 820 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(STEP_MS);
  page.on('request', (r) => requestedUrls.push(r.url()));
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
}, 60_000);

afterAll(async () => {
  await context?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
  await t?.stop();
  if (userDataDir !== undefined) fs.rmSync(userDataDir, { recursive: true, force: true });
});

describe('operators console in Chromium', () => {
  it('refuses a wrong token, then signs in with the admin token (English from the browser language)', async () => {
    await page.goto(`${t.app.admin.url}/`);
    await page.waitForSelector('form[name="login"]');
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    await page.fill('input[name="token"]', 'not-the-token');
    await page.click('form[name="login"] button[type="submit"]');
    await page.waitForSelector('form[name="login"] .error:has-text("That token is not valid.")');
    await shot('login');

    await page.fill('input[name="token"]', t.app.adminToken);
    await page.click('form[name="login"] button[type="submit"]');
    await page.waitForSelector('[data-view="overview"]');
    expect(await page.textContent('nav')).toContain('Providers');
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(1);
  });

  it('creates a provider', async () => {
    await open('providers');
    const form = page.locator('form[name="create-provider"]');
    await form.locator('input[name="systemUser"]').fill('acme');
    await form.locator('input[name="password"]').fill('secret-1');
    await form.locator('button[type="submit"]').click();
    await page.waitForSelector('tr[data-provider="acme"]');
    await page.waitForSelector('.notice:has-text("Provider acme created.")');
    const stored = await t.admin('GET', '/admin/providers/acme');
    expect(stored).toMatchObject({ status: 200, json: { systemUser: 'acme', enabled: true } });
    await shot('providers');
  });

  it(`shows an event inserted over SOAP within ${LIVE_WITHIN_MS} ms, without a reload`, async () => {
    // On the trip before the event arrives, so the vehicles view has a last report to show.
    expect((await t.admin('PUT', '/admin/providers/acme/trip/vehicles/LIVE01', { nroSerie: 'SN-1' })).status).toBe(201);
    await open('events');
    await page.waitForSelector('[data-stream-state="open"]');
    // A marker on this document: still there later means the event arrived without a reload.
    await page.evaluate('window.notReloaded = true');
    const started = Date.now();
    const reply = await t.soap11('LoginYInsertarEvento', xmlParams({ ...credentials('acme', 'secret-1'), ...event({ Dominio: 'LIVE01' }) }));
    const id = soapResult(reply.text, 'LoginYInsertarEvento');
    expect(Number(id)).toBeGreaterThan(0);
    await page.waitForSelector(`tr[data-event-id="${id}"]:has-text("LIVE01")`, { timeout: LIVE_WITHIN_MS });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(LIVE_WITHIN_MS);
    expect(await page.evaluate<boolean>('window.notReloaded === true')).toBe(true);
    console.log(`event ${id} on screen ${elapsed} ms after the SOAP insert began`);
    await shot('events');
  });

  it('queues a command and cancels it', async () => {
    await open('commands');
    const form = page.locator('form[name="queue-command"]');
    await form.locator('select[name="provider"]').selectOption('acme');
    await form.locator('input[name="cmd"]').fill('CC');
    await form.locator('input[name="unidad"]').fill('LIVE01');
    await form.locator('input[name="equipo"]').fill('42');
    await form.locator('button[type="submit"]').click();
    const row = page.locator('tr[data-command="acme/1"]');
    await row.locator('[data-state="pending"]').waitFor();
    await shot('commands-queued');
    await row.locator('button:has-text("Cancel")').click();
    await row.locator('[data-state="cancelled"]').waitFor();
    await row.locator('details summary').click();
    await row.locator('ol.history li').nth(1).waitFor();
    const stored = await t.admin('GET', '/admin/providers/acme/commands');
    expect(stored.json).toMatchObject({ commands: [{ numero: 1, cmd: 'CC', unidad: 'LIVE01', equipo: '42', state: 'cancelled' }] });
    await shot('commands');
  });

  it('lists vehicles on trip with their last report and registers one', async () => {
    await open('vehicles');
    await page.locator('[data-view="vehicles"] select[name="provider"]').selectOption('acme');
    // The event inserted over SOAP earlier is LIVE01's last report.
    await page.waitForSelector('tr[data-vehicle="LIVE01"] td.last-report time');
    const form = page.locator('form[name="register-vehicle"]');
    await form.locator('input[name="dominio"]').fill('ZZ999ZZ');
    await form.locator('input[name="nroSerie"]').fill('SN-2');
    await form.locator('button[type="submit"]').click();
    await page.waitForSelector('tr[data-vehicle="ZZ999ZZ"]');
    const stored = await t.admin('GET', '/admin/providers/acme/trip/vehicles');
    expect((stored.json as { vehicles: { dominio: string }[] }).vehicles.map((v) => v.dominio).sort()).toEqual(['LIVE01', 'ZZ999ZZ']);
    await shot('vehicles');
  });

  it('unlocks a provider locked out by failed logins', async () => {
    const login = (password: string): Promise<string> =>
      t.soap11('Login', xmlParams(credentials('acme', password))).then((r) => soapResult(r.text, 'Login'));
    for (let i = 0; i < 10; i++) expect(await login('wrong-password')).toBe('false');
    expect(await login('secret-1')).toBe('false');

    await open('lockouts');
    const row = page.locator('tr[data-lockout="acme"]').first();
    await row.waitFor();
    await shot('lockouts');
    await row.locator('button:has-text("Unlock")').click();
    await page.waitForSelector('.notice:has-text("Lockout of acme lifted.")');
    await page.locator('tr[data-lockout="acme"]').first().waitFor({ state: 'detached' });
    expect(await login('secret-1')).toBe('true');
  });

  it('disables and enables a provider, resets its password and deletes it', async () => {
    expect((await t.admin('POST', '/admin/providers', { systemUser: 'beta', password: 'beta-pass-1' })).status).toBe(201);
    const login = (password: string): Promise<string> =>
      t.soap11('Login', xmlParams(credentials('beta', password))).then((r) => soapResult(r.text, 'Login'));
    await open('providers');
    await page.click('[data-view="providers"] .card-head button:has-text("Refresh")');
    const row = page.locator('tr[data-provider="beta"]');
    await row.locator('button:has-text("Disable")').click();
    await row.locator('button:has-text("Enable")').waitFor();
    expect(await t.admin('GET', '/admin/providers/beta')).toMatchObject({ json: { enabled: false } });
    expect(await login('beta-pass-1')).toBe('false');
    await row.locator('button:has-text("Enable")').click();
    await row.locator('button:has-text("Disable")').waitFor();

    await row.locator('button:has-text("Reset password")').click();
    const reset = page.locator('form[name="reset-password"]');
    await reset.locator('input[name="password"]').fill('beta-pass-2');
    await reset.locator('button[type="submit"]').click();
    await page.waitForSelector('.notice:has-text("Password of beta changed")');
    expect(await login('beta-pass-2')).toBe('true');

    await row.locator('button:has-text("Delete")').click();
    const remove = page.locator('form[name="delete-provider"]');
    const confirm = remove.locator('button[type="submit"]');
    await remove.locator('input[name="confirm"]').fill('bet');
    expect(await confirm.isDisabled()).toBe(true);
    await remove.locator('input[name="confirm"]').fill('beta');
    await shot('providers-delete');
    await confirm.click();
    await row.waitFor({ state: 'detached' });
    expect((await t.admin('GET', '/admin/providers/beta')).status).toBe(404);
    expect((await t.admin('GET', '/admin/providers/acme')).status).toBe(200);
  });

  it('shows the overview', async () => {
    await open('overview');
    await page.waitForSelector('[data-view="overview"] td:has-text("acme")');
    await page.waitForSelector('[data-view="overview"] .chart canvas');
    // Notices go away when clicked.
    for (let n = await page.locator('.notice').count(); n > 0; n--) await page.locator('.notice').first().click();
    await page.locator('.notice').first().waitFor({ state: 'detached' });
    await shot('overview');
  });

  it('switches to Spanish, remembers it across a reload and keeps the session', async () => {
    await page.click('.lang button[lang="es"]');
    await page.waitForSelector('nav a:has-text("Prestadores")');
    expect(await page.getAttribute('html', 'lang')).toBe('es');
    expect(await page.textContent('nav')).toContain('Resumen');
    expect(await page.textContent('[data-view="overview"]')).toContain('Eventos por segundo, últimos 15 minutos');
    await shot('overview-es');
    await page.reload();
    await page.waitForSelector('[data-view="overview"]');
    expect(await page.textContent('nav')).toContain('Vehículos en viaje');
    await open('providers');
    await page.waitForSelector('tr[data-provider="acme"] button:has-text("Deshabilitar")');
    await shot('providers-es');
  });

  it('signs out, sent the token only in headers and ran without errors', async () => {
    await page.click('header button:has-text("Cerrar sesión")');
    await page.waitForSelector('form[name="login"]');
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    expect(requestedUrls.length).toBeGreaterThan(10);
    expect(requestedUrls.filter((u) => u.includes(t.app.adminToken))).toEqual([]);
    expect(requestedUrls.every((u) => u.startsWith(t.app.admin.url))).toBe(true);
    expect(pageErrors.join('\n')).toBe('');
    // The wrong-token attempt at the start is the only failed request the browser reports.
    expect(consoleErrors.filter((e) => !/status of 401/.test(e)).join('\n')).toBe('');
  });
});
