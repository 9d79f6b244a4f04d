import type { Role } from '../../shared/backends/operators.js';
import type { Method, Route } from './routes.js';

/**
 * THE table of who may call what on the admin API (docs/admin-api.md §Identities and roles), enforced by the
 * server before any handler runs: a route is `METHOD /pattern` as its routes/*.ts file declares it
 * (HEAD is GET). `viewer` reads (never a password hash or a token), `operator` also runs the fleet
 * (commands, trips, lockouts, poison redrive), `admin` also changes providers, passwords, imports,
 * deletes and tokens. `public` needs no token (the probes).
 *
 * The server refuses to start when a declared route is missing here or an entry names no route
 * (checkRouteTable), and test/embedded/admin-roles.embedded.test.ts calls every entry as every role.
 */
export const ROUTE_ROLES = {
  'GET /healthz': 'public',
  'GET /readyz': 'public',
  'GET /metrics': 'viewer',
  'GET /admin/overview': 'viewer',
  'GET /admin/refusals': 'viewer',
  'GET /admin/whoami': 'viewer',

  'GET /admin/providers': 'viewer',
  'POST /admin/providers': 'admin',
  'GET /admin/providers/:systemUser': 'viewer',
  'PATCH /admin/providers/:systemUser': 'admin',
  'DELETE /admin/providers/:systemUser': 'admin',
  'GET /admin/lockouts': 'viewer',
  'DELETE /admin/providers/:systemUser/lockouts': 'operator',

  'GET /admin/commands': 'viewer',
  'GET /admin/providers/:systemUser/commands': 'viewer',
  'POST /admin/providers/:systemUser/commands': 'operator',
  'POST /admin/providers/:systemUser/commands/:numero/cancel': 'operator',

  'GET /admin/providers/:systemUser/trip/vehicles': 'viewer',
  'PUT /admin/providers/:systemUser/trip/vehicles/:dominio': 'operator',
  'DELETE /admin/providers/:systemUser/trip/vehicles/:dominio': 'operator',

  'GET /admin/events': 'viewer',
  'GET /admin/events/stream': 'viewer',
  'GET /admin/providers/:systemUser/positions': 'viewer',
  'GET /admin/providers/:systemUser/track/:dominio': 'viewer',

  'GET /admin/poison': 'viewer',
  'POST /admin/poison/:id/redrive': 'operator',
  'DELETE /admin/poison/:id': 'admin',

  'POST /admin/import/providers': 'admin',
  'POST /admin/import/trips': 'admin',

  'GET /admin/tokens': 'admin',
  'POST /admin/tokens': 'admin',
  'DELETE /admin/tokens/:name': 'admin',
  'GET /admin/audit': 'admin',
  'GET /admin/providers/:systemUser/audit': 'operator',
} as const satisfies Record<string, Role | 'public'>;

export type RouteKey = keyof typeof ROUTE_ROLES;
type Access = Role | 'public';

/** `PATCH /admin/providers/:systemUser` */
export function routeKey(method: Method, pattern: readonly string[]): string {
  return `${method} /${pattern.join('/')}`;
}

/** The role a route needs, or undefined for one the table does not know (never served). */
export function accessOf(key: string): Access | undefined {
  return (ROUTE_ROLES as Record<string, Access>)[key];
}

/** True for a method that changes something: every call of one is audited. */
export function isMutating(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD';
}

/** Every `METHOD /pattern` the routes declare. */
export function declaredKeys(routes: readonly Route[]): string[] {
  return routes.flatMap((r) => (Object.keys(r.handlers) as Method[]).map((m) => routeKey(m, r.pattern)));
}

/**
 * Throws unless the table and the routes name exactly the same `METHOD /pattern`s, and a route
 * marked public is public in the table: a new route without a declared role never serves.
 */
export function checkRouteTable(routes: readonly Route[]): void {
  const declared = declaredKeys(routes);
  const missing = declared.filter((k) => accessOf(k) === undefined);
  const unknown = Object.keys(ROUTE_ROLES).filter((k) => !declared.includes(k));
  const publicMismatch = routes.flatMap((r) =>
    (Object.keys(r.handlers) as Method[]).map((m) => routeKey(m, r.pattern)).filter((k) => (r.public === true) !== (accessOf(k) === 'public')),
  );
  const problems = [
    ...missing.map((k) => `${k} has no role in ROUTE_ROLES`),
    ...unknown.map((k) => `ROUTE_ROLES names ${k}, which no route declares`),
    ...publicMismatch.map((k) => `${k} is public in one place and not in the other`),
  ];
  if (problems.length > 0) throw new Error(`The admin route table does not match the routes (gateway/admin/roles.ts): ${problems.join('; ')}.`);
}

/** The route keys a role may call (the console shows only those actions). */
export function allowedKeys(role: Role, routes: readonly Route[]): string[] {
  const order: readonly Access[] = ['public', 'viewer', 'operator', 'admin'];
  return declaredKeys(routes).filter((k) => {
    const need = accessOf(k);
    return need !== undefined && order.indexOf(need) <= order.indexOf(role);
  });
}
