import { roleAllows, type Role } from '../../shared/backends/operators.js';
import type { Access, Method, Route } from './route.js';

/**
 * Who may call what on the admin API (docs/admin-api.md §Identities and roles), enforced by the
 * server before any handler runs. Each route declares the role of each of its methods beside the
 * handler (routes/*.ts); the table is derived from those declarations, never kept apart. A route
 * is `METHOD /pattern` (HEAD is GET). `viewer` reads (never a password hash or a token),
 * `operator` also runs the fleet (commands, trips, lockouts, poison redrive), `admin` also changes
 * providers, passwords, imports, deletes and tokens. `public` needs no token (the probes).
 *
 * test/unit/docs/role-table.unit.test.ts holds docs/admin-api.md's table to the derived one, and
 * test/embedded/admin-roles.embedded.test.ts calls every route as every role.
 */

/** `PATCH /admin/providers/:systemUser` */
export function routeKey(method: Method, pattern: readonly string[]): string {
  return `${method} /${pattern.join('/')}`;
}

/** Each route's methods as `[METHOD /pattern, role]`, in the routes' order. */
function entries(routes: readonly Route[]): [string, Access][] {
  return routes.flatMap((r) => (Object.entries(r.handlers) as [Method, { role: Access }][]).map(([method, { role }]): [string, Access] => [routeKey(method, r.pattern), role]));
}

/** The route table: `METHOD /pattern` → the role it needs, derived from the routes' declarations. */
export function routeTable(routes: readonly Route[]): ReadonlyMap<string, Access> {
  return new Map(entries(routes));
}

/** A route anyone may reach without a token: every method of it is public. */
export function isPublic(route: Route): boolean {
  const methods = Object.values(route.handlers);
  return methods.length > 0 && methods.every((m) => m.role === 'public');
}

/** True for a method that changes something: every call of one is audited. */
export function isMutating(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD';
}

/**
 * Throws on routes the server could not serve as declared: one `METHOD /pattern` twice (the second
 * would never be reached), or a pattern public for some methods only (whether a token is needed is
 * decided before the method is known).
 */
export function checkRoutes(routes: readonly Route[]): void {
  const keys = entries(routes).map(([key]) => key);
  const twice = keys.filter((key, i) => keys.indexOf(key) !== i);
  const mixed = routes.filter((r) => !isPublic(r) && Object.values(r.handlers).some((m) => m.role === 'public')).map((r) => `/${r.pattern.join('/')}`);
  const problems = [...twice.map((k) => `${k} is declared twice`), ...mixed.map((p) => `${p} is public for some methods only`)];
  if (problems.length > 0) throw new Error(`The admin routes cannot be served as declared (gateway/admin/routes/): ${problems.join('; ')}.`);
}

/** Whether `role` may call a method needing `need`. */
export function allows(role: Role, need: Access): boolean {
  return need === 'public' || roleAllows(role, need);
}

/** The route keys a role may call (the console shows only those actions). */
export function allowedKeys(role: Role, routes: readonly Route[]): string[] {
  return entries(routes).flatMap(([key, need]) => (allows(role, need) ? [key] : []));
}
