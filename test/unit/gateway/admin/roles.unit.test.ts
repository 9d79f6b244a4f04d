/**
 * The admin route table (gateway/admin/roles.ts), derived from the roles the routes declare beside
 * their handlers: every declared method in it once, routes the server could not serve as declared
 * refused, the probes alone public, and the roles' reach nested (a viewer's routes are an
 * operator's, an operator's an admin's).
 */
import { describe, expect, it } from 'vitest';
import type { Route } from '../../../../gateway/admin/route.js';
import { allowedKeys, checkRoutes, isMutating, isPublic, routeTable } from '../../../../gateway/admin/roles.js';
import { declaredAdminRoutes } from '../../../helpers/admin-routes.js';

const run = (): Promise<{ status: 204 }> => Promise.resolve({ status: 204 });

describe('the route table', () => {
  it('holds each declared method of each route once, as `METHOD /pattern`, with the role declared beside it', () => {
    const routes = declaredAdminRoutes();
    expect(() => checkRoutes(routes)).not.toThrow();
    const declared = routes.flatMap((r) => Object.entries(r.handlers).map(([method, m]) => [`${method} /${r.pattern.join('/')}`, m.role]));
    expect([...routeTable(routes)]).toEqual(declared);
    expect(routeTable(routes).get('PATCH /admin/providers/:systemUser')).toBe('admin');
    // A route added with its role is in the table at once: nothing else to edit.
    const extra: Route = { pattern: ['admin', 'brand-new'], handlers: { POST: { role: 'operator', run } } };
    expect(routeTable([...routes, extra]).get('POST /admin/brand-new')).toBe('operator');
  });

  it('refuses a method declared twice, and a route public for some methods only', () => {
    const routes = declaredAdminRoutes();
    const again: Route = { pattern: ['admin', 'tokens'], handlers: { GET: { role: 'viewer', run } } };
    expect(() => checkRoutes([...routes, again])).toThrow(/GET \/admin\/tokens is declared twice/);
    const leaky: Route = { pattern: ['admin', 'half-open'], handlers: { GET: { role: 'public', run }, POST: { role: 'admin', run } } };
    expect(() => checkRoutes([...routes, leaky])).toThrow(/\/admin\/half-open is public for some methods only/);
    expect(isPublic(leaky)).toBe(false);
  });

  it('keeps the probes alone public and every mutating route above viewer', () => {
    const routes = declaredAdminRoutes();
    expect(routes.filter(isPublic).map((r) => r.pattern.join('/'))).toEqual(['healthz', 'readyz']);
    const table = [...routeTable(routes)];
    expect(table.filter(([, role]) => role === 'public').map(([k]) => k)).toEqual(['GET /healthz', 'GET /readyz']);
    for (const [key, role] of table) if (isMutating(key.split(' ')[0]!)) expect(['operator', 'admin'], key).toContain(role);
  });

  it('gives each role what the one below has and more: tokens, audit, provider changes only to admins', () => {
    const all = declaredAdminRoutes();
    const viewer = allowedKeys('viewer', all);
    const operator = allowedKeys('operator', all);
    const admin = allowedKeys('admin', all);
    expect(viewer.every((k) => operator.includes(k))).toBe(true);
    expect(operator.every((k) => admin.includes(k))).toBe(true);
    expect(admin).toEqual([...routeTable(all).keys()]);
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
