/**
 * The admin routes as the server declares them, and the route table derived from them
 * (gateway/admin/roles.ts), for the tests that go through every route. Building the routes opens
 * and reads nothing, so the deps here are never called.
 */
import { pino } from 'pino';
import type { Access, Route } from '../../gateway/admin/route.js';
import { routeTable } from '../../gateway/admin/roles.js';
import { adminRoutes } from '../../gateway/admin/routes.js';
import type { StreamHub } from '../../gateway/admin/stream-hub.js';
import type { Backends } from '../../shared/backends/types.js';
import { loadConfig } from '../../shared/config/index.js';

export function declaredAdminRoutes(): Route[] {
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

/** `METHOD /pattern` → the role it needs, in the routes' order. */
export const ROUTE_TABLE: ReadonlyMap<string, Access> = routeTable(declaredAdminRoutes());
