import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/paths.js';
import { TestApp, credentials, xmlParams } from '../helpers/harness.js';

/**
 * The console as each role sees it, in Debian's Chromium against the real gateway: a viewer is
 * offered no action (and the API refuses one sent by hand), an operator runs commands and reads a
 * provider's history, an admin sees the audit trail with the operator's command in it. Each role's
 * view is photographed into test-results/console/roles/ (viewer.png, operator.png, admin.png).
 */
const CHROMIUM = '/usr/bin/chromium';
const SHOTS = path.join(REPO, 'test-results', 'console', 'roles');
const STEP_MS = 10_000;

let t: TestApp;
let browser: Browser | undefined;
const tokens: Record<string, string> = {};
const pageErrors: string[] = [];

async function signIn(token: string): Promise<Page> {
  if (browser === undefined) throw new Error('no browser');
  // A context per role: its own sessionStorage, as a separate person's browser.
  const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 820 } });
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
  await page.click(`nav a[href="#/${view}"]`);
  await page.waitForSelector(`[data-view="${view}"]`);
}

const shot = (page: Page, name: string): Promise<Buffer> => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: the console's browser tests need Debian's Chromium (apt-get install -y chromium).`);
  fs.mkdirSync(SHOTS, { recursive: true });
  t = await TestApp.start();
  await t.provider('acme', 'secret-1');
  for (const [name, role] of [['vera', 'viewer'], ['olga', 'operator'], ['ana', 'admin']] as const) {
    const created = await t.admin('POST', '/admin/tokens', { name, role });
    expect(created.status).toBe(201);
    tokens[role] = (created.json as { token: string }).token;
  }
  expect((await t.admin('PUT', '/admin/providers/acme/trip/vehicles/AB123CD', { nroSerie: 'SN-1' })).status).toBe(201);
  expect((await t.admin('POST', '/admin/providers/acme/commands', { cmd: 'CC', unidad: 'AB123CD', equipo: '1' })).status).toBe(201);
  // A lockout for the lockouts view to show.
  for (let i = 0; i < 10; i++) await t.soap11('Login', xmlParams(credentials('acme', 'wrong-password')));
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

describe('the console per role, in Chromium', () => {
  it('a viewer sees every view but no action, no Audit, and the API refuses an action sent by hand', async () => {
    const page = await signIn(tokens.viewer!);
    expect(await page.getAttribute('.whoami', 'data-identity')).toBe('vera');
    expect(await page.getAttribute('.whoami', 'data-role')).toBe('viewer');
    expect(await page.textContent('nav')).not.toContain('Audit');

    await open(page, 'providers');
    await page.waitForSelector('tr[data-provider="acme"]');
    expect(await page.locator('form[name="create-provider"]').count()).toBe(0);
    expect(await page.locator('tr[data-provider="acme"] button').count()).toBe(0);
    await shot(page, 'viewer');

    await open(page, 'commands');
    await page.waitForSelector('tr[data-command="acme/1"] [data-state="pending"]');
    expect(await page.locator('form[name="queue-command"]').count()).toBe(0);
    expect(await page.locator('tr[data-command="acme/1"] button').count()).toBe(0);
    await open(page, 'vehicles');
    await page.locator('[data-view="vehicles"] select[name="provider"]').selectOption('acme');
    await page.waitForSelector('tr[data-vehicle="AB123CD"]');
    expect(await page.locator('form[name="register-vehicle"]').count()).toBe(0);
    expect(await page.locator('tr[data-vehicle="AB123CD"] button').count()).toBe(0);
    await open(page, 'lockouts');
    await page.waitForSelector('tr[data-lockout="acme"]');
    expect(await page.locator('tr[data-lockout="acme"] button').count()).toBe(0);
    await shot(page, 'viewer-lockouts');
    // The Audit view is not there even by its address.
    await page.goto(`${t.app.admin.url}/#/audit`);
    await page.waitForSelector('[data-view="overview"]');
    expect(await page.locator('[data-view="audit"]').count()).toBe(0);

    // The server decides, not the console: the same request a button would send is refused.
    const status = await page.evaluate<{ status: number; body: { requiredRole?: string } }>(`(async () => {
      const token = sessionStorage.getItem('gateway-console.token');
      const res = await fetch('/admin/providers/acme', { method: 'PATCH', headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' }, body: '{"enabled":false}' });
      return { status: res.status, body: await res.json() };
    })()`);
    expect(status).toMatchObject({ status: 403, body: { requiredRole: 'admin' } });
    expect(await t.admin('GET', '/admin/providers/acme')).toMatchObject({ json: { enabled: true } });
    await page.context().close();
  });

  it("an operator queues and cancels commands and reads a provider's history, but changes no provider", async () => {
    const page = await signIn(tokens.operator!);
    expect(await page.textContent('.whoami')).toContain('olga');
    await open(page, 'commands');
    const form = page.locator('form[name="queue-command"]');
    await form.locator('select[name="provider"]').selectOption('acme');
    await form.locator('input[name="cmd"]').fill('CD');
    await form.locator('input[name="unidad"]').fill('AB123CD');
    await form.locator('input[name="equipo"]').fill('42');
    await form.locator('button[type="submit"]').click();
    await page.locator('tr[data-command="acme/2"] [data-state="pending"]').waitFor();
    await page.locator('tr[data-command="acme/1"] button:has-text("Cancel")').click();
    await page.locator('tr[data-command="acme/1"] [data-state="cancelled"]').waitFor();
    await shot(page, 'operator');

    await open(page, 'providers');
    const row = page.locator('tr[data-provider="acme"]');
    await row.waitFor();
    expect(await page.locator('form[name="create-provider"]').count()).toBe(0);
    for (const label of ['Disable', 'Reset password', 'Delete']) expect(await row.locator(`button:has-text("${label}")`).count(), label).toBe(0);
    expect(await row.locator('button:has-text("Unlock")').count()).toBe(1);
    await row.locator('button:has-text("History")').click();
    const history = page.locator('[data-history="acme"] ol.history li');
    await history.first().waitFor();
    expect(await history.allTextContents()).toEqual([
      expect.stringMatching(/^command 1 cancelled by olga, /),
      expect.stringMatching(/^command 2 queued by olga, /),
      // The viewer's attempt is in the provider's history too.
      expect.stringMatching(/^refused \(403\): PATCH \/admin\/providers\/:systemUser by vera, /),
      expect.stringMatching(/^command 1 queued by bootstrap, /),
      expect.stringMatching(/^vehicle AB123CD registered on the trip by bootstrap, /),
    ]);
    await shot(page, 'operator-history');
    expect(await page.textContent('nav')).not.toContain('Audit');
    await page.context().close();
  });

  it("an admin finds the operator's command in the Audit view, filters it, and sees a password change in the provider's history", async () => {
    const page = await signIn(tokens.admin!);
    expect(await page.getAttribute('.whoami', 'data-role')).toBe('admin');
    await open(page, 'providers');
    const row = page.locator('tr[data-provider="acme"]');
    await row.locator('button:has-text("Reset password")').click();
    await page.locator('form[name="reset-password"] input[name="password"]').fill('secret-2');
    await page.locator('form[name="reset-password"] button[type="submit"]').click();
    await page.waitForSelector('.notice:has-text("Password of acme changed")');
    await row.locator('button:has-text("History")').click();
    await page.locator('[data-history="acme"] ol.history li').first().waitFor();
    expect(await page.locator('[data-history="acme"] ol.history li').first().textContent()).toMatch(/^password changed by ana, /);
    await shot(page, 'admin-providers');

    await open(page, 'audit');
    const queued = page.locator('[data-view="audit"] tr[data-route="POST /admin/providers/:systemUser/commands"]:has-text("olga")');
    await queued.waitFor();
    expect(await queued.textContent()).toContain('command 2 queued');
    // The viewer's hand-sent PATCH is there as refused.
    await page.locator('[data-view="audit"] tr[data-outcome="refused"]:has-text("vera")').waitFor();
    await shot(page, 'admin');

    await page.fill('form[name="audit-filters"] input[name="identity"]', 'olga');
    await page.click('form[name="audit-filters"] button[type="submit"]');
    // Polled from here: the page's Content-Security-Policy forbids the eval a page-side poll needs.
    const rows = page.locator('[data-view="audit"] tbody tr');
    await expect.poll(async () => (await rows.allTextContents()).map((text) => text.includes('olga')), { timeout: STEP_MS }).toEqual([true, true]);
    await shot(page, 'admin-audit-filtered');
    await page.context().close();
    expect(pageErrors.join('\n')).toBe('');
  });
});
