/**
 * The admin route table (gateway/admin/roles.ts) against the routes as declared: no route without
 * a role, no role for a route that does not exist, the probes alone public, and the roles' reach
 * nested (a viewer's routes are an operator's, an operator's an admin's).
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Backends } from '../../../../shared/backends/types.js';
import { loadConfig } from '../../../../shared/config/index.js';
import { adminRoutes, type Route } from '../../../../gateway/admin/routes.js';
import { allowedKeys, checkRouteTable, declaredKeys, isMutating, ROUTE_ROLES } from '../../../../gateway/admin/roles.js';
import type { StreamHub } from '../../../../gateway/admin/stream-hub.js';

/** The routes as the server declares them; building them touches no store. */
function routes(): Route[] {
  return adminRoutes({
    config: loadConfig({}),
    backends: { operators: {} } as unknown as Backends,
    logger: pino({ level: 'silent' }),
    clock: () => 0,
    streams: Object.create(null) as StreamHub,
    mode: 'embedded',
    allowedFor: () => [],
  });
}

describe('ROUTE_ROLES', () => {
  it('names every declared route and method, and nothing else', () => {
    expect(() => checkRouteTable(routes())).not.toThrow();
    expect(declaredKeys(routes()).sort()).toEqual(Object.keys(ROUTE_ROLES).sort());
  });

  it('refuses a route it does not know, one it names that is gone, and a public mismatch', () => {
    const extra: Route = { pattern: ['admin', 'brand-new'], handlers: { POST: () => Promise.resolve({ status: 204 }) } };
    expect(() => checkRouteTable([...routes(), extra])).toThrow(/POST \/admin\/brand-new has no role/);
    expect(() => checkRouteTable(routes().filter((r) => r.pattern.join('/') !== 'admin/tokens'))).toThrow(/names GET \/admin\/tokens, which no route declares/);
    const leaky = routes().map((r) => (r.pattern.join('/') === 'admin/overview' ? { ...r, public: true } : r));
    expect(() => checkRouteTable(leaky)).toThrow(/GET \/admin\/overview is public in one place/);
  });

  it('keeps the probes alone public and every mutating route above viewer', () => {
    const entries = Object.entries(ROUTE_ROLES);
    expect(entries.filter(([, role]) => role === 'public').map(([k]) => k)).toEqual(['GET /healthz', 'GET /readyz']);
    for (const [key, role] of entries) if (isMutating(key.split(' ')[0]!)) expect(['operator', 'admin'], key).toContain(role);
  });

  it('gives each role what the one below has and more: tokens, audit, provider changes only to admins', () => {
    const all = routes();
    const viewer = allowedKeys('viewer', all);
    const operator = allowedKeys('operator', all);
    const admin = allowedKeys('admin', all);
    expect(viewer.every((k) => operator.includes(k))).toBe(true);
    expect(operator.every((k) => admin.includes(k))).toBe(true);
    expect(admin.sort()).toEqual(Object.keys(ROUTE_ROLES).sort());
    expect(viewer.filter((k) => isMutating(k.split(' ')[0]!))).toEqual([]);
    expect(operator.filter((k) => isMutating(k.split(' ')[0]!)).sort()).toEqual([
      'DELETE /admin/providers/:systemUser/lockouts',
      'DELETE /admin/providers/:systemUser/trip/vehicles/:dominio',
      'POST /admin/poison/:id/redrive',
      'POST /admin/providers/:systemUser/commands',
      'POST /admin/providers/:systemUser/commands/:numero/cancel',
      'PUT /admin/providers/:systemUser/trip/vehicles/:dominio',
    ]);
    for (const key of ['GET /admin/tokens', 'GET /admin/audit', 'PATCH /admin/providers/:systemUser', 'POST /admin/import/providers']) {
      expect(operator, key).not.toContain(key);
    }
  });
});
