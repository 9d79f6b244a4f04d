import type { AdminDeps, Route } from './route.js';
import { commandRoutes } from './routes/commands.js';
import { eventRoutes } from './routes/events.js';
import { importRoutes } from './routes/import.js';
import { mapRoutes } from './routes/map.js';
import { operationRoutes } from './routes/operations.js';
import { operatorRoutes } from './routes/operators.js';
import { providerRoutes } from './routes/providers.js';
import { tripRoutes } from './routes/trips.js';

/**
 * Every admin route, in matching order. Building them opens and reads nothing (each file only
 * defines its handlers over `deps`), so the route table can be derived from them anywhere.
 */
export function adminRoutes(deps: AdminDeps): Route[] {
  return [...operationRoutes(deps), ...providerRoutes(deps), ...commandRoutes(deps), ...tripRoutes(deps), ...eventRoutes(deps), ...importRoutes(deps), ...mapRoutes(deps), ...operatorRoutes(deps)];
}

/** Matches decoded path segments against a route pattern; the parameters, or null. */
export function matchRoute(pattern: readonly string[], segments: readonly string[]): Record<string, string> | null {
  if (pattern.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i] ?? '';
    const s = segments[i] ?? '';
    if (p.startsWith(':')) {
      if (s === '') return null;
      params[p.slice(1)] = s;
    } else if (p !== s) {
      return null;
    }
  }
  return params;
}
