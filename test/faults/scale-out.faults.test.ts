/**
 * Faults of the scale-out mode at the protocol level: Kafka or Redis stops while gateways
 * serve. Runs alone (the "faults" project): it stops the shared servers.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../helpers/scale-out.js';
import { credentials, event, xmlParams } from '../helpers/harness.js';
import { errorLine, faultstring } from '../helpers/client-errors.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const service = (action: 'up' | 'down', name: string) =>
  execFileSync('bash', [path.join(ROOT, `scripts/services/${action}.sh`), name], { cwd: ROOT, stdio: 'pipe' });
/** undici's error for a request sent on a connection the server had closed. */
const closedIdleConnection = (err: unknown): boolean =>
  err instanceof Error && err.cause instanceof Error && /other side closed|ECONNRESET/.test(err.cause.message);
const idOf = (text: string): number => Number(/Result>(-?\d+)</.exec(text)?.[1] ?? NaN);

describe('scale-out faults', () => {
  let c: Cluster;
  beforeAll(async () => {
    c = await startCluster({ APPEND_TIMEOUT_MS: '3000' });
    await c.gw1.provider('acme', 'secret-1');
  }, 120_000);
  afterAll(async () => {
    service('up', 'kafka');
    service('up', 'redis');
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when beforeAll failed before assigning it
    await c?.stop();
  }, 120_000);

  /**
   * The synchronous service script blocks this process for seconds, past uWS's idle timeout: the
   * gateway then rightly closes fetch's pooled keep-alive connection, and the next POST on it fails
   * with "other side closed". A client reconnects and resends (the resend dedupe makes that safe);
   * so does this helper, once, for that error only.
   */
  const insert = async (codigo: string) => {
    const body = xmlParams({ ...credentials(), ...event({ Codigo: codigo }) });
    for (let attempt = 0; ; attempt++) {
      const started = Date.now();
      try {
        const r = await c.gw1.soap11('LoginYInsertarEvento', body);
        return { code: idOf(r.text), ms: Date.now() - started };
      } catch (err) {
        if (attempt > 0 || !closedIdleConnection(err)) throw err;
      }
    }
  };

  it('Kafka down: -5 within the timeout, every acknowledged event is stored, service recovers', { timeout: 120_000 }, async () => {
    const acked: number[] = [];
    const before = await insert('k-before');
    expect(before.code).toBeGreaterThan(0);
    acked.push(before.code);

    service('down', 'kafka');
    try {
      for (let i = 0; i < 5; i++) {
        const r = await insert(`k-down-${i}`);
        if (r.code > 0) acked.push(r.code); // answered from an in-flight send just before the stop
        else {
          expect(r.code).toBe(-5);
          expect(r.ms).toBeLessThan(3000 + 1500);
        }
      }
      const last = await insert('k-down-last');
      expect(last.code).toBe(-5);
      // Other operations keep working: state is in Redis.
      expect((await c.gw1.soap11('Login', xmlParams(credentials()))).text).toContain('>true<');
    } finally {
      service('up', 'kafka');
    }

    let recovered = -5;
    for (let i = 0; i < 60 && recovered <= 0; i++) {
      recovered = (await insert(`k-after-${i}`)).code;
      if (recovered <= 0) await new Promise((r) => setTimeout(r, 500));
    }
    expect(recovered).toBeGreaterThan(0);
    acked.push(recovered);
    const rows = await c.waitForRows(acked, 60_000);
    for (const id of acked) expect(rows.has(id), `acknowledged id ${id} stored`).toBe(true);
  });

  it('Redis down: clear answers (-5, Server fault saying so), recovery when it is back', { timeout: 120_000 }, async () => {
    service('down', 'redis');
    try {
      const started = Date.now();
      expect((await insert('r-down')).code).toBe(-5);
      const login = await c.gw2.soap11('Login', xmlParams(credentials()));
      expect(login.status).toBe(500);
      expect(login.text).toContain(`<faultcode>soap:Server</faultcode>${faultstring('unavailable')}`);
      const form = await c.gw2.post('LoginYObtenerComando', credentials());
      expect(form.status).toBe(500);
      expect(form.text).toBe(errorLine('unavailable'));
      expect(Date.now() - started).toBeLessThan(15_000);
      const ready = await fetch(`${c.gw1.app.admin.url}/readyz`);
      expect(ready.status).toBe(503);
    } finally {
      service('up', 'redis');
    }
    // The test Redis keeps no data across a restart (production runs it with AOF): the operator
    // recreates the provider, and the gateways recover without a restart.
    let created = false;
    for (let i = 0; i < 40 && !created; i++) {
      try {
        await c.gw1.provider('acme', 'secret-1');
        created = true;
      } catch {
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    expect(created).toBe(true);
    expect((await c.gw2.soap11('Login', xmlParams(credentials()))).text).toContain('>true<');
    // Ids do not depend on Redis (Kafka id blocks); inserts work again once the dedupe claim does.
    let after = await insert('r-after');
    for (let i = 0; i < 60 && after.code === -5; i++) {
      await new Promise((r) => setTimeout(r, 250));
      after = await insert('r-after');
    }
    expect(after.code).toBeGreaterThan(0);
    // Readiness converges: each check (Redis PING, the id blocks, the Kafka probe, the threads) is
    // re-evaluated per request, and some recover on their own schedule after the outage.
    let ready = await fetch(`${c.gw1.app.admin.url}/readyz`);
    for (let i = 0; i < 60 && ready.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 250));
      ready = await fetch(`${c.gw1.app.admin.url}/readyz`);
    }
    expect(ready.status, await ready.text()).toBe(200);
  });
});
